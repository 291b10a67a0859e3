"""Per-model concurrency that backs off on rate limits: halve on a 429, grow back one at a time.

Additive increase, multiplicative decrease (as TCP does): a provider that starts
returning 429 gets half the parallel calls at once, and the limit climbs back by
one after as many clean calls in a row as the current limit, up to the configured
ceiling.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["AdaptiveLimiter"]


class AdaptiveLimiter:
    """An asyncio semaphore whose size follows the provider's rate limits.

    A freed slot is handed to the longest waiter and wakes only that one: waking
    every waiter to re-check (a condition's notify_all) costs the event loop
    O(waiters) per call, which a large eval queue turns into most of its time.
    """

    def __init__(self, ceiling: int) -> None:
        if ceiling < 1:
            raise ValueError("concurrency must be at least 1")
        self.ceiling = ceiling
        self.limit = ceiling
        self.active = 0
        self.backoffs = 0
        self._clean_streak = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one call slot while the body runs."""
        await self._acquire()
        try:
            yield
        finally:
            self._release()

    async def _acquire(self) -> None:
        if self.active < self.limit and not self._waiters:
            self.active += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # resolved by _hand_over, which has counted the slot as ours
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # the slot arrived as we were cancelled: pass it on
            elif waiter in self._waiters:  # else _hand_over already dropped it
                self._waiters.remove(waiter)
            raise

    def _release(self) -> None:
        self.active -= 1
        self._hand_over()

    def _hand_over(self) -> None:
        """Give free slots to the longest waiters, one wake-up per slot."""
        while self._waiters and self.active < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.active += 1
                waiter.set_result(None)

    async def rate_limited(self) -> None:
        """The provider said 429: halve the limit (never below 1)."""
        self.limit = max(1, self.limit // 2)
        self._clean_streak = 0
        self.backoffs += 1

    async def succeeded(self) -> None:
        """A clean call: after ``limit`` of them in a row, allow one more in parallel."""
        self._clean_streak += 1
        if self.limit < self.ceiling and self._clean_streak >= self.limit:
            self.limit += 1
            self._clean_streak = 0
            self._hand_over()
