"""Single flight: concurrent identical requests share one call.

When an agent fires the same tool call at several hooks, or a fleet sends the
same event to ``guard serve`` at once, only the first request pays for the model
call; the others await its result. Errors reach every waiter and are not kept:
the next request after a failure tries again.

Within a process, :class:`SingleFlight` shares the first caller's call. Across processes
and hosts, :func:`once_per_fleet` takes a lock per cache key in a shared cache
that offers one (Redis): the holder judges and stores the verdict, the others
poll the cache until the verdict lands. The lock has a lease, so a holder that
dies frees the key after the lease; one that fails releases it, and a waiter
takes over.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, Protocol, TypeGuard, TypeVar

from guard.core.errors import CacheError

__all__ = ["FleetLock", "SingleFlight", "once_per_fleet"]

log = logging.getLogger("guard.cache")

#: How often a waiting replica looks for the holder's verdict.
POLL_S = 0.02

T = TypeVar("T")


class SingleFlight(Generic[T]):
    """Deduplicate in-flight calls by key, within one event loop."""

    def __init__(self) -> None:
        self._calls: dict[Hashable, asyncio.Future[T]] = {}

    def in_flight(self) -> int:
        """How many distinct calls are running now (for metrics and tests)."""
        return len(self._calls)

    async def do(self, key: Hashable, factory: Callable[[], Awaitable[T]]) -> T:
        """Await ``factory()``, or the call already running under ``key``.

        The first caller runs the call itself, in its task: a separate task would wait
        behind every other ready request on a busy service (a hop each way, for every
        miss). A waiter that is cancelled (a hook timeout) cancels neither the call nor
        the other waiters; when the caller running it is cancelled, a waiter takes over.
        """
        loop = asyncio.get_running_loop()
        while (running := self._calls.get(key)) is not None and running.get_loop() is loop:
            try:
                return await asyncio.shield(running)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not running.cancelled() or (task is not None and task.cancelling()):
                    raise  # this waiter was cancelled, not the call
        shared: asyncio.Future[T] = loop.create_future()
        self._calls[key] = shared
        try:
            result = await factory()
        except asyncio.CancelledError:
            shared.cancel()
            raise
        except BaseException as exc:
            shared.set_exception(exc)
            shared.exception()  # retrieved: an error every waiter abandoned is not reported as "never retrieved"
            raise
        finally:
            if self._calls.get(key) is shared:
                del self._calls[key]
        shared.set_result(result)
        return result


class FleetLock(Protocol):
    """A shared cache that can also lock a key for one judging process (see ``RedisCache``)."""

    def get(self, key: str, *, record_miss: bool = True) -> dict[str, Any] | None: ...

    def lock(self, key: str, lease: float) -> str | None: ...

    def unlock(self, key: str, token: str) -> None: ...

    def locked(self, key: str) -> bool: ...


#: Whether caches of a type take fleet locks, found once per type (a Protocol ``isinstance`` walks its members on every call).
_LOCKABLE: dict[type, bool] = {}


def _lockable(cache: object) -> TypeGuard[FleetLock]:
    kind = type(cache)
    if kind not in _LOCKABLE:
        _LOCKABLE[kind] = all(callable(getattr(kind, name, None)) for name in ("get", "lock", "unlock", "locked"))
    return _LOCKABLE[kind]


async def once_per_fleet(
    cache: object, key: str, work: Callable[[], Awaitable[T]], *, lease: float
) -> T | dict[str, Any]:
    """``work()`` (which stores its verdict under ``key``) in one process of the fleet; elsewhere, that verdict.

    Returns ``work()``'s result where this process judged, or the cached verdict
    (a dict) another process stored while this one waited. Without a lockable
    cache, or when the cache fails, just ``work()``: a broken lock costs a
    duplicate call, never a decision. Nor does a lock held longer than half the
    lease (a holder judges within the hook's timeout, which the lease outlasts):
    whoever can reach the shared cache could otherwise hold every key's lock and
    leave each waiter to its hook's timeout, and a fail_open hook to allow.
    """
    if not _lockable(cache):
        return await work()
    give_up = time.monotonic() + lease / 2  # see the docstring: a lock held past this is no holder worth waiting for
    try:
        while True:
            token = cache.lock(key, lease)
            if token is not None:
                break
            while cache.locked(key) and time.monotonic() < give_up:
                await asyncio.sleep(POLL_S)
            stored = cache.get(key, record_miss=False)
            if stored is not None:
                return stored
            if time.monotonic() >= give_up:
                log.warning("decision cache lock on %s held past half its lease; judging without it", key)
                return await work()
            # released without a verdict (the holder failed, or its lease ran out): try to take the lock
        # the previous holder may have stored its verdict between our miss and our lock
        stored = cache.get(key, record_miss=False)
    except CacheError:
        log.warning("decision cache lock failed; judging without it", exc_info=True)
        return await work()
    try:
        return stored if stored is not None else await work()
    finally:
        try:
            cache.unlock(key, token)
        except CacheError:
            log.warning("decision cache unlock failed; the lock's lease will free it", exc_info=True)
