"""Decision-cache lookup cost: SQLite (the default) against Redis, in microseconds per operation.

Two shapes of use: a long-lived process (``guard serve``, the library) that keeps
its handle open, and a ``guard hook`` process that opens the cache, looks up once
and exits. Redis runs as a real ``redis-server`` on a free loopback port.

    python bench/bench_cache_backends.py [--ops 2000]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_cache_setup import free_port, wait_for

from guard.cache.redis import RedisCache
from guard.cache.sqlite import SQLiteCache

VERDICT = {
    "decision": "deny",
    "reason": "deletes files outside the project",
    "confidence": 0.93,
    "tier": "quick",
    "model": "openai/gpt-4.1-mini",
}


def per_op_us(op: Callable[[int], Any], n: int) -> tuple[float, float]:
    """Median and p99 of ``n`` timed calls, in microseconds."""
    samples = []
    for i in range(n):
        started = time.perf_counter()
        op(i)
        samples.append((time.perf_counter() - started) * 1e6)
    samples.sort()
    return statistics.median(samples), samples[int(n * 0.99) - 1]


def start_redis(workdir: Path) -> tuple[subprocess.Popen[bytes], str] | None:
    binary = shutil.which("redis-server")
    if binary is None:
        return None
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL,
    )
    wait_for(port, proc, timeout=20)
    return proc, f"redis://127.0.0.1:{port}/0"


def measure(name: str, make: Callable[[], Any], n: int) -> list[tuple[str, str, float, float]]:
    cache = make()
    cache.clear()
    for i in range(100):
        cache.set(f"hit{i}", VERDICT)
    rows = [
        (name, "get, hit (handle kept open)", *per_op_us(lambda i: cache.get(f"hit{i % 100}"), n)),
        (name, "get, miss (handle kept open)", *per_op_us(lambda i: cache.get(f"miss{i}"), n)),
        (name, "set (handle kept open)", *per_op_us(lambda i: cache.set(f"new{i}", VERDICT), n)),
    ]

    def open_get_close(i: int) -> None:
        fresh = make()
        fresh.get(f"hit{i % 100}")
        fresh.close()

    rows.append((name, "open + get hit + close (one guard hook)", *per_op_us(open_get_close, max(50, n // 10))))
    cache.clear()
    cache.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=2000)
    args = parser.parse_args()
    rows: list[tuple[str, str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        rows += measure("sqlite", lambda: SQLiteCache(Path(tmp) / "cache.db", ttl=3600), args.ops)
        redis = start_redis(Path(tmp))
        if redis is None:
            print("redis-server not installed: Redis figures skipped", file=sys.stderr)
        else:
            proc, url = redis
            try:
                rows += measure("redis", lambda: RedisCache(url, ttl=3600), args.ops)
            finally:
                proc.terminate()
                proc.wait()
    print(f"Decision-cache operations ({args.ops} per row, one process, loopback Redis)\n")
    print("| backend | operation | median µs | p99 µs |\n|---|---|---|---|")
    for backend, op, median, p99 in rows:
        print(f"| {backend} | {op} | {median:.0f} | {p99:.0f} |")
    by = {(b, o): m for b, o, m, _ in rows}
    for op in ("get, hit (handle kept open)", "open + get hit + close (one guard hook)"):
        if ("redis", op) in by:
            print(f"\nredis / sqlite, {op}: {by[('redis', op)] / by[('sqlite', op)]:.2f}×")


if __name__ == "__main__":
    main()
