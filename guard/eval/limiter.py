"""Per-model concurrency that backs off on rate limits: halve on a 429, grow back one at a time.

Additive increase, multiplicative decrease (as TCP does): a provider that starts
returning 429 gets half the parallel calls at once, and the limit climbs back by
one after as many clean calls in a row as the current limit, up to the configured
ceiling.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["AdaptiveLimiter"]


class AdaptiveLimiter:
    """An asyncio semaphore whose size follows the provider's rate limits."""

    def __init__(self, ceiling: int) -> None:
        if ceiling < 1:
            raise ValueError("concurrency must be at least 1")
        self.ceiling = ceiling
        self.limit = ceiling
        self.active = 0
        self.backoffs = 0
        self._clean_streak = 0
        self._changed = asyncio.Condition()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one call slot while the body runs."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.active < self.limit)
            self.active += 1
        try:
            yield
        finally:
            async with self._changed:
                self.active -= 1
                self._changed.notify_all()

    async def rate_limited(self) -> None:
        """The provider said 429: halve the limit (never below 1)."""
        async with self._changed:
            self.limit = max(1, self.limit // 2)
            self._clean_streak = 0
            self.backoffs += 1

    async def succeeded(self) -> None:
        """A clean call: after ``limit`` of them in a row, allow one more in parallel."""
        async with self._changed:
            self._clean_streak += 1
            if self.limit < self.ceiling and self._clean_streak >= self.limit:
                self.limit += 1
                self._clean_streak = 0
                self._changed.notify_all()
