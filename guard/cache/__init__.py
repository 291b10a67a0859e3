"""The decision cache: identical judgements are not paid twice.

It sits in front of every model call (the smart hook asks it before judging).
An entry is a verdict under a key, sealed; this module says what both are, and
which backend holds them:

- the key (:func:`cache_key`): a hash of canonical JSON of only what changes the
  verdict. Volatile fields (ids, transcript path, timestamps) are dropped so the
  same tool call in another session hits the same entry; keys are sorted so field
  order does not matter;
- the seal (:func:`entry_seal`): every backend stores the verdict text and its
  expiry beside this MAC (see :mod:`guard.storage.secret`), because the agent being
  guarded can write to the store; binding the key stops a valid allow being copied
  onto another call's key, binding the expiry stops an entry being kept alive;
- the backend: ``guard/cache/sqlite.py`` (default, embedded) and
  ``guard/cache/redis.py`` (fleets) implement :class:`DecisionCache`. ``cache.url``'s
  scheme names the backend in :data:`BACKENDS`; a package adds one under the
  ``guard.cache_backends`` entry-point group (``scheme = "module:Class"``, a class
  with ``from_url(url, *, ttl, base_dir)``), read only for a scheme guard does not know.

Standard library only at import time: a cache-hit ``guard hook`` keys, opens and checks an entry with it.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Protocol

from guard.core.errors import UnknownName
from guard.core.plugins import Seam
from guard.storage.secret import seal, verify

if TYPE_CHECKING:
    from guard.core.settings import Settings

__all__ = [
    "BACKENDS",
    "VOLATILE_FIELDS",
    "DecisionCache",
    "cache_key",
    "canonical_json",
    "canonical_payload",
    "entry_seal",
    "open_cache",
    "sealed",
]

VOLATILE_FIELDS: frozenset[str] = frozenset(
    {
        "session_id",
        "prompt_id",
        "tool_use_id",
        "transcript_path",
        "timestamp",
        "created_at",
        "time",
        "agent_id",
        "trace_id",
        "delivery_id",
    }
)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def canonical_payload(
    payload: dict[str, Any], ignore: tuple[str, ...] = (), keep: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The payload without volatile top-level fields (``ignore`` adds more, ``keep`` spares some)."""
    drop = (VOLATILE_FIELDS | frozenset(ignore)) - frozenset(keep)
    return {k: v for k, v in payload.items() if k not in drop}


def cache_key(parts: dict[str, Any]) -> str:
    """blake2b of canonical JSON of ``parts`` (rule, prompt version and hash, model, tier, params, payload)."""
    return hashlib.blake2b(canonical_json(parts).encode(), digest_size=20).hexdigest()


_SEAL_PURPOSE = "cache"


def entry_seal(key: str, text: str, expires_at: float) -> str:
    """The MAC for the entry ``key`` → ``text`` (verdict JSON) valid until ``expires_at``."""
    return seal(_SEAL_PURPOSE, key, text, repr(float(expires_at)))


def sealed(mac: object, key: str, text: object, expires_at: object) -> bool:
    """True when the stored ``mac`` matches the stored entry; anything malformed is False."""
    if not isinstance(text, str) or not isinstance(expires_at, (int, float)) or isinstance(expires_at, bool):
        return False
    return verify(mac, _SEAL_PURPOSE, key, text, repr(float(expires_at)))


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
    """A key → verdict store with a TTL. Only parsed verdicts are ever stored, each sealed (:func:`entry_seal`)."""

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
