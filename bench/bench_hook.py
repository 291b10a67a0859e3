"""`guard hook` wall time as a fresh process, as the clients run it, against Python's own start-up.

Cases: an event no hook matches (the common path), and one decided by a callable
hook (which loads the engine). Each is a ratio to `python3 -c pass` measured in
the same run with the same interpreter. Goal: no-match ≤ 2× Python start-up.
guard's byte code is compiled first (``compile_guard``), as a pip install does:
with ``PYTHONDONTWRITEBYTECODE=1`` nothing else would write it, and every run
would compile guard's sources again.

    python bench/bench_hook.py [--runs 40]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POLICY = "def no_force_push(event):\n    return 'deny' if '--force' in event.tool_input.get('command', '') else None\n"
CONFIG = "hooks:\n  PreToolUse:\n    - id: no-force-push\n      matcher: Bash\n      callable: policy:no_force_push\n"


def guard_command() -> list[str]:
    """The installed console script beside this interpreter (not a pyenv shim, which adds its own start-up)."""
    script = Path(sys.executable).parent / "guard"
    return [str(script)] if script.exists() else [sys.executable, "-m", "guard.cli.main"]


def compile_guard() -> None:
    """Write the .pyc files of the guard package this interpreter imports (pip writes them at install)."""
    import compileall

    import guard

    compileall.compile_dir(str(Path(guard.__file__).parent), quiet=1)


def trust_folder(folder: Path, env: dict[str, str]) -> dict[str, str]:
    """Trust ``folder``'s guard.yaml as the user does with ``guard trust`` (the library function behind it).

    guard hook and guard serve enforce only a trusted config. The record goes to a state
    directory beside ``folder`` (set in the returned environment), not the user's own.
    """
    env = {**env, "XDG_STATE_HOME": env.get("XDG_STATE_HOME") or str(folder / ".state")}
    code = "import sys; from guard.config.pinning import trust; trust(cwd=sys.argv[1])"
    subprocess.run([sys.executable, "-c", code, str(folder)], env=env, check=True)
    return env


def timed(cmd: list[str], stdin: str, cwd: Path, env: dict[str, str], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=cwd, env=env, check=False)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def summary(name: str, samples: list[float], base: float) -> str:
    med = statistics.median(samples)
    p95 = sorted(samples)[int(len(samples) * 0.95) - 1]
    return f"| {name} | {med:.1f} | {p95:.1f} | {med / base:.2f}× |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    compile_guard()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "policy.py").write_text(POLICY)
        (cwd / "guard.yaml").write_text(CONFIG + "audit:\n  enabled: false\n")
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(cwd), os.environ.get("PYTHONPATH")])),
            "XDG_CACHE_HOME": str(cwd / ".cache"),
        }
        env = trust_folder(cwd, env)
        cmd = [*guard_command(), "hook"]
        no_match = json.dumps(
            {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "README.md"}}
        )
        decided = json.dumps(
            {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git push --force"}}
        )
        timed(cmd, no_match, cwd, env, 2)  # compile the config snapshot, warm the page cache
        base = timed([sys.executable, "-c", "pass"], "", cwd, env, args.runs)
        rows = [
            summary("python3 -c pass (baseline)", base, statistics.median(base)),
            summary("guard hook, no hook matches", timed(cmd, no_match, cwd, env, args.runs), statistics.median(base)),
            summary(
                "guard hook, decided by a callable hook",
                timed(cmd, decided, cwd, env, args.runs),
                statistics.median(base),
            ),
        ]
    print(
        f"guard hook as a fresh process ({args.runs} runs each, {sys.executable}); load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs\n"
    )
    print("| case | median ms | p95 ms | × python start-up |\n|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
