"""Single flight: concurrent identical requests share one call.

When an agent fires the same tool call at several hooks, or a fleet sends the
same event to ``guard serve`` at once, only the first request pays for the model
call; the others await its result. Errors reach every waiter and are not kept:
the next request after a failure tries again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["SingleFlight"]

T = TypeVar("T")


class SingleFlight(Generic[T]):
    """Deduplicate in-flight calls by key, within one event loop."""

    def __init__(self) -> None:
        self._calls: dict[Hashable, asyncio.Task[T]] = {}

    def in_flight(self) -> int:
        """How many distinct calls are running now (for metrics and tests)."""
        return len(self._calls)

    async def do(self, key: Hashable, factory: Callable[[], Awaitable[T]]) -> T:
        """Await ``factory()``, or the call already running under ``key``.

        The call runs as its own task, so a waiter that is cancelled (a hook
        timeout) cancels neither the call nor the other waiters.
        """
        loop = asyncio.get_running_loop()
        task = self._calls.get(key)
        if task is None or task.get_loop() is not loop:
            task = loop.create_task(_run(factory))
            self._calls[key] = task
            task.add_done_callback(lambda done: self._forget(key, done))
        return await asyncio.shield(task)

    def _forget(self, key: Hashable, task: asyncio.Task[T]) -> None:
        if self._calls.get(key) is task:
            del self._calls[key]
        if not task.cancelled():
            task.exception()  # retrieved: an error every waiter abandoned is not reported as "never retrieved"


async def _run(factory: Callable[[], Awaitable[T]]) -> T:
    return await factory()
