"""The decision cache: identical judgements are not paid twice.

It sits in front of every model call (the smart hook asks it before judging).
Backends live in ``guard/cache/sqlite.py`` (default, embedded) and
``guard/cache/redis.py`` (fleets); both implement :class:`DecisionCache`.
Keys come from :mod:`guard.cache.key`. Standard library only at import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from guard.cache.key import cache_key, canonical_payload

if TYPE_CHECKING:
    from guard.core.settings import Settings

__all__ = ["DecisionCache", "cache_key", "canonical_payload", "open_cache"]


class DecisionCache(Protocol):
    """A key → verdict store with a TTL. Only parsed verdicts are ever stored."""

    def get(self, key: str, *, record_miss: bool = True) -> dict[str, Any] | None:
        """The live verdict under ``key`` or None. ``record_miss=False`` is for a probe
        (the ``guard hook`` fast path) whose miss the engine's own lookup will count."""
        ...

    def set(self, key: str, value: dict[str, Any], ttl: float | None = None) -> None: ...

    def stats(self) -> dict[str, Any]: ...

    def clear(self) -> int: ...


def open_cache(settings: Settings) -> DecisionCache | None:
    """The backend named by ``settings.cache_url``; None when the cache is ``off``."""
    url = settings.cache_url
    if url in ("off", "", None):
        return None
    if url.startswith("redis://") or url.startswith("rediss://"):
        from guard.cache.redis import RedisCache

        return RedisCache(url, ttl=settings.cache_ttl)
    from guard.cache.sqlite import SQLiteCache

    return SQLiteCache.from_url(url, ttl=settings.cache_ttl, base_dir=settings.base_dir)
