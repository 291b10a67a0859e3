"""What matching by canonical action costs against matching by tool name, in one run.

``guard hook`` matches one event per process, so the cold figure (every cache
cleared before each match: what a hook process pays) is the one that counts; the
warm one is ``guard serve`` and the SDKs. A registry of 20 PreToolUse hooks, each
with a name matcher (``Bash|Write|Edit``) or an action matcher (``@shell|@write|@edit|@mcp``),
is asked for the hooks of a shell call, a write, a read and an MCP call, per client.

    python bench/bench_matching.py [--rounds 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time

from guard.core import actions, matching
from guard.core.spec import HookSpec
from guard.runtime.registry import Registry

CALLS = [
    ("claude", "Bash"),
    ("copilot", "bash"),
    ("gemini", "write_file"),
    ("claude", "Read"),
    (None, "mcp__github__delete_repo"),
]


def registry(matcher: str) -> Registry:
    return Registry(
        HookSpec(id=f"h{i}", kind="command", event="pre_tool_use", matcher=matcher, command="true") for i in range(20)
    )


def per_match_us(reg: Registry, rounds: int, *, cold: bool) -> float:
    samples = []
    for _ in range(rounds):
        if cold:
            matching.compile_filter.cache_clear()
            actions.actions_of.cache_clear()
            actions._compiled.cache_clear()
        start = time.perf_counter()
        for client, tool in CALLS:
            reg.matching("pre_tool_use", tool, client)
        samples.append((time.perf_counter() - start) / len(CALLS) * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2000)
    rounds = parser.parse_args().rounds
    names, acts = registry("Bash|Write|Edit"), registry("@shell|@write|@edit|@mcp")
    for label, cold in (("cold (a guard hook process)", True), ("warm (guard serve, SDKs)", False)):
        by_name = per_match_us(names, rounds, cold=cold)
        by_action = per_match_us(acts, rounds, cold=cold)
        print(
            f"{label}: 20 hooks, one event: by tool name {by_name:.1f} µs, by action {by_action:.1f} µs ({by_action / by_name:.2f}×)"
        )


if __name__ == "__main__":
    main()
