"""Per-call overhead of guard's in-process SDK integrations on a cache hit, over calling the tool directly.

One smart rule, its verdict already in the decision cache (the first call asks
the OpenAI-compatible stub; every timed call is a hit, the audit log on as a
user has it). Each case times what the SDK calls per tool call: the Claude
Agent SDK's hook callback, LangChain's ``awrap_tool_call`` around the tool, and
the OpenAI Agents SDK's tool input guardrail, and ``guard.Gate.decide`` and ``adecide`` themselves (goal ≤ 0.5 ms); the baseline calls the same tool
function directly. Goal: at most 1 ms.

    python bench/bench_integrations.py [--runs 500]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from guard.testing.openai_stub import Reply, StubServer

CONFIG = """models: {quick: openai/stub-quick}
hooks:
  PreToolUse:
    - id: no-delete
      matcher: shell
      depth: quick
      rule: Deny shell commands that delete files.
"""
ARGS = {"command": "git status --porcelain"}


def shell(command: str) -> str:
    return f"ran: {command}"


async def timed(case: Callable[[], Awaitable[Any]], runs: int) -> float:
    """Median seconds per call, after a warm-up call (the cache miss)."""
    await case()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await case()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def gate_hit_ms(config: str, runs: int) -> tuple[float, float]:
    """Median ms of ``guard.Gate.decide`` (outside any event loop, as a sync SDK calls it) and of ``adecide`` (on a loop) on a cache hit, one gate kept across calls."""
    import guard

    with guard.Gate(config) as gate:  # closing it writes the rows still queued for the audit writer
        timed_ms = _timed_hits(gate, runs)
    with sqlite3.connect(str(gate.settings.audit_path)) as audit:
        [(rows,)] = audit.execute("SELECT count(*) FROM decisions")
    assert rows == 2 * runs + 1, f"{rows} audit rows for {2 * runs + 1} decisions"  # every hit timed was audited
    return timed_ms


def _timed_hits(gate: Any, runs: int) -> tuple[float, float]:
    event = {
        "hook_event_name": "PreToolUse",
        "session_id": "bench",
        "cwd": ".",
        "tool_name": "shell",
        "tool_input": ARGS,
    }
    gate.decide(dict(event))  # the miss
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        _, decision = gate.decide(dict(event))
        samples.append(time.perf_counter() - start)
    assert decision.hooks[0].cached, decision.to_dict()

    async def on_a_loop() -> float:
        timed_ = []
        for _ in range(runs):
            start = time.perf_counter()
            _, hit = await gate.adecide(dict(event))
            timed_.append(time.perf_counter() - start)
        assert hit.hooks[0].cached, hit.to_dict()
        return statistics.median(timed_) * 1e3

    return statistics.median(samples) * 1e3, asyncio.run(on_a_loop())


def claude_agent_sdk_case(config: str) -> Callable[[], Awaitable[Any]]:
    from guard.integrations.claude_agent_sdk import guard_hooks

    [callback] = guard_hooks(config)["PreToolUse"][0].hooks
    event: Any = {
        "hook_event_name": "PreToolUse",
        "session_id": "bench",
        "cwd": ".",
        "tool_name": "shell",
        "tool_input": ARGS,
    }

    async def call() -> Any:
        await callback(cast(Any, dict(event)), "toolu_1", {"signal": None})
        return shell(**ARGS)

    return call


def langchain_case(config: str) -> Callable[[], Awaitable[Any]]:
    from langchain.agents.middleware.types import ToolCallRequest

    from guard.integrations.langchain import GuardMiddleware

    middleware = GuardMiddleware(config)
    request = ToolCallRequest(
        tool_call={"name": "shell", "args": ARGS, "id": "call_1"}, tool=None, state={}, runtime=None
    )  # type: ignore[arg-type]  # the middleware reads neither

    async def handler(req: ToolCallRequest) -> Any:
        return shell(**req.tool_call["args"])

    return lambda: middleware.awrap_tool_call(request, handler)


def openai_agents_case(config: str) -> Callable[[], Awaitable[Any]]:
    import json

    from agents import Agent, ToolInputGuardrailData
    from agents.tool_context import ToolContext

    from guard.integrations.openai_agents import guard_tool_guardrail

    guardrail = guard_tool_guardrail(config)
    data = ToolInputGuardrailData(
        context=ToolContext(context=None, tool_name="shell", tool_call_id="call_1", tool_arguments=json.dumps(ARGS)),
        agent=Agent(name="bench"),
    )

    async def call() -> Any:
        await guardrail.run(data)
        return shell(**ARGS)

    return call


async def sdk_cases(config: str, runs: int) -> None:
    async def direct() -> Any:
        return shell(**ARGS)

    base = await timed(direct, runs)
    print(f"direct tool call: {base * 1e6:.1f} µs (median of {runs})")
    for name, make in (
        ("claude-agent-sdk hook callback", claude_agent_sdk_case),
        ("langchain GuardMiddleware", langchain_case),
        ("openai-agents tool guardrail", openai_agents_case),
    ):
        guarded = await timed(make(config), runs)
        print(f"{name}: {guarded * 1e3:.3f} ms per call, overhead {(guarded - base) * 1e3:.3f} ms")


def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder, StubServer() as stub:
        stub.default = Reply.verdict("allow", "read-only", confidence=0.97)
        os.environ.update(GUARD_API_BASE=stub.url, XDG_CACHE_HOME=folder, XDG_DATA_HOME=folder, XDG_STATE_HOME=folder)
        config = Path(folder) / "guard.yaml"
        config.write_text(CONFIG)
        sync_ms, async_ms = gate_hit_ms(str(config), runs)
        print(f"guard.Gate.decide, cache hit, audit log on: {sync_ms:.3f} ms per call (goal ≤ 0.5 ms)")
        print(
            f"guard.Gate.adecide, cache hit, audit log on: {async_ms:.3f} ms per call ({async_ms / sync_ms:.2f}× decide: the same fast path)"
        )
        print(f"load: {os.getloadavg()[0]:.2f} (1-minute average)")
        asyncio.run(sdk_cases(str(config), runs))
        print(f"model calls: {stub.calls} (warm-up calls only: every timed call was a cache hit)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    main(parser.parse_args().runs)
