"""Session-aware rules: what recording costs the hook, and what keying on the context shown costs the cache.

1. ``guard hook`` wall time (fresh process, as Claude Code runs it) for a user prompt
   with a config that has a session-aware rule (the prompt is recorded) and one that
   has none (nothing recorded), against ``python3 -c pass``.
2. Cache hit ratio of a context-free rule, a ``context: request`` rule and a
   ``context: session`` rule over the same
   simulated workload (sessions of one prompt and a few tool calls drawn from small
   pools, through one in-process Gate with the SQLite decision cache). The judge is
   the loopback stub: these are call counts, not model quality.

    python bench/bench_session.py [--runs 30] [--sessions 60]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

from bench_hook import guard_command, summary, timed

PROMPTS = ["Please delete the build folder, it is stale.", "Run the tests and fix what fails.", "Tidy up the project."]
COMMANDS = ["ls", "git status", "pytest -q", "rm -rf build", "cat README.md", "npm test", "rm -rf dist", "git diff"]
SESSION_RULE = "Deleting files or folders is allowed only when the user explicitly asked for that deletion."
REQUEST_RULE = "Installing packages is allowed only when it serves what the user asked for."
PLAIN_RULE = "Never force-push to a shared branch."


def config(api_base: str, *, session_rule: bool) -> str:
    hooks = "hooks:\n  PreToolUse:\n    - id: plain\n      matcher: Bash\n      depth: quick\n      rule: " + PLAIN_RULE + "\n"
    if session_rule:
        hooks += "    - id: asked-deletes\n      matcher: Bash\n      depth: quick\n      context: session\n      rule: " + SESSION_RULE + "\n"
        hooks += "    - id: on-task-installs\n      matcher: Bash\n      depth: quick\n      context: request\n      rule: " + REQUEST_RULE + "\n"
    return f"models:\n  quick: stub-quick\n  api_base: {api_base}\naudit:\n  enabled: false\n" + hooks


def hook_times(runs: int) -> list[str]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        env = {**os.environ, "XDG_CACHE_HOME": str(cwd / ".cache"), "XDG_STATE_HOME": str(cwd / ".state")}
        prompt = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "bench", "prompt": PROMPTS[0]})
        cmd = [*guard_command(), "hook", "--format", "claude"]
        base = timed([sys.executable, "-c", "pass"], "", cwd, env, runs)
        rows.append(summary("python3 -c pass (baseline)", base, statistics.median(base)))
        for label, session_rule in (("user prompt, no session-aware rule (not recorded)", False), ("user prompt, a session-aware rule (recorded)", True)):
            (cwd / "guard.yaml").write_text(config("http://127.0.0.1:9/v1", session_rule=session_rule))
            timed(cmd, prompt, cwd, env, 2)  # compile the config snapshot, create the store
            rows.append(summary(label, timed(cmd, prompt, cwd, env, runs), statistics.median(base)))
    return rows


def hit_ratios(sessions: int) -> list[str]:
    from guard.runtime.gate import Gate
    from guard.testing.openai_stub import StubServer

    rng = random.Random(16)
    with tempfile.TemporaryDirectory() as tmp, StubServer() as stub:
        cwd = Path(tmp)
        (cwd / "guard.yaml").write_text(config(stub.url, session_rule=True) + f"cache:\n  url: sqlite:///{cwd / 'cache.db'}\n")
        gate = Gate(str(cwd / "guard.yaml"), env={**os.environ, "XDG_STATE_HOME": str(cwd / ".state")})
        events = 0
        for number in range(sessions):
            session = f"s{number}"
            gate.decide({"hook_event_name": "UserPromptSubmit", "session_id": session, "prompt": rng.choice(PROMPTS)})
            for _ in range(rng.randint(2, 5)):
                command = rng.choice(COMMANDS)
                gate.decide({"hook_event_name": "PreToolUse", "session_id": session, "tool_name": "Bash", "tool_input": {"command": command}})
                events += 1
        rules = {"context: event (context-free)": PLAIN_RULE, "context: request": REQUEST_RULE, "context: session": SESSION_RULE}
        calls = {label: sum(f"Rule: {rule}" in body["messages"][-1]["content"] for body in stub.requests) for label, rule in rules.items()}
    return [f"| {label} | {events} | {count} | {1 - count / events:.0%} |" for label, count in calls.items()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--sessions", type=int, default=60)
    args = parser.parse_args()
    print(f"guard hook as a fresh process ({args.runs} runs each, {sys.executable})\n")
    print("| case | median ms | p95 ms | × python start-up |\n|---|---|---|---|")
    print("\n".join(hook_times(args.runs)))
    print(f"\nDecision cache over {args.sessions} simulated sessions (stub judge; {len(PROMPTS)} prompts, {len(COMMANDS)} commands)\n")
    print("| rule | tool calls | judge calls | hit ratio |\n|---|---|---|---|")
    print("\n".join(hit_ratios(args.sessions)))


if __name__ == "__main__":
    main()
