"""What the built-in self-protection rule costs a ``guard hook`` process: ``protect: true`` against ``protect: false``.

Each case is a fresh ``guard hook`` process, as the clients run it, measured in
CPU time (user + system of the child), which a busy machine disturbs far less
than wall time. Both configs have one command hook on a tool the events never
use, so with ``protect: false`` every event is a no-match; with ``protect: true``
the rule reads every PreToolUse call (every string it names, a Bash command
through the shell reader). Byte-code caching is on (``PYTHONPYCACHEPREFIX`` in a
temporary folder), as in an installed guard. ``--against TREE`` runs the same
events with ``protect: true`` on another source tree (a checkout of main) and
prints this tree's cost as a ratio of that one's, measured in the same run.

    python bench/bench_protect.py [--runs 30] [--against /path/to/main/checkout]
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
    "Bash pipeline": (
        "Bash",
        {"command": "grep -rn 'def main' src/ | sort | uniq -c | head -20 && git diff --stat -- guard.yaml"},
    ),
    "Bash 300-line heredoc": (
        "Bash",
        {
            "command": "cat > notes.py <<'EOF'\n"
            + "\n".join(f"value_{i} = compute({i}, 'x')" for i in range(300))
            + "\nEOF"
        },
    ),
    "MCP nested input": (
        "mcp__fs__write_many",
        {"files": [{"path": f"src/m{i}.py", "mode": "w"} for i in range(20)], "params": {"root": "."}},
    ),
}


def cpu_ms(cmd: list[str], stdin: str, cwd: Path, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=cwd, env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


#: Times the rule itself in one process (what it adds to a hook, without process start): µs per call for each event,
#: with the analyser's memo cleared before each call, as in a fresh ``guard hook`` process.
RULE_TIMER = """
import json, sys, time
import guard.command_analysis as analysis
from guard.config.loading import load_config
from guard.config.assembly import protection_for
from guard.hooks.protect import judge
project, events, runs = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
spec = protection_for(load_config(project + "/guard.yaml"))
out = {}
for name, (tool, tool_input) in events.items():
    event = {"hook_event_name": "PreToolUse", "cwd": project, "tool_name": tool, "tool_input": tool_input}
    judge(spec, event)
    samples = []
    caches = [f for f in (getattr(analysis, "analyse", None), getattr(analysis, "touched_paths", None)) if hasattr(f, "cache_clear")]
    for _ in range(runs):
        for cache in caches:  # each hook process judges its call once: no warm memo
            cache.cache_clear()
        started = time.perf_counter()
        judge(spec, event)
        samples.append(time.perf_counter() - started)
    out[name] = sorted(samples)[len(samples) // 2] * 1e6
print(json.dumps(out))
"""


def rule_us(project: Path, env: dict[str, str], runs: int) -> dict[str, float]:
    """The rule's median µs per call for each event, in one process of the tree ``env`` selects."""
    proc = subprocess.run(
        [sys.executable, "-c", RULE_TIMER, str(project), json.dumps(EVENTS), str(runs * 10)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, float] = json.loads(proc.stdout)
    return figures


def _median_cpu(cmd: list[str], event: str, project: Path, env: dict[str, str], runs: int) -> float:
    cpu_ms(cmd, event, project, env)  # compiles the snapshot and the byte code
    return statistics.median(cpu_ms(cmd, event, project, env) for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument(
        "--against", type=Path, help="another guard source tree (e.g. main) to compare protect: true with"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env |= {
            "HOME": str(root),
            "XDG_CACHE_HOME": str(root / "cache"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_STATE_HOME": str(root / "state"),
            "PYTHONPYCACHEPREFIX": str(root / "pyc"),
        }
        projects = {}
        for protect in (True, False):
            project = root / f"protect-{str(protect).lower()}"
            (project / "src").mkdir(parents=True)
            (project / "guard.yaml").write_text(f"protect: {str(protect).lower()}\n{CONFIG}")
            trust_folder(project, env)
            projects[protect] = project
        other_env = (
            {**env, "PYTHONPATH": str(args.against), "PYTHONPYCACHEPREFIX": str(root / "pyc-other")}
            if args.against
            else None
        )
        cmd = [sys.executable, "-m", "guard.cli.main", "hook"]
        rows = []
        base = [cpu_ms([sys.executable, "-c", "pass"], "", root, env) for _ in range(args.runs)]
        rows.append(f"| python3 -c pass | {statistics.median(base):.1f} | | |" + (" | |" if other_env else ""))
        for name, (tool, tool_input) in EVENTS.items():
            figures = {}
            for protect, project in projects.items():
                event = json.dumps(
                    {"hook_event_name": "PreToolUse", "cwd": str(project), "tool_name": tool, "tool_input": tool_input}
                )
                figures[protect] = _median_cpu(cmd, event, project, env, args.runs)
            row = f"| {name} | {figures[False]:.1f} | {figures[True]:.1f} | {figures[True] - figures[False]:+.1f} |"
            if other_env is not None:
                event = json.dumps(
                    {
                        "hook_event_name": "PreToolUse",
                        "cwd": str(projects[True]),
                        "tool_name": tool,
                        "tool_input": tool_input,
                    }
                )
                other = _median_cpu(cmd, event, projects[True], other_env, args.runs)
                row += f" {other:.1f} | {figures[True] / other:.2f}x |"
            rows.append(row)
        rule_rows = []
        if other_env is not None:
            ours, theirs = rule_us(projects[True], env, args.runs), rule_us(projects[True], other_env, args.runs)
            rule_rows = [
                f"| {name} | {ours[name]:.0f} | {theirs[name]:.0f} | {ours[name] / theirs[name]:.2f}x |"
                for name in EVENTS
            ]
    print(f"guard hook CPU ms per process, median of {args.runs} ({sys.executable})\n")
    header = "| event | protect: false | protect: true | added |" + (
        " other tree, protect: true | ratio |" if other_env else ""
    )
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    print("\n".join(rows))
    if rule_rows:
        print(f"\nthe rule alone, µs per call, median of {args.runs * 10} in one process\n")
        print("| event | this tree | other tree | ratio |\n|---|---|---|---|")
        print("\n".join(rule_rows))


if __name__ == "__main__":
    main()
