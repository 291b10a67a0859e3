"""What the built-in self-protection rule costs a ``guard hook`` process: ``protect: true`` against ``protect: false``.

Each case is a fresh ``guard hook`` process, as the clients run it, measured in
CPU time (user + system of the child), which a busy machine disturbs far less
than wall time. Both configs have one command hook on a tool the events never
use, so with ``protect: false`` every event is a no-match; with ``protect: true``
the rule reads every PreToolUse call (a Bash command through the shell analyser).
Byte-code caching is on (``PYTHONPYCACHEPREFIX`` in a temporary folder), as in an
installed guard.

    python bench/bench_protect.py [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_hook import trust_folder

CONFIG = "audit: {enabled: false}\nhooks:\n  PreToolUse:\n    - id: no-fetch\n      matcher: WebFetch\n      command: 'exit 2'\n"
EVENTS = {
    "Read README.md": ("Read", {"file_path": "README.md"}),
    "Write notes.txt": ("Write", {"file_path": "notes.txt", "content": "x"}),
    "Bash git status": ("Bash", {"command": "git status --porcelain"}),
    "Write guard.yaml": ("Write", {"file_path": "guard.yaml", "content": ""}),
}


def cpu_ms(cmd: list[str], stdin: str, cwd: Path, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=cwd, env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env |= {"HOME": str(root), "XDG_CACHE_HOME": str(root / "cache"), "XDG_CONFIG_HOME": str(root / "config"),
                "XDG_STATE_HOME": str(root / "state"), "PYTHONPYCACHEPREFIX": str(root / "pyc")}
        projects = {}
        for protect in (True, False):
            project = root / f"protect-{str(protect).lower()}"
            project.mkdir()
            (project / "guard.yaml").write_text(f"protect: {str(protect).lower()}\n{CONFIG}")
            trust_folder(project, env)
            projects[protect] = project
        cmd = [sys.executable, "-m", "guard.cli.main", "hook"]
        rows = []
        base = [cpu_ms([sys.executable, "-c", "pass"], "", root, env) for _ in range(args.runs)]
        rows.append(f"| python3 -c pass | {statistics.median(base):.1f} | | |")
        for name, (tool, tool_input) in EVENTS.items():
            figures = {}
            for protect, project in projects.items():
                event = json.dumps({"hook_event_name": "PreToolUse", "cwd": str(project), "tool_name": tool, "tool_input": tool_input})
                cpu_ms(cmd, event, project, env)  # compiles the snapshot and the byte code
                figures[protect] = statistics.median(cpu_ms(cmd, event, project, env) for _ in range(args.runs))
            rows.append(f"| {name} | {figures[False]:.1f} | {figures[True]:.1f} | {figures[True] - figures[False]:+.1f} |")
    print(f"guard hook CPU ms per process, median of {args.runs} ({sys.executable})\n")
    print("| event | protect: false | protect: true | added |\n|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
