"""What the trusted config costs a ``guard hook`` call: this tree against a baseline tree (before trust), in one run.

The hot path now reads the sealed trust record, hashes every trusted file and loads
the pinned snapshot, and self-protection covers more paths. Both trees run as fresh
``python -m guard.cli.main hook`` processes on the same interpreter, interleaved so a
burst of load elsewhere hits both alike, each with its own cache and state folders
and its byte code compiled first; wall time and CPU time (user + system, which load
from other work inflates far less) per process: an event no hook matches (a Read), and a smart
hook's cache hit (a Bash call: self-protection's shell analysis runs too). The model
is the loopback stub (guard.testing.openai_stub), asked once per tree to fill the cache.

    python bench/bench_trust.py --baseline /path/to/a/checkout/of/main [--runs 30]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_cache_setup import config, event_json
from bench_hook import timed, trust_folder
from bench_protect import cpu_ms

from guard.testing.openai_stub import Reply, StubServer

HERE = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--baseline", required=True, help="a guard source tree to compare with (e.g. a checkout of main)"
    )
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    trees = {"baseline": Path(args.baseline).resolve(), "this tree": HERE}
    for tree in trees.values():
        compileall.compile_dir(str(tree / "guard"), quiet=1)
    read = json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "bench",
            "tool_name": "Read",
            "tool_input": {"file_path": "README.md"},
        }
    )
    bash = event_json("rm -rf ~/victim")
    cmd = [sys.executable, "-m", "guard.cli.main", "hook"]
    with (
        tempfile.TemporaryDirectory() as tmp,
        StubServer(default=Reply.verdict("deny", "deletes the home directory")) as stub,
    ):
        cases: dict[str, tuple[list[str], str, Path, dict[str, str]]] = {
            "python3 -c pass": ([sys.executable, "-c", "pass"], "", Path(tmp), dict(os.environ))
        }
        for name, tree in trees.items():
            folder = Path(tmp) / name.replace(" ", "-")
            folder.mkdir()
            (folder / "guard.yaml").write_text(config(f"sqlite:///{folder / 'cache.db'}"))
            env = {
                **os.environ,
                "PYTHONPATH": str(tree),
                "GUARD_API_BASE": stub.url,
                "XDG_CACHE_HOME": str(folder / "cache"),
                "XDG_STATE_HOME": str(folder / "state"),
            }
            if tree == HERE:
                env = trust_folder(folder, env)
            timed(cmd, bash, folder, env, 1)  # fills the cache, compiles the config snapshot
            answer = subprocess.run(
                cmd, input=bash, capture_output=True, text=True, cwd=folder, env=env, check=False
            ).stdout
            assert '"permissionDecision": "deny"' in answer, f"{name}: not judged from the cache: {answer[:300]}"
            cases[f"{name}: no hook matches"] = (cmd, read, folder, env)
            cases[f"{name}: smart hook, cache hit"] = (cmd, bash, folder, env)
        calls = stub.calls
        samples: dict[str, list[float]] = {name: [] for name in cases}
        cpu: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, (argv, stdin, cwd, env) in cases.items():
                samples[name] += timed(argv, stdin, cwd, env, 1)
                cpu[name].append(cpu_ms(argv, stdin, cwd, env))
        assert stub.calls == calls, "a cache hit called the model"
    floor, cpu_floor = statistics.median(samples["python3 -c pass"]), statistics.median(cpu["python3 -c pass"])
    print(
        f"guard hook, fresh processes ({args.runs} runs each, interleaved, {sys.executable}); model = loopback stub;"
        f" load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs\n"
    )
    print("| case | median wall ms | × python3 -c pass | median CPU ms | × python3 -c pass |\n|---|---|---|---|---|")
    for name, values in samples.items():
        wall, used = statistics.median(values), statistics.median(cpu[name])
        print(f"| {name} | {wall:.1f} | {wall / floor:.2f}× | {used:.1f} | {used / cpu_floor:.2f}× |")
    for case in ("no hook matches", "smart hook, cache hit"):
        before, after = (statistics.median(samples[f"{tree}: {case}"]) for tree in trees)
        cpu_before, cpu_after = (statistics.median(cpu[f"{tree}: {case}"]) for tree in trees)
        print(
            f"\n{case}: this tree / baseline = {after / before:.2f}× wall ({after - before:+.1f} ms), "
            f"{cpu_after / cpu_before:.2f}× CPU ({cpu_after - cpu_before:+.1f} ms)",
            end="",
        )
    print()


if __name__ == "__main__":
    main()
