"""What the smart-hook path adds on top of the model's own latency, per tier, and how big each prompt is.

The model is the loopback stub (``guard.testing.openai_stub``) answering after a
fixed sleep, so every figure here measures guard + client overhead, never a real
model's speed or quality (``openai/`` models go over guard's own wire unless GUARD_TRANSPORT=litellm). The floor is a direct HTTP POST of the same request to
the same stub; "added" is the smart hook's median minus the floor times the calls
it made. Prompt tokens are counted with LiteLLM's tokenizer for gpt-4.1-mini.

    python bench/bench_smart.py [--latency 0.2] [--runs 30]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guard.core.events.model import parse_event  # noqa: E402
from guard.core.hook import HookContext  # noqa: E402
from guard.core.settings import Settings  # noqa: E402
from guard.core.spec import HookSpec, SmartSettings  # noqa: E402
from guard.hooks.smart import SmartHook  # noqa: E402
from guard.judge.prompts import TIERS, render  # noqa: E402
from guard.testing.openai_stub import Reply, StubServer  # noqa: E402

RULE = "Deny shell commands that delete or overwrite files outside the project directory."
MODELS = {"quick": "openai/stub-quick", "thorough": "openai/stub-thorough"}


def event(i: int) -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "cwd": "/home/u/proj",
        "tool_name": "Bash",
        "tool_input": {"command": f"rm -rf /home/u/proj/build-{i} && ls", "description": "clean the build folder"},
    }


def answer(body: dict[str, Any]) -> Reply:
    """Quick is unsure when the bench asks for escalation (a marker in the rule), else confident."""
    unsure = body["model"] == "stub-quick" and "[escalate]" in body["messages"][1]["content"]
    return Reply.verdict(
        "deny",
        "deletes files",
        confidence=0.5 if unsure else 0.95,
        reasoning=None if body["model"] == "stub-quick" else "rm -rf inside the project",
    )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def floor_ms(stub: StubServer, runs: int) -> list[float]:
    import httpx

    body = {
        "model": "stub-quick",
        "messages": render("quick", event(0), rule=RULE).messages,
        "temperature": 0,
        "max_tokens": 160,
    }
    async with httpx.AsyncClient() as client:
        await client.post(stub.url + "/chat/completions", json=body)
        out = []
        for _ in range(runs):
            started = time.perf_counter()
            (await client.post(stub.url + "/chat/completions", json=body)).raise_for_status()
            out.append((time.perf_counter() - started) * 1000)
    return out


async def hook_ms(
    stub: StubServer, depth: str, runs: int, rule: str = RULE, cache_url: str = "off", offset: int = 0
) -> tuple[list[float], int]:
    settings = Settings(models=MODELS, api_base=stub.url, cache_url=cache_url, audit_path=None)
    hook = SmartHook(
        HookSpec(id="b", kind="smart", event="pre_tool_use", timeout=60, options=SmartSettings(rule=rule, depth=depth)),
        HookContext(settings),
    )
    await hook.run(parse_event(event(offset - 1)))  # warm: client construction for this endpoint
    calls_before, out = stub.calls, []
    for i in range(runs):
        started = time.perf_counter()
        await hook.run(parse_event(event(offset + i if cache_url == "off" else offset)))
        out.append((time.perf_counter() - started) * 1000)
    return out, stub.calls - calls_before


def fresh_process_misses(stub: StubServer, latency: float, runs: int) -> None:
    """``guard check`` on a new command (a miss) in a new process, per transport: wall and CPU over the model's latency.

    This is what the first judged call of a session, or every ``guard check``, waits for.
    """
    print(
        f"cache miss in a fresh process (`guard check`, {runs} runs per transport; the stub answers after {latency * 1000:.0f} ms)"
    )
    print(f"{'GUARD_TRANSPORT':<18}{'wall median ms':>16}{'over model ms':>15}{'CPU median ms':>15}")
    with tempfile.TemporaryDirectory() as tmp:
        for transport in ("auto", "litellm"):
            env = {
                **os.environ,
                "GUARD_TRANSPORT": transport,
                "GUARD_MODEL_QUICK": MODELS["quick"],
                "GUARD_MODEL_THOROUGH": MODELS["thorough"],
                "GUARD_API_BASE": stub.url,
                "XDG_CACHE_HOME": tmp,
            }
            walls, cpus = [], []
            for i in range(runs):
                command = [
                    "check",
                    "--rule",
                    RULE,
                    "--tool",
                    "Bash",
                    "--depth",
                    "quick",
                    "--input",
                    f'{{"command": "rm -rf /srv/{transport}-{i}"}}',
                ]
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "guard.cli.main", *command],
                    cwd=tmp,
                    env=env,
                    capture_output=True,
                    check=False,
                )
                walls.append(time.perf_counter() - started)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            wall = statistics.median(walls)
            print(
                f"{transport:<18}{wall * 1000:>16.0f}{(wall - latency) * 1000:>15.0f}{statistics.median(cpus) * 1000:>15.0f}"
            )
    print()


async def main(latency: float, runs: int) -> None:
    print(
        f"smart-hook overhead over a STUB model answering after {latency * 1000:.0f} ms; {runs} runs each; load avg {os.getloadavg()[0]:.2f}"
    )
    print("figures are from the loopback stub (guard.testing.openai_stub), not a real model\n")
    with StubServer(latency=latency) as stub:
        stub.responder = answer
        await asyncio.to_thread(fresh_process_misses, stub, latency, max(3, runs // 6))
        cold = time.perf_counter()
        await hook_ms(stub, "quick", 0, offset=-100)
        print(
            f"cold start in this process (client import + first call): {(time.perf_counter() - cold) * 1000:.0f} ms, paid once per process\n"
        )
        floor = await floor_ms(stub, runs)
        f50 = statistics.median(floor)
        print(f"{'path':<26}{'calls':>6}{'median ms':>11}{'p95 ms':>9}{'added ms':>10}{'ratio':>7}")
        print(f"{'floor (direct HTTP POST)':<26}{1:>6}{f50:>11.1f}{pct(floor, 0.95):>9.1f}{0:>10.1f}{1:>7.2f}")
        cases = [
            ("quick", "quick", RULE),
            ("thorough", "thorough", RULE),
            ("auto (quick confident)", "auto", RULE),
            ("auto (escalated)", "auto", RULE + " [escalate]"),
        ]
        for n, (name, depth, rule) in enumerate(cases):
            values, calls = await hook_ms(stub, depth, runs, rule, offset=1000 * (n + 1))
            per_event = calls / runs
            med = statistics.median(values)
            print(
                f"{name:<26}{per_event:>6.0f}{med:>11.1f}{pct(values, 0.95):>9.1f}{med - f50 * per_event:>10.1f}{med / (f50 * per_event):>7.2f}"
            )
        with tempfile.TemporaryDirectory() as tmp:
            hits, calls = await hook_ms(stub, "quick", runs, cache_url=f"sqlite:///{tmp}/cache.db", offset=5000)
            print(
                f"{'cache hit (SQLite, quick)':<26}{calls / runs:>6.0f}{statistics.median(hits):>11.2f}{pct(hits, 0.95):>9.2f}{'':>10}{'':>7}"
            )

    import litellm  # its tokenizer only; the hooks above went over guard's wire

    print("\nprompt size for a typical Bash event (tokens, gpt-4.1-mini tokenizer; the stub's own usage is chars/4)")
    print(f"{'tier':<10}{'system':>8}{'user':>7}{'total':>7}{'max_tokens':>12}{'data budget':>13}")
    for tier in ("quick", "thorough"):
        rendered = render(tier, event(1), rule=RULE)
        system, user = (litellm.token_counter(model="gpt-4.1-mini", messages=[m]) for m in rendered.messages)
        total = litellm.token_counter(model="gpt-4.1-mini", messages=rendered.messages)
        print(
            f"{tier:<10}{system:>8}{user:>7}{total:>7}{TIERS[tier].max_tokens:>12}{TIERS[tier].data_budget_tokens:>13}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the stub waits before answering")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    asyncio.run(main(args.latency, args.runs))
