"""The eval scheduler's slots: one wake-up per freed slot, first come first served, no slot lost to a cancelled waiter."""

from __future__ import annotations

import asyncio
from typing import Any

from guard.eval.limiter import AdaptiveLimiter


def scheduled_callbacks(coro_factory: Any) -> int:
    """How many callbacks the event loop ran for ``coro_factory()``: every task wake-up is one."""
    loop = asyncio.new_event_loop()
    count = 0
    original = loop.call_soon

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal count
        count += 1
        return original(*args, **kwargs)

    loop.call_soon = counting  # type: ignore[method-assign]
    try:
        loop.run_until_complete(coro_factory())
    finally:
        loop.close()
    return count


async def crowd(waiters: int, ceiling: int) -> None:
    limiter = AdaptiveLimiter(ceiling)

    async def one() -> None:
        async with limiter.slot():
            await asyncio.sleep(0)

    await asyncio.gather(*(one() for _ in range(waiters)))


def test_a_freed_slot_wakes_one_waiter_not_all() -> None:
    small, large = scheduled_callbacks(lambda: crowd(200, 4)), scheduled_callbacks(lambda: crowd(800, 4))
    # linear in the queue: 4x the waiters costs about 4x the wake-ups (waking all of them on every release: ~16x)
    assert large < 5 * small, (small, large)


async def test_slots_go_first_come_first_served_and_never_exceed_the_limit() -> None:
    limiter = AdaptiveLimiter(2)
    order: list[int] = []
    peak = 0

    async def one(i: int) -> None:
        nonlocal peak
        async with limiter.slot():
            peak = max(peak, limiter.active)
            order.append(i)
            await asyncio.sleep(0.001)

    await asyncio.gather(*(one(i) for i in range(20)))
    assert order == list(range(20)) and peak == 2 and limiter.active == 0


async def test_a_cancelled_waiter_does_not_lose_a_slot() -> None:
    limiter = AdaptiveLimiter(1)
    release = asyncio.Event()

    async def holder() -> None:
        async with limiter.slot():
            await release.wait()

    held = asyncio.ensure_future(holder())
    await asyncio.sleep(0)
    doomed = asyncio.ensure_future(holder())
    later = asyncio.ensure_future(holder())
    await asyncio.sleep(0)
    release.set()  # the slot is handed to `doomed` ...
    doomed.cancel()  # ... which is cancelled before it runs: the slot must pass on to `later`
    await asyncio.wait_for(asyncio.gather(held, later), timeout=2)
    assert doomed.cancelled() and limiter.active == 0


async def test_a_grown_limit_admits_waiters_at_once() -> None:
    limiter = AdaptiveLimiter(2)
    await limiter.rate_limited()
    gate = asyncio.Event()
    running = 0

    async def one() -> None:
        nonlocal running
        async with limiter.slot():
            running += 1
            await gate.wait()

    tasks = [asyncio.ensure_future(one()) for _ in range(2)]
    await asyncio.sleep(0.01)
    assert running == 1
    await limiter.succeeded()  # limit 1 → 2 after one clean call
    await asyncio.sleep(0.01)
    assert running == 2
    gate.set()
    await asyncio.gather(*tasks)
