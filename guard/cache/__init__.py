"""The decision cache: identical judgements are not paid twice.

It sits in front of every model call (the smart hook asks it before judging).
Backends live in ``guard/cache/sqlite.py`` (default, embedded) and
``guard/cache/redis.py`` (fleets); both implement :class:`DecisionCache`.
``cache.url``'s scheme names the backend in :data:`BACKENDS`; a package adds one
under the ``guard.cache_backends`` entry-point group (``scheme = "module:Class"``,
a class with ``from_url(url, *, ttl, base_dir)``), read only for a scheme guard
does not know. Keys come from :mod:`guard.cache.key`. Standard library only at import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from guard.cache.key import cache_key, canonical_payload
from guard.core.errors import UnknownName
from guard.core.plugins import Seam

if TYPE_CHECKING:
    from guard.core.settings import Settings

__all__ = ["BACKENDS", "DecisionCache", "cache_key", "canonical_payload", "open_cache"]

#: cache.url schemes → backend classes
BACKENDS = Seam(
    "guard.cache_backends",
    "cache backend",
    {
        "sqlite": "guard.cache.sqlite:SQLiteCache",
        "redis": "guard.cache.redis:RedisCache",
        "rediss": "guard.cache.redis:RedisCache",
    },
)


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
    scheme, separator, _ = url.partition("://")
    if not separator or not BACKENDS.known(scheme):
        raise UnknownName(
            f"expected sqlite:///path/to/cache.db or redis://host:port/db (or a scheme a cache plugin adds), got {url!r}",
            key="cache.url",
        )
    backend: Any = BACKENDS.load(scheme)
    cache: DecisionCache = backend.from_url(url, ttl=settings.cache_ttl, base_dir=settings.base_dir)
    return cache
