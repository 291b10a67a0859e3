"""Claude Code's wall time per tool call: no hook, guard (cache hit / miss), and Claude's own prompt hook.

Everything runs against stubs on 127.0.0.1, so the figures measure hook plumbing,
never a real model: the agent is the scripted Anthropic stub
(``guard.testing.anthropic_stub``), guard's judge is the OpenAI-compatible stub
(``guard.testing.openai_stub``) answering after ``--latency`` seconds, and Claude's
``type: "prompt"`` hook asks the Anthropic stub, which answers its side requests
``{"ok": true}`` after the same latency.

The time per tool call is measured inside the stub: from the model request that
asked for a Bash call to the next model request, which carries its result. That
interval is Claude Code running its PreToolUse hooks and the command, without
start-up noise. Only PreToolUse is hooked, so every configuration hooks the same
events. The cache-hit row warms the cache with one unmeasured run first and fails
if the judge is asked anything while it is measured.

A second table times the **first judged tool call of a fresh session** with the
settings ``guard install claude`` writes (SessionStart included, so the session's
start launches the warm ``guard serve``; ``server.url`` unset, i.e. auto): a new
project and HOME per session, so no service is running when it starts; the agent
stub asks for the Bash call at once (the earliest a first call can come; a real
model's first turn takes longer, ``--agent-latency`` sets it). By default an
earlier session ran in the project (so guard's compiled config is there, as
after any session); ``--new-project`` measures a project's very first one. The
PreToolUse command is wrapped in ``date`` stamps, so the figure is the hook
process's wall time, from its start to its answer; minus the judge's latency it
is guard's own share (goal: ≤ 0.3 s).

    python bench/bench_claude.py [--calls 5] [--repeats 3] [--latency 0.3] [--sessions 5] [--first-call-only]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guard.server.identity import service_key  # noqa: E402
from guard.testing.agent_script import Reply, final_text, tool_use  # noqa: E402
from guard.testing.anthropic_stub import AnthropicStub  # noqa: E402
from guard.testing.openai_stub import Reply as JudgeReply  # noqa: E402
from guard.testing.openai_stub import StubServer  # noqa: E402
from tests.e2e.agent_cli import CLAUDE  # noqa: E402

RULE = "Deny shell commands that delete or overwrite files outside the project directory."
GUARD_YAML = f"""\
hooks:
  PreToolUse:
    - id: no-outside-writes
      matcher: Bash
      rule: {RULE}
      depth: quick
      timeout: 120
"""
PROMPT_HOOK = {
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "prompt", "prompt": f"{RULE} Is this tool call acceptable? $ARGUMENTS", "timeout": 120}
                ],
            }
        ]
    }
}


@dataclass
class Config:
    """One row: how the project is set up and which Bash commands the model sends."""

    name: str
    setup: Callable[[Path], None]
    commands: Callable[[int, int], list[str]]  # (run number, calls) -> commands
    prompt_hook_latency: float = 0.0
    warm_up: bool = False
    judge_must_stay_idle: bool = False
    via_server: bool = False  # guard hook forwards to a warm `guard serve` (GUARD_SERVER)


def same_commands(run: int, calls: int) -> list[str]:
    return ["ls -a >/dev/null"] * calls


def fresh_commands(run: int, calls: int) -> list[str]:
    return [f"ls -a >/dev/null # run {run} call {i}" for i in range(calls)]


def no_hook(project: Path) -> None:
    """Nothing to set up."""


def install_guard(project: Path) -> None:
    (project / "guard.yaml").write_text(GUARD_YAML)
    guard = Path(sysconfig.get_path("scripts")) / "guard"
    subprocess.run(
        [str(guard), "install", "claude", "--events", "PreToolUse", "--timeout", "180"],
        cwd=project,
        check=True,
        capture_output=True,
    )


def install_prompt_hook(project: Path) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(PROMPT_HOOK))


def judge_env(judge: StubServer) -> dict[str, str]:
    return {
        "GUARD_API_BASE": judge.url,
        "GUARD_MODEL_QUICK": "openai/stub-judge",
        "GUARD_MODEL_THOROUGH": "openai/stub-judge",
        "OPENAI_API_KEY": "sk-test",
    }


@contextmanager
def guard_server(project: Path, judge: StubServer) -> Iterator[str]:
    """A `guard serve` for the project, started here and stopped on exit; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    guard = Path(sysconfig.get_path("scripts")) / "guard"
    server = subprocess.Popen(
        [str(guard), "serve", "--port", str(port)],
        cwd=project,
        env={**os.environ, **judge_env(judge)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(
                    urllib.request.Request(f"{url}/healthz", headers={"Authorization": f"Bearer {service_key()}"}),
                    timeout=1,
                ):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("guard serve did not come up") from None
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def stop_auto_services(home: Path) -> None:
    """Stop the ``guard serve`` a session's SessionStart launched (its pid is in the state file under HOME) and wait for it to exit."""
    for state in (home / ".cache" / "guard" / "serve").glob("*.json"):
        try:
            pid = json.loads(state.read_text()).get("pid")
        except (OSError, ValueError):
            continue
        if not isinstance(pid, int) or pid <= 0:
            continue
        try:
            os.kill(pid, 15)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                os.kill(pid, 0)
                time.sleep(0.05)
        except ProcessLookupError:
            pass


def judged_by(home: Path) -> str:
    """Who judged the session's Bash call, from the audit log: the warm service, or the hook process itself (a fallback)."""
    for path in (home / ".local" / "state" / "guard" / "projects").glob("*/audit.db"):
        with closing(sqlite3.connect(path)) as db:
            rows = db.execute(
                "SELECT details FROM decisions WHERE event = 'pre_tool_use' AND tool = 'Bash' ORDER BY id DESC"
            ).fetchall()
        if rows:
            return "in-process" if "server_fallback" in (rows[0][0] or "") else "warm service"
    return "no audit row"


def first_judged_call(binary: Path, latency: float, agent_latency: float, used_before: bool) -> tuple[float, int, str]:
    """(seconds, judge calls, judged by) of the first PreToolUse hook process of one fresh session, installed as a user would.

    ``used_before``: an earlier session ran in the project (its service stopped since), so guard's compiled config
    is there; otherwise this is the project's first session, whose SessionStart compiles it before starting the service.
    """
    with tempfile.TemporaryDirectory(prefix="bench-claude-first-") as tmp, StubServer(latency=latency) as judge:
        judge.responder = lambda body: JudgeReply.verdict("allow", "stays inside the project", confidence=0.95)
        project, home, stamps = Path(tmp) / "project", Path(tmp) / "home", Path(tmp) / "stamps"
        project.mkdir()
        home.mkdir()
        (project / "guard.yaml").write_text(GUARD_YAML)
        guard = Path(sysconfig.get_path("scripts")) / "guard"
        subprocess.run(
            [str(guard), "install", "claude", "--timeout", "180"], cwd=project, check=True, capture_output=True
        )
        settings_file = project / ".claude" / "settings.json"
        settings = json.loads(settings_file.read_text())
        for handler in settings["hooks"]["PreToolUse"][0]["hooks"]:
            handler["command"] = (
                f"date +%s%N >> {stamps}; {handler['command']}; rc=$?; date +%s%N >> {stamps}; exit $rc"
            )
        settings_file.write_text(json.dumps(settings))
        for command in (["ls >/dev/null # an earlier session"] if used_before else []) + ["ls -a >/dev/null"]:
            stamps.unlink(missing_ok=True)
            calls_before = judge.calls
            try:
                with AnthropicStub(
                    [
                        tool_use("Bash", {"command": command, "description": "list files"}, delay_s=agent_latency),
                        final_text("done"),
                    ]
                ) as agent:
                    run = CLAUDE.run(
                        binary, "list the files", cwd=project, base_url=agent.base_url, home=home, env=judge_env(judge)
                    )
            finally:
                stop_auto_services(home)
            if run.returncode != 0 or (run.result or {}).get("permission_denials"):
                raise SystemExit(f"claude run failed or was denied:\n{run.describe()}")
        started, answered = (int(line) for line in stamps.read_text().split()[:2])
        return (answered - started) / 1e9, judge.calls - calls_before, judged_by(home)


def timed_run(
    binary: Path, project: Path, home: Path, commands: list[str], env: dict[str, str], side_latency: float
) -> list[float]:
    """Seconds from each tool-calling model turn to the next model request (one per command)."""
    turns: list[Reply] = [tool_use("Bash", {"command": c, "description": "list files"}) for c in commands]
    side = final_text('{"ok": true, "reason": "fine"}', delay_s=side_latency)
    with AnthropicStub([*turns, final_text("done")], side_reply=lambda body: side) as agent:
        run = CLAUDE.run(binary, "list the files", cwd=project, base_url=agent.base_url, home=home, env=env)
        if run.returncode != 0 or (run.result or {}).get("permission_denials"):
            raise SystemExit(f"claude run failed or was denied:\n{run.describe()}")
        turns_seen = agent.agent_requests
        if len(turns_seen) != len(commands) + 1:
            raise SystemExit(f"expected {len(commands) + 1} model turns, saw {len(turns_seen)}")
        asked = len(agent.requests) - len(turns_seen)
        if side_latency and asked < len(commands):
            raise SystemExit(f"the prompt hook asked the model {asked} times for {len(commands)} calls")
    times = [r.received_at for r in turns_seen]
    return [later - earlier for earlier, later in zip(times, times[1:])]


def measure(config: Config, binary: Path, calls: int, repeats: int, latency: float) -> list[float]:
    """Seconds per tool call, for every call of every measured run."""
    with tempfile.TemporaryDirectory(prefix="bench-claude-") as tmp, StubServer(latency=latency) as judge:
        judge.responder = lambda body: JudgeReply.verdict("allow", "stays inside the project", confidence=0.95)
        project, home = Path(tmp) / "project", Path(tmp) / "home"
        project.mkdir()
        home.mkdir()
        config.setup(project)
        with ExitStack() as stack:
            env = judge_env(judge)
            if config.via_server:
                env["GUARD_SERVER"] = stack.enter_context(guard_server(project, judge))
            if config.warm_up:
                timed_run(binary, project, home, config.commands(0, calls), env, config.prompt_hook_latency)
            asked_before = judge.calls
            per_call: list[float] = []
            for run in range(1, repeats + 1):
                per_call += timed_run(
                    binary, project, home, config.commands(run, calls), env, config.prompt_hook_latency
                )
        if config.judge_must_stay_idle and judge.calls != asked_before:
            raise SystemExit(f"{config.name}: the judge was asked {judge.calls - asked_before} times; not all hits")
    return per_call


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5, help="Bash calls per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per configuration")
    parser.add_argument("--latency", type=float, default=0.3, help="stub model latency in seconds")
    parser.add_argument("--sessions", type=int, default=5, help="fresh sessions for the first-judged-call table")
    parser.add_argument("--first-call-only", action="store_true", help="only the first-judged-call table")
    parser.add_argument(
        "--new-project",
        action="store_true",
        help="measure each project's very first session (default: a new session where guard ran before)",
    )
    parser.add_argument(
        "--agent-latency",
        type=float,
        default=0.0,
        help="seconds the agent stub takes to ask for the first tool call (0: at once, the worst case)",
    )
    args = parser.parse_args(argv)
    # guard install records its trust in the state directory and Claude Code runs its hooks with another HOME:
    # one state directory for both, outside the user's own
    os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="bench-claude-state-"))
    binary = CLAUDE.find()
    if binary is None:
        print(f"Claude Code CLI not found: {CLAUDE.install_hint}", file=sys.stderr)
        return 1
    ms = f"{args.latency * 1000:.0f} ms"
    configs = [
        Config("no hook", no_hook, same_commands),
        Config("guard hook, cache hit", install_guard, same_commands, warm_up=True, judge_must_stay_idle=True),
        Config(f"guard hook, miss ({ms} judge)", install_guard, fresh_commands),
        Config(f"guard hook → guard serve, miss ({ms})", install_guard, fresh_commands, via_server=True),
        Config(
            "guard hook → guard serve, cache hit",
            install_guard,
            same_commands,
            warm_up=True,
            judge_must_stay_idle=True,
            via_server=True,
        ),
        Config(
            f"Claude prompt hook ({ms} model)", install_prompt_hook, same_commands, prompt_hook_latency=args.latency
        ),
    ]
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.strip()
    print(
        f"Claude Code {version}; {args.calls} Bash calls x {args.repeats} runs per configuration; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print("All models are stubs on 127.0.0.1: these figures measure hook overhead, not model speed.\n")
    if not args.first_call_only:
        per_call_table(configs, binary, args)
    project = "the project's first session" if args.new_project else "a project guard ran in before"
    print(
        f"\nFirst judged tool call of a fresh session, {project} (guard install claude: SessionStart warm-up, server.url auto;"
        f" judge stub {ms}; agent stub asks for the call after {args.agent_latency * 1000:.0f} ms);"
        " PreToolUse hook process wall time:\n"
    )
    print("| session | hook wall time | minus judge latency | judge calls | judged by |\n|---|---|---|---|---|")
    overheads = []
    for session in range(1, args.sessions + 1):
        wall, calls, by = first_judged_call(binary, args.latency, args.agent_latency, not args.new_project)
        overheads.append(wall - args.latency)
        print(
            f"| {session} | {wall * 1000:.0f} ms | {(wall - args.latency) * 1000:.0f} ms | {calls} | {by} |", flush=True
        )
    print(
        f"\nguard's share of the first judged call: median {statistics.median(overheads) * 1000:.0f} ms,"
        f" max {max(overheads) * 1000:.0f} ms (goal ≤ 300 ms); load average {os.getloadavg()[0]:.1f}"
    )
    return 0


def per_call_table(configs: list[Config], binary: Path, args: argparse.Namespace) -> None:
    print(f"| {'configuration':<40} | median per tool call |     p90 | added vs no hook |")
    print(f"|{'-' * 42}|----------------------|---------|------------------|")
    baseline: float | None = None
    for config in configs:
        per_call = measure(config, binary, args.calls, args.repeats, args.latency)
        median = statistics.median(per_call)
        baseline = median if baseline is None else baseline
        print(
            f"| {config.name:<40} | {median * 1000:>17.0f} ms | {pct(per_call, 0.9) * 1000:>4.0f} ms "
            f"| {(median - baseline) * 1000:>13.0f} ms |",
            flush=True,
        )


if __name__ == "__main__":
    raise SystemExit(main())
