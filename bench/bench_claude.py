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

    python bench/bench_claude.py [--calls 5] [--repeats 3] [--latency 0.3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.agent_cli import CLAUDE  # noqa: E402
from guard.testing.agent_script import Reply, final_text, tool_use  # noqa: E402
from guard.testing.anthropic_stub import AnthropicStub  # noqa: E402
from guard.testing.openai_stub import Reply as JudgeReply  # noqa: E402
from guard.testing.openai_stub import StubServer  # noqa: E402

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
PROMPT_HOOK = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "prompt", "prompt": f"{RULE} Is this tool call acceptable? $ARGUMENTS", "timeout": 120}]}]}}


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
    subprocess.run([str(guard), "install", "claude", "--events", "PreToolUse", "--timeout", "180"], cwd=project,
                   check=True, capture_output=True)


def install_prompt_hook(project: Path) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(PROMPT_HOOK))


def judge_env(judge: StubServer) -> dict[str, str]:
    return {"GUARD_API_BASE": judge.url, "GUARD_MODEL_QUICK": "openai/stub-judge",
            "GUARD_MODEL_THOROUGH": "openai/stub-judge", "OPENAI_API_KEY": "sk-test"}


@contextmanager
def guard_server(project: Path, judge: StubServer) -> Iterator[str]:
    """A `guard serve` for the project, started here and stopped on exit; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    guard = Path(sysconfig.get_path("scripts")) / "guard"
    server = subprocess.Popen([str(guard), "serve", "--port", str(port)], cwd=project,
                              env={**os.environ, **judge_env(judge)}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=1):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("guard serve did not come up") from None
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def timed_run(binary: Path, project: Path, home: Path, commands: list[str], env: dict[str, str],
              side_latency: float) -> list[float]:
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
                per_call += timed_run(binary, project, home, config.commands(run, calls), env,
                                      config.prompt_hook_latency)
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
    args = parser.parse_args(argv)
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
        Config("guard hook → guard serve, cache hit", install_guard, same_commands, warm_up=True,
               judge_must_stay_idle=True, via_server=True),
        Config(f"Claude prompt hook ({ms} model)", install_prompt_hook, same_commands, prompt_hook_latency=args.latency),
    ]
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.strip()
    print(f"Claude Code {version}; {args.calls} Bash calls x {args.repeats} runs per configuration; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("All models are stubs on 127.0.0.1: these figures measure hook overhead, not model speed.\n")
    print(f"| {'configuration':<40} | median per tool call |     p90 | added vs no hook |")
    print(f"|{'-' * 42}|----------------------|---------|------------------|")
    baseline: float | None = None
    for config in configs:
        per_call = measure(config, binary, args.calls, args.repeats, args.latency)
        median = statistics.median(per_call)
        baseline = median if baseline is None else baseline
        print(f"| {config.name:<40} | {median * 1000:>17.0f} ms | {pct(per_call, 0.9) * 1000:>4.0f} ms "
              f"| {(median - baseline) * 1000:>13.0f} ms |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
