"""A cache-hit ``guard hook`` as a fresh process, against ``python3 -c pass`` and against a miss.

One smart hook judged by the loopback stub model (guard.testing.openai_stub, a
fixed-latency scripted server, NOT a real model) answering in ``--stub-latency``
seconds. Rows, all in the same run with the same interpreter (``sys.executable``,
not a pyenv shim), each as wall time and as CPU time (user + system, which the machine's load barely moves):

- ``python3 -c pass``: the floor every hook process pays;
- the standard modules a hit needs (:data:`HIT_STDLIB`) imported and nothing else: the floor of any hook written in Python;
- cache hit (audit log on, the default) and cache hit with the audit log off;
- an event only the built-in self-protection rule matches (a ``Read``): the no-match path;
- cache hit through a running ``guard serve`` (``guard hook --server``);
- cache hit through ``guard serve`` from a shell and curl, no interpreter (:data:`CURL_CLIENT`, the bench's script over TCP);
- cache hit through the installed curl client (``guard install claude --client curl``: sh + curl over guard serve's Unix socket);
- cache miss: a fresh process that loads the model client (guard's own wire for this openai/ stub model) and waits for the stub.

Goal: cache hit ≤ 2× ``python3 -c pass`` (guard's byte code compiled first, as installed).

    python bench/bench_cache_hook.py [--runs 30] [--miss-runs 5] [--stub-latency 0.3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_cache_setup import config, event_json, free_port, wait_for
from bench_hook import compile_guard, guard_command, timed, trust_folder

from guard.testing.openai_stub import Reply, StubServer

#: The standard library a cache hit cannot do without: the event and verdict (json), the cache and audit log (sqlite3),
#: their seals (hmac, hashlib), paths (pathlib, fnmatch), the shell analyser (re), annotations guard evaluates (typing).
HIT_STDLIB = "import fnmatch, hashlib, hmac, json, pathlib, re, sqlite3, typing"
TOKEN = "bench-serve-token"
#: The shell + curl command hook measured against ``guard serve`` (it blocks whenever the service does not answer).
CURL_CLIENT = Path(__file__).with_name("curl_hook_client.sh")


def cpu_timed(cmd: list[str], stdin: str, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) milliseconds of one run of ``cmd``: CPU time barely moves with the machine's load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(cmd, stdin, cwd, env, 1)[0]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000


def row(name: str, samples: list[tuple[float, float]], base: tuple[float, float], note: str = "") -> str:
    walls = sorted(wall for wall, _ in samples)
    med, cpu = statistics.median(walls), statistics.median(c for _, c in samples)
    p95 = walls[max(0, int(len(walls) * 0.95) - 1)]
    return f"| {name} | {len(samples)} | {med:.1f} | {p95:.1f} | {med / base[0]:.2f}× | {cpu:.1f} | {cpu / base[1]:.2f}× | {note} |"


def start_service(workdir: Path, env: dict[str, str], unix_socket: str | None) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    listen = ["--unix-socket", unix_socket] if unix_socket else []
    proc = subprocess.Popen(
        [*guard_command(), "serve", "--port", str(port), "--log-level", "warning", *listen],
        cwd=workdir,
        env=env,
        stderr=subprocess.DEVNULL,
    )
    wait_for(port, proc)
    if unix_socket:
        while not Path(unix_socket).is_socket():  # moved into place just after the port opens
            time.sleep(0.01)
    return proc, f"http://127.0.0.1:{port}"


def installed_curl_client(workdir: Path, env: dict[str, str]) -> tuple[str, list[str]] | None:
    """``guard install claude --client curl`` in ``workdir``: the shared PreToolUse launcher it wrote and this user's
    ``GUARD_HOOK`` it runs (the curl client: ``sh SCRIPT SOCKET CREDENTIAL MAX_TIME guard hook …``); None when it cannot install here."""
    done = subprocess.run(
        [*guard_command(), "install", "claude", "--client", "curl"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        print(f"no installed curl client row: {done.stderr.strip()}", file=sys.stderr)
        return None
    hooks = json.loads((workdir / ".claude" / "settings.json").read_text())["hooks"]
    personal = json.loads((workdir / ".claude" / "settings.local.json").read_text())["env"]["GUARD_HOOK"]
    return hooks["PreToolUse"][0]["hooks"][0]["command"], shlex.split(personal)


def as_claude_runs(workdir: Path, launcher: str, personal: list[str]) -> list[str]:
    """The launcher as Claude Code runs it: in a shell, with the local settings' env and the project's folder."""
    return ["env", f"GUARD_HOOK={shlex.join(personal)}", f"CLAUDE_PROJECT_DIR={workdir}", "sh", "-c", launcher]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--miss-runs", type=int, default=5)
    parser.add_argument("--stub-latency", type=float, default=0.3)
    args = parser.parse_args()
    compile_guard()
    hook = [*guard_command(), "hook"]
    hit_event = event_json("rm -rf ~/victim")
    no_match_event = json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "bench",
            "tool_name": "Read",
            "tool_input": {"file_path": "README.md"},
        }
    )
    with (
        tempfile.TemporaryDirectory() as tmp,
        StubServer(latency=args.stub_latency, default=Reply.verdict("deny", "deletes the home directory")) as stub,
    ):
        root = Path(tmp)
        cache_db = root / "cache.db"
        audit_on, audit_off = root / "audit-on", root / "audit-off"
        for workdir, audit in ((audit_on, True), (audit_off, False)):
            workdir.mkdir()
            (workdir / "guard.yaml").write_text(config(f"sqlite:///{cache_db}", audit=audit))
        env = {
            **os.environ,
            "GUARD_API_BASE": stub.url,
            "XDG_CACHE_HOME": str(root / "xdg"),
            "XDG_STATE_HOME": str(root / "state"),
            "GUARD_SERVE_TOKEN": TOKEN,
            "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(root / "config"),
        }  # --client curl installs there
        for workdir in (audit_on, audit_off):
            trust_folder(workdir, env)
        timed(hook, hit_event, audit_on, env, 1)  # the one miss that fills the cache and compiles the config
        timed(hook, hit_event, audit_off, env, 1)
        calls_before = stub.calls
        installed = installed_curl_client(audit_off, env) if shutil.which("curl") else None
        service, url = start_service(audit_off, env, installed[1][2] if installed else None)
        cases = {
            "base": ([sys.executable, "-c", "pass"], "", audit_on),
            "stdlib": ([sys.executable, "-c", HIT_STDLIB], "", audit_on),
            "hit": (hook, hit_event, audit_on),
            "hit_no_audit": (hook, hit_event, audit_off),
            "no_match": (hook, no_match_event, audit_on),
            "via_service": ([*hook, "--server", url], hit_event, audit_off),
        }
        if shutil.which("curl"):
            cases["via_curl"] = (["sh", str(CURL_CLIENT), url], hit_event, audit_off)
            check = subprocess.run(
                cases["via_curl"][0], input=hit_event, capture_output=True, text=True, env=env, check=False
            )
            assert '"permissionDecision": "deny"' in check.stdout, check
        if installed:
            launcher, personal = installed
            cases["installed_curl"] = (as_claude_runs(audit_off, launcher, personal), hit_event, audit_off)
            # its fallback swapped for `false`: the deny must come over the socket, not from the guard hook it falls back to
            check = subprocess.run(
                as_claude_runs(audit_off, launcher, [*personal[:5], "false"]),
                input=hit_event,
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
            assert check.returncode == 0 and '"permissionDecision": "deny"' in check.stdout, check
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        try:
            for _ in range(args.runs):  # interleaved, so a burst of load elsewhere hits every case alike
                for name, (cmd, stdin, cwd) in cases.items():
                    samples[name].append(cpu_timed(cmd, stdin, cwd, env))
        finally:
            service.terminate()
            service.wait()
        assert stub.calls == calls_before, "a 'cache hit' run called the model"
        misses = [cpu_timed(hook, event_json(f"rm -rf ~/victim-{i}"), audit_on, env) for i in range(args.miss_runs)]
        assert stub.calls == calls_before + args.miss_runs, "a miss did not reach the stub"
    base = samples["base"]
    floor = (statistics.median(wall for wall, _ in base), statistics.median(cpu for _, cpu in base))
    print(
        f"guard hook as a fresh process ({sys.executable}); model = loopback stub answering in {args.stub_latency * 1000:.0f} ms;"
        f" load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs\n"
    )
    print(
        "| case | runs | median ms | p95 ms | × python3 -c pass | CPU ms | CPU × | note |\n|---|---|---|---|---|---|---|---|"
    )
    print(row("python3 -c pass", base, floor, "baseline"))
    print(
        row(
            "python3 -c 'import json, sqlite3, hmac …'",
            samples["stdlib"],
            floor,
            "the standard library a hit needs, nothing of guard",
        )
    )
    print(row("cache hit", samples["hit"], floor, "audit log on (default)"))
    print(row("cache hit, audit log off", samples["hit_no_audit"], floor, ""))
    print(row("no hook matches (a Read: only the self-protection rule)", samples["no_match"], floor, "audit log on"))
    print(row("cache hit via guard serve (--server)", samples["via_service"], floor, "the service's own cache"))
    if "via_curl" in samples:
        print(
            row(
                "cache hit via guard serve, sh + curl",
                samples["via_curl"],
                floor,
                "no interpreter; bench script over TCP",
            )
        )
    if "installed_curl" in samples:
        print(
            row(
                "cache hit, installed curl client (--client curl)",
                samples["installed_curl"],
                floor,
                "sh + curl over guard serve's Unix socket, no interpreter",
            )
        )
    print(row("cache miss", misses, floor, f"stub model, {args.stub_latency * 1000:.0f} ms; loads the model client"))
    print(
        f"\ncache miss / cache hit: {statistics.median(m for m, _ in misses) / statistics.median(h for h, _ in samples['hit']):.1f}×;"
        " goal for a hit and a no-match: ≤ 2× python3 -c pass"
    )


if __name__ == "__main__":
    main()
