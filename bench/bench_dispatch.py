"""Dispatch overhead per event of a command hook and a callable hook.

Command hooks are compared with spawning ``/bin/sh -c true`` directly; callable
hooks with calling the same function directly, so the ratio is what the engine
(event parsing, matching, timeout, merge) adds.

What a command hook adds on top of the unavoidable process spawn: the static
analysis (cached per command), building the payload JSON and the environment,
feeding stdin, reading stdout/stderr and parsing the reply. The baseline spawns
the same shell with the same pipes in the same run, so the ratio does not depend
on the machine.

    python bench/bench_dispatch.py [--runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

from guard.core.events.model import Event, parse_event
from guard.core.hook import HookContext
from guard.core.settings import Settings
from guard.core.spec import HookSpec
from guard.hooks.command import SHELL, CommandHook

EVENT = {
    "hook_event_name": "PreToolUse",
    "session_id": "bench",
    "cwd": ".",
    "tool_name": "Bash",
    "tool_input": {"command": "git status --porcelain", "description": "show changes"},
}

Case = Callable[[], Awaitable[object]]


async def spawn_shell_true() -> None:
    """The baseline: the process spawn every command hook pays, with the same pipes."""
    proc = await asyncio.create_subprocess_exec(
        SHELL,
        "-c",
        "true",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    await proc.communicate(b"")


def command_case(command: str, event: Event) -> Case:
    hook = CommandHook(
        HookSpec(id="bench", kind="command", event="pre_tool_use", command=command),
        HookContext(Settings(audit_path=None)),
    )
    return lambda: hook.run(event)


async def timed(case: Case, runs: int) -> list[float]:
    for _ in range(min(10, runs)):  # warm-up: imports, analyser cache, page cache
        await case()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await case()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


async def command_rows(runs: int) -> list[tuple[str, list[float]]]:
    """(label, samples in ms) for the baseline and the command-hook cases, interleaved per round."""
    event = parse_event(EVENT)
    cases: list[tuple[str, Case]] = [
        ("spawn /bin/sh -c true (baseline)", spawn_shell_true),
        ("command hook: true", command_case("true", event)),
        ("command hook: cat >/dev/null", command_case("cat >/dev/null", event)),
    ]
    results: dict[str, list[float]] = {label: [] for label, _ in cases}
    rounds = 5  # interleave so drift (other load on the machine) hits every case alike
    for _ in range(rounds):
        for label, case in cases:
            results[label] += await timed(case, max(1, runs // rounds))
    return list(results.items())


async def callable_rows(runs: int) -> list[tuple[str, list[float]]]:
    """(label, samples in ms): a bare function call, then the same function through the engine."""
    from guard.runtime.engine import Engine
    from guard.runtime.registry import Registry

    def verdict(event: object) -> str:
        return "allow"

    async def averdict(event: object) -> str:
        return "allow"

    def through_engine(func: Callable[..., object]) -> Case:
        spec = HookSpec(id="bench", kind="callable", event="pre_tool_use", func=func)
        engine = Engine(Settings(audit_path=None), Registry([spec]))
        return lambda: engine.decide(EVENT)

    async def direct() -> object:
        return await averdict(parse_event(EVENT))

    cases: list[tuple[str, Case]] = [
        ("parse event + call function (baseline)", direct),
        ("engine: async callable hook", through_engine(averdict)),
        ("engine: sync callable hook (thread)", through_engine(verdict)),
    ]
    return [(label, await timed(case, runs)) for label, case in cases]


def print_table(rows: list[tuple[str, list[float]]]) -> None:
    base = statistics.median(rows[0][1])
    print(f"{'case':40} {'median ms':>10} {'p95 ms':>9} {'ratio':>7} {'overhead ms':>12}")
    for label, samples in rows:
        median = statistics.median(samples)
        print(f"{label:40} {median:10.2f} {p95(samples):9.2f} {median / base:7.2f} {median - base:12.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="timed runs per case (default 200)")
    args = parser.parse_args(argv)
    print(f"# command hook dispatch, {args.runs} runs per case, Python {sys.version.split()[0]}")
    print_table(asyncio.run(command_rows(args.runs)))
    print(f"\n# callable hook dispatch through the engine, {args.runs * 5} runs per case")
    print_table(asyncio.run(callable_rows(args.runs * 5)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
