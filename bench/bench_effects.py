"""What the ``effect`` block costs: the cache key and the judge's view of a write, against a shell call's.

In one process, same run: the smart hook's whole decision-cache key (``smart_cache_key``, what a cache-hit
``guard hook`` pays) and the judge's view (``judge_view``, with the diff, what a judgement pays) for

- a Bash call (no effect block: the baseline),
- a Write that replaces a 64 KiB project file with one line changed (the largest file whose diff is shown),
- a Write of a new file (no current file to read).

    python bench/bench_effects.py [--runs 200]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from guard.core.settings import Settings
from guard.core.spec import HookSpec, SmartSettings
from guard.judge.keys import smart_cache_key
from guard.judge.prompts import judge_view
from guard.judge.view import MAX_FILE_BYTES, _diff


def timed(runs: int, work: Callable[[], Any], fresh: Callable[[], None] = lambda: None) -> float:
    """Median milliseconds of ``work`` (``fresh`` runs before each sample, untimed)."""
    samples = []
    for _ in range(runs):
        fresh()
        started = time.perf_counter()
        work()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        old = "".join(f"value_{i} = {i * 7919 % 10007}\n" for i in range(5000))[:MAX_FILE_BYTES]
        old = old[: old.rfind("\n") + 1]
        (project / "settings.py").write_text(old)
        base = {"hook_event_name": "PreToolUse", "cwd": str(project)}
        events = {
            "Bash": {**base, "tool_name": "Bash", "tool_input": {"command": "rm -rf build/"}},
            "Write over 64 KiB, 1 line changed": {
                **base,
                "tool_name": "Write",
                "tool_input": {"file_path": "settings.py", "content": old.replace("value_42 =", "value_42_renamed =")},
            },
            "Write, new file": {
                **base,
                "tool_name": "Write",
                "tool_input": {"file_path": "new.py", "content": "x = 1\n"},
            },
        }
        spec = HookSpec(
            id="bench",
            kind="smart",
            event="pre_tool_use",
            options=SmartSettings(rule="Deny destroying the user's work."),
        )
        settings = Settings()
        print("| event | cache key (ms) | key × Bash's | judge view (ms) | view × Bash's |\n|---|---|---|---|---|")
        floors: tuple[float, float] | None = None
        for name, event in events.items():
            key = timed(args.runs, lambda event=event: smart_cache_key(spec, settings, event))  # type: ignore[misc]
            view = timed(args.runs, lambda event=event: judge_view(event), fresh=_diff.cache_clear)  # type: ignore[misc]  # a judgement diffs once
            floors = floors or (key, view)
            print(f"| {name} | {key:.3f} | {key / floors[0]:.1f}× | {view:.3f} | {view / floors[1]:.1f}× |")


if __name__ == "__main__":
    main()
