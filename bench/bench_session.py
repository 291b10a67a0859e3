"""Session-aware rules: what reading the transcript costs the hook, and what keying on the context shown costs the cache.

1. ``guard hook`` wall time (fresh process, as Claude Code runs it) for a Bash call
   answered from the decision cache, with a config whose only rule is context-free and
   one that also has session-aware rules (the user's messages and earlier calls are read
   from Claude Code's transcript, of ``--transcript-kb`` KB), against ``python3 -c pass``.
2. Cache hit ratio of a context-free rule, a ``context: request`` rule and a
   ``context: session`` rule over the same
   simulated workload (sessions of one prompt and a few tool calls drawn from small
   pools, written to Claude Code-shaped transcripts, through one in-process Gate with
   the SQLite decision cache). The judge is the loopback stub: these are call counts,
   not model quality.

    python bench/bench_session.py [--runs 30] [--sessions 60] [--transcript-kb 500]
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

from bench_hook import guard_command, summary, timed, trust_folder

PROMPTS = ["Please delete the build folder, it is stale.", "Run the tests and fix what fails.", "Tidy up the project."]
COMMANDS = ["ls", "git status", "pytest -q", "rm -rf build", "cat README.md", "npm test", "rm -rf dist", "git diff"]
SESSION_RULE = "Deleting files or folders is allowed only when the user explicitly asked for that deletion."
REQUEST_RULE = "Installing packages is allowed only when it serves what the user asked for."
PLAIN_RULE = "Never force-push to a shared branch."


def config(api_base: str, *, session_rule: bool) -> str:
    hooks = (
        "hooks:\n  PreToolUse:\n    - id: plain\n      matcher: Bash\n      depth: quick\n      rule: "
        + PLAIN_RULE
        + "\n"
    )
    if session_rule:
        hooks += (
            "    - id: asked-deletes\n      matcher: Bash\n      depth: quick\n      context: session\n      rule: "
            + SESSION_RULE
            + "\n"
        )
        hooks += (
            "    - id: on-task-installs\n      matcher: Bash\n      depth: quick\n      context: request\n      rule: "
            + REQUEST_RULE
            + "\n"
        )
    return f"models:\n  quick: stub-quick\n  api_base: {api_base}\naudit:\n  enabled: false\n" + hooks


class Transcript:
    """A Claude Code transcript under ``root`` (``CLAUDE_CONFIG_DIR``): the user's prompts and the model's tool calls, as the client writes them."""

    def __init__(self, root: Path, session: str) -> None:
        self.path = root / "projects" / "-bench" / f"{session}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.session, self.calls = session, 0

    def write(self, entry: dict[str, object]) -> None:
        with self.path.open("a") as out:
            out.write(
                json.dumps({**entry, "sessionId": self.session, "isSidechain": False, "userType": "external"}) + "\n"
            )

    def said(self, text: str) -> None:
        self.write({"type": "user", "message": {"role": "user", "content": text}})

    def bash(self, command: str) -> dict[str, object]:
        """The PreToolUse event Claude Code sends, once the model's tool call is in the transcript."""
        self.calls += 1
        call_id = f"toolu_{self.session}_{self.calls}"
        self.write(
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}],
                },
            }
        )
        return {
            "hook_event_name": "PreToolUse",
            "session_id": self.session,
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": call_id,
            "transcript_path": str(self.path),
        }


def hook_times(runs: int, transcript_kb: int) -> list[str]:
    from guard.testing.openai_stub import Reply, StubServer

    rows = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        StubServer(default=Reply.verdict("allow", "fine", confidence=0.95)) as stub,
    ):
        root = Path(tmp)
        claude = root / "claude"
        env = {
            **os.environ,
            "XDG_CACHE_HOME": str(root / ".cache"),
            "XDG_STATE_HOME": str(root / ".state"),
            "CLAUDE_CONFIG_DIR": str(claude),
        }
        transcript = Transcript(claude, "bench")
        transcript.said(PROMPTS[0])
        while (
            transcript.path.stat().st_size < transcript_kb * 1024
        ):  # a session well under way: long tool results between the calls
            transcript.write(
                {
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x" * 4000}],
                    },
                }
            )
            transcript.bash("ls")
        event = json.dumps(transcript.bash("git status"))
        cmd = [*guard_command(), "hook", "--format", "claude"]
        base = timed([sys.executable, "-c", "pass"], "", root, env, runs)
        rows.append(summary("python3 -c pass (baseline)", base, statistics.median(base)))
        for label, session_rule in (
            ("Bash call, cache hit, no session-aware rule", False),
            (f"Bash call, cache hit, session-aware rules read a {transcript_kb} KB transcript", True),
        ):
            project = root / f"session-{session_rule}"
            project.mkdir()
            (project / "guard.yaml").write_text(config(stub.url, session_rule=session_rule))
            trust_folder(project, env)
            timed(cmd, event, project, env, 2)  # compile the config snapshot, fill the cache
            rows.append(summary(label, timed(cmd, event, project, env, runs), statistics.median(base)))
    return rows


def hit_ratios(sessions: int) -> list[str]:
    from guard.runtime.deciders import in_process
    from guard.runtime.gate import ConfigFile, Gate
    from guard.testing.openai_stub import StubServer

    rng = random.Random(16)
    with tempfile.TemporaryDirectory() as tmp, StubServer() as stub:
        cwd = Path(tmp)
        (cwd / "guard.yaml").write_text(
            config(stub.url, session_rule=True) + f"cache:\n  url: sqlite:///{cwd / 'cache.db'}\n"
        )
        gate = Gate(
            ConfigFile(str(cwd / "guard.yaml")),
            deciders=in_process(),
            env={**os.environ, "XDG_STATE_HOME": str(cwd / ".state"), "CLAUDE_CONFIG_DIR": str(cwd / "claude")},
        )
        events = 0
        for number in range(sessions):
            transcript = Transcript(cwd / "claude", f"s{number}")
            transcript.said(rng.choice(PROMPTS))
            for _ in range(rng.randint(2, 5)):
                gate.decide(transcript.bash(rng.choice(COMMANDS)))
                events += 1
        rules = {
            "context: event (context-free)": PLAIN_RULE,
            "context: request": REQUEST_RULE,
            "context: session": SESSION_RULE,
        }
        calls = {
            label: sum(f"Rule: {rule}" in body["messages"][-1]["content"] for body in stub.requests)
            for label, rule in rules.items()
        }
    return [f"| {label} | {events} | {count} | {1 - count / events:.0%} |" for label, count in calls.items()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--transcript-kb", type=int, default=500)
    args = parser.parse_args()
    print(
        f"guard hook as a fresh process ({args.runs} runs each, {sys.executable}); load average {os.getloadavg()[0]:.2f}\n"
    )
    print("| case | median ms | p95 ms | × python start-up |\n|---|---|---|---|")
    print("\n".join(hook_times(args.runs, args.transcript_kb)))
    print(
        f"\nDecision cache over {args.sessions} simulated sessions (stub judge; {len(PROMPTS)} prompts, {len(COMMANDS)} commands)\n"
    )
    print("| rule | tool calls | judge calls | hit ratio |\n|---|---|---|---|")
    print("\n".join(hit_ratios(args.sessions)))


if __name__ == "__main__":
    main()
