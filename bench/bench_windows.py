"""What judging long inputs whole costs: model calls, tokens and latency per event, short vs long.

An event whose JSON exceeds a tier's data budget (quick ~4,000 characters,
thorough ~24,000) is judged in overlapping windows, one call each, concurrently.
The model is the loopback stub (``guard.testing.openai_stub``) answering a sure
allow after a fixed sleep, so calls and tokens are exact for guard's prompts
(tokens are the stub's chars/4 estimate, as billed by no provider) and latency
shows what concurrency hides; none of it says anything about a real model.

    python bench/bench_windows.py [--latency 0.2] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guard.core.events.model import parse_event  # noqa: E402
from guard.core.hook import HookContext  # noqa: E402
from guard.core.settings import Settings  # noqa: E402
from guard.core.spec import HookSpec, SmartSettings  # noqa: E402
from guard.hooks.smart import SmartHook  # noqa: E402
from guard.testing.openai_stub import Reply, StubServer  # noqa: E402

RULE = "Deny commands and writes that delete files or read secrets."
MODELS = {"quick": "openai/stub-quick", "thorough": "openai/stub-thorough"}


def lines(n: int, i: int) -> str:
    return "".join(f"line {k}: event {i} harmless text about the build\n" for k in range(n))


def events() -> dict[str, Any]:
    """Event makers (run number → payload), so no two runs share a cache entry or a window."""
    base = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/home/u/proj"}
    return {
        "Bash, short": lambda i: base | {"tool_name": "Bash", "tool_input": {"command": f"ls -la build-{i}"}},
        "Bash, 10 KB": lambda i: base | {"tool_name": "Bash", "tool_input": {"command": lines(210, i)}},
        "Write, 10 KB": lambda i: (
            base | {"tool_name": "Write", "tool_input": {"file_path": "/home/u/proj/a.md", "content": lines(210, i)}}
        ),
        "Write, 25 KB": lambda i: (
            base | {"tool_name": "Write", "tool_input": {"file_path": "/home/u/proj/a.md", "content": lines(520, i)}}
        ),
        "Write, 100 KB": lambda i: (
            base | {"tool_name": "Write", "tool_input": {"file_path": "/home/u/proj/a.md", "content": lines(2080, i)}}
        ),
        "MCP, 150 fields": lambda i: (
            base
            | {
                "tool_name": "mcp__ops__run",
                "tool_input": {f"f{k:03d}": f"value {k} of {i} " + "pad " * 15 for k in range(150)},
            }
        ),
    }


async def measure(stub: StubServer, depth: str, make: Any, runs: int) -> dict[str, Any]:
    settings = Settings(models=MODELS, api_base=stub.url, cache_url="off", audit_path=None)
    hook = SmartHook(
        HookSpec(
            id="b",
            kind="smart",
            event="pre_tool_use",
            timeout=60,
            failure_mode="fail_closed",
            options=SmartSettings(rule=RULE, depth=depth),
        ),
        HookContext(settings),
    )
    calls, tokens, latency, outcome = [], [], [], ""
    for i in range(runs):
        before = stub.calls
        started = time.perf_counter()
        try:
            result = await hook.run(parse_event(make(i)))
            outcome = f"{result.decision} ({result.tier}, {result.details.get('windows', 1)} window(s))"
        except Exception as exc:  # noqa: BLE001 - the bound: reported, not raised
            outcome = f"failure mode: {str(exc)[:60]}…"
        latency.append((time.perf_counter() - started) * 1000)
        calls.append(stub.calls - before)
        tokens.append(sum(_prompt_tokens(body) for body in stub.requests[before:]))
    return {
        "calls": statistics.mean(calls),
        "tokens": statistics.mean(tokens),
        "ms": statistics.median(latency),
        "outcome": outcome,
    }


def _prompt_tokens(body: dict[str, Any]) -> int:
    return sum((len(m["content"]) + 3) // 4 for m in body["messages"])


async def main(latency: float, runs: int) -> None:
    print(
        f"judging whole inputs: STUB model answering a sure allow after {latency * 1000:.0f} ms; {runs} runs per row; load avg {os.getloadavg()[0]:.2f}"
    )
    print(
        "calls and prompt tokens are per event (tokens = chars/4 of the messages sent); ms = median latency per event\n"
    )
    with StubServer(latency=latency) as stub:
        stub.default = Reply.verdict("allow", "fine", confidence=0.95, reasoning="ok")
        await measure(stub, "quick", events()["Bash, short"], 1)  # warm: LiteLLM import, client
        print(f"{'event':<18}{'JSON chars':>11}  {'depth':<9}{'calls':>6}{'tokens':>8}{'ms':>8}  outcome")
        for name, make in events().items():
            size = len(json.dumps(make(0)))
            for depth in ("quick", "thorough", "auto"):
                row = await measure(stub, depth, make, runs)
                print(
                    f"{name:<18}{size:>11,}  {depth:<9}{row['calls']:>6.0f}{row['tokens']:>8,.0f}{row['ms']:>8.0f}  {row['outcome']}"
                )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the stub waits before answering")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    asyncio.run(main(args.latency, args.runs))
