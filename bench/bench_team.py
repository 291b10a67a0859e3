"""What guard for a team adds to a cache-hit ``guard hook``: the Postgres audit store, and the org policy, as ratios in one run.

Every case is a fresh ``guard hook`` process on the same cache hit (one smart hook, its verdict cached: the stub model,
guard.testing.openai_stub, is called once to fill the cache and never during the runs), interleaved run by run so load
elsewhere hits every case alike:

- ``audit local``: the local audit log only (the baseline for the store rows);
- ``audit.url, store up``: the row also goes to a real Postgres (a private cluster, as the tests start one) from the
  shipper the hook forks after answering; a shipper still lingering from the call before takes the row instead;
- ``audit.url, store up, a fork every call``: each run waits until no shipper runs, so every hook forks one (the worst case);
- ``audit.url, store down``: nothing listens; after the first failure the hooks find the store backing off and do not fork;
- ``org policy, verified before``: ``$GUARD_ORG_KEY``/``$GUARD_ORG_POLICY`` name a signed policy (no hooks of its own), its
  verification on record: what a hook pays to enforce it (against ``audit local``, the same project without an org key).

After the runs every row of the ``store up`` cases must be in Postgres (nothing lost, nothing on the critical path).

    python bench/bench_team.py [--runs 30]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_cache_hook import cpu_timed
from bench_cache_setup import config, event_json, loadavg
from bench_hook import compile_guard, guard_command, timed, trust_folder

from guard.testing.openai_stub import Reply, StubServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fixtures.postgres import _cluster  # noqa: E402  (the tests' own private cluster)


def _lock_free(audit: Path) -> None:
    """Wait until no shipper holds this log's lock (the next hook then forks its own)."""
    lock = audit.with_name(audit.name + ".ship.lock")
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError:
            time.sleep(0.05)
        finally:
            os.close(fd)


def _rows(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as db:
        return int(db.execute("SELECT count(*) FROM guard_decisions").fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    compile_guard()
    hook, hit = [*guard_command(), "hook"], event_json("rm -rf ~/victim")
    clusters = _cluster()
    cluster = next(clusters)
    try:
        with (
            tempfile.TemporaryDirectory() as tmp,
            StubServer(default=Reply.verdict("deny", "deletes the home directory")) as stub,
        ):
            root = Path(tmp)
            cache = f"sqlite:///{root / 'cache.db'}"
            up, up_fork = cluster.create_database(), cluster.create_database()
            env = {
                **os.environ,
                "GUARD_API_BASE": stub.url,
                "XDG_CACHE_HOME": str(root / "xdg"),
                "XDG_STATE_HOME": str(root / "state"),
                "HOME": str(root / "home"),
                "XDG_CONFIG_HOME": str(root / "config"),
            }
            projects = {
                "local": "",
                "up": f"  url: {up}\n",
                "up_fork": f"  url: {up_fork}\n",
                "down": "  url: postgresql://guard@127.0.0.1:9/none\n",
            }
            for name, store in projects.items():
                (root / name).mkdir()
                (root / name / "guard.yaml").write_text(
                    config(cache).replace("audit:\n  enabled: true\n", f"audit:\n  enabled: true\n{store}")
                )
                trust_folder(root / name, env)
            admin = root / "admin"
            subprocess.run(
                [*guard_command(), "policy", "keygen", "--out", str(admin)], env=env, check=True, capture_output=True
            )
            (admin / "policy.yaml").write_text("serial: 1\nwebhooks:\n  allow_networks: []\n")
            subprocess.run(
                [*guard_command(), "policy", "sign", str(admin / "policy.yaml"), "--key", str(admin / "org.key")],
                env=env,
                check=True,
                capture_output=True,
            )
            org_env = {**env, "GUARD_ORG_KEY": str(admin / "org.pub"), "GUARD_ORG_POLICY": str(admin / "policy.yaml")}
            for name in projects:
                timed(hook, hit, root / name, env, 1)  # the one miss fills the cache; each config's snapshot compiles
            timed(
                hook, hit, root / "local", org_env, 1
            )  # the org policy's signature is verified once, and put on record
            calls = stub.calls
            audit_fork = next((root / "state" / "guard" / "projects").glob("up_fork-*/audit.db"))
            cases = {
                "base": ([sys.executable, "-c", "pass"], root / "local", env),
                "local": (hook, root / "local", env),
                "up": (hook, root / "up", env),
                "up_fork": (hook, root / "up_fork", env),
                "down": (hook, root / "down", env),
                "org": (hook, root / "local", org_env),
            }
            samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
            for _ in range(args.runs):
                for name, (cmd, cwd, environ) in cases.items():
                    if name == "up_fork":
                        _lock_free(audit_fork)
                    samples[name].append(cpu_timed(cmd, hit if cmd is hook else "", cwd, environ))
            assert stub.calls == calls, "a cache-hit run called the model"
            deadline = time.monotonic() + 120
            while (_rows(up), _rows(up_fork)) != (args.runs + 1, args.runs + 1) and time.monotonic() < deadline:
                time.sleep(0.2)
            delivered = (_rows(up), _rows(up_fork))
    finally:
        next(clusters, None)
    floor = statistics.median(w for w, _ in samples["base"])
    local = statistics.median(w for w, _ in samples["local"])

    def line(name: str, label: str, against: float, note: str) -> str:
        walls = [w for w, _ in samples[name]]
        med, cpu = statistics.median(walls), statistics.median(c for _, c in samples[name])
        return f"| {label} | {len(walls)} | {med:.1f} | {sorted(walls)[int(len(walls) * 0.95) - 1]:.1f} | {med / floor:.2f}× | {med / against:.2f}× | {cpu:.1f} | {note} |"

    print(
        f"guard hook, a cache hit, as a fresh process ({sys.executable}), {args.runs} interleaved runs per case; "
        f"load average {loadavg()} on {os.cpu_count()} CPUs; model = loopback stub (never called during the runs)\n"
    )
    print(
        "| case | runs | median ms | p95 ms | × python3 -c pass | × audit local | hook CPU ms | note |\n|---|---|---|---|---|---|---|---|"
    )
    print(line("base", "python3 -c pass", local, "baseline"))
    print(line("local", "audit local", local, "the local log only"))
    print(line("up", "audit.url, store up", local, "a session's burst: a lingering shipper takes the row"))
    print(line("up_fork", "audit.url, store up, a fork every call", local, "worst case: every hook forks a shipper"))
    print(line("down", "audit.url, store down", local, "backing off: no fork"))
    print(line("org", "org policy, verified before", local, "same project, org key configured"))
    print(f"\nrows in Postgres after the runs: {delivered[0]} and {delivered[1]} of {args.runs + 1} each (none lost)")


if __name__ == "__main__":
    main()
