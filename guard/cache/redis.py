"""The decision cache for fleets: verdicts in Redis, shared by every host.

Each entry is one key written with its TTL (``SET … PX``: SETEX in
milliseconds) under a prefix (``guard:`` by default, or the URL's ``?prefix=``),
so Redis expires entries itself; hits and misses are two counters beside them.
A ``lock:`` key per cache key, with a lease, lets one replica of a fleet judge
an event while the others wait for its verdict (:mod:`guard.cache.singleflight`).
A lookup is one round trip: a small Lua script reads the entry and bumps the
right counter. redis-py is imported when the cache is built, never on the
``guard hook`` paths that do not need it.

Each entry carries a seal over its key, verdict and expiry (:func:`guard.cache.entry_seal`):
anyone who can write to the Redis server can forge neither. An entry that fails
its seal is deleted, counted as ``tampered`` (not as a hit) and is a miss.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import time
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from guard.cache import entry_seal, sealed
from guard.core.errors import CacheError, ConfigError
from guard.storage.secret import TrustError

__all__ = ["RedisCache"]

log = logging.getLogger("guard.cache")

_GET_AND_COUNT = """
local value = redis.call('GET', KEYS[1])
if value then redis.call('INCR', KEYS[2]) elseif ARGV[1] == '1' then redis.call('INCR', KEYS[3]) end
return value
"""

_UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

#: Seconds to wait for Redis: a dead cache must cost a hook little more than a miss.
SOCKET_TIMEOUT_S = 2.0


class RedisCache:
    """Verdicts by cache key in Redis with a TTL, plus hit/miss counters."""

    backend = "redis"

    @classmethod
    def from_url(cls, url: str, *, ttl: float, base_dir: str | os.PathLike[str] = ".") -> RedisCache:
        """``redis://host:port/db`` or ``rediss://…`` (``base_dir`` is for file backends)."""
        return cls(url, ttl=ttl)

    def __init__(self, url: str, *, ttl: float) -> None:
        from guard.core.extras import MissingExtra, require

        try:
            require("redis", "cache.url: redis://")
            import redis
        except MissingExtra as exc:
            raise ConfigError(str(exc), key="cache.url") from exc
        parts = urlsplit(url)
        query = parse_qsl(parts.query)
        self.prefix = next((v for k, v in query if k == "prefix"), "guard:")
        self.url = urlunsplit(parts._replace(query=urlencode([(k, v) for k, v in query if k != "prefix"])))
        #: The URL for messages and stats: never the password.
        self.location = self.url.replace(f":{parts.password}@", ":***@") if parts.password else self.url
        self.ttl = ttl
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError,)
        try:
            # lib_name/lib_version None: no CLIENT SETINFO round trips on connect (a guard hook connects once per call)
            self._redis = redis.Redis.from_url(
                self.url,
                socket_timeout=SOCKET_TIMEOUT_S,
                socket_connect_timeout=SOCKET_TIMEOUT_S,
                lib_name=None,
                lib_version=None,
            )
        except ValueError as exc:
            raise ConfigError(f"invalid Redis URL: {exc}", key="cache.url") from exc
        self._get_and_count = self._redis.register_script(_GET_AND_COUNT)
        self._unlock = self._redis.register_script(_UNLOCK)
        self._hits_key = f"{self.prefix}stats:hits"
        self._misses_key = f"{self.prefix}stats:misses"
        self._tampered_key = f"{self.prefix}stats:tampered"

    def _entry(self, key: str) -> str:
        return f"{self.prefix}entry:{key}"

    def _fail(self, exc: BaseException) -> CacheError:
        return CacheError(f"decision cache {self.location}: {exc}")

    def get(self, key: str, *, record_miss: bool = True) -> dict[str, Any] | None:
        """The live verdict stored under ``key``, counting the hit (and the miss, unless told not to)."""
        try:
            keys = [self._entry(key), self._hits_key, self._misses_key]
            raw = self._get_and_count(keys=keys, args=["1" if record_miss else "0"])
        except self._errors as exc:
            raise self._fail(exc) from exc
        if raw is None:
            return None
        value = self._unsealed(key, raw)
        if value is None:
            log.warning(
                "decision cache %s: the entry for %s fails its seal (tampered or forged); judging again",
                self.location,
                key,
            )
            try:
                pipe = self._redis.pipeline(transaction=False)
                pipe.delete(self._entry(key))
                pipe.decr(self._hits_key)
                pipe.incr(self._tampered_key)
                if record_miss:
                    pipe.incr(self._misses_key)
                pipe.execute()
            except self._errors as exc:
                raise self._fail(exc) from exc
        return value

    @staticmethod
    def _unsealed(key: str, raw: bytes) -> dict[str, Any] | None:
        """The verdict in a stored record whose seal verifies and which has not expired, else None."""
        try:
            record = json.loads(raw)
            text, expires_at = record["verdict"], record["expires_at"]
            if not sealed(record.get("mac"), key, text, expires_at) or expires_at <= time.time():
                return None
            value = json.loads(text)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        return value if isinstance(value, dict) else None

    def set(self, key: str, value: dict[str, Any], ttl: float | None = None) -> None:
        """Store a parsed verdict; Redis drops it after ``ttl`` seconds (the cache's TTL by default)."""
        seconds = self.ttl if ttl is None else ttl
        millis = max(1, round(seconds * 1000))
        now = time.time()
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        try:
            mac = entry_seal(key, text, now + seconds)
        except TrustError as exc:
            raise CacheError(f"decision cache {self.location}: {exc}") from exc
        fields = {"verdict": text, "created_at": now, "expires_at": now + seconds, "mac": mac}
        record = json.dumps(fields, separators=(",", ":"), ensure_ascii=False)
        try:
            self._redis.set(self._entry(key), record, px=millis)
        except self._errors as exc:
            raise self._fail(exc) from exc

    def _lock(self, key: str) -> str:
        return f"{self.prefix}lock:{key}"

    def lock(self, key: str, lease: float) -> str | None:
        """Take the fleet-wide lock on judging ``key`` (``SET NX PX``): a token to unlock with, or None if another holds it.

        The lease expires on its own, so a holder that dies never blocks the key for longer than ``lease`` seconds.
        """
        token = secrets.token_hex(8)
        try:
            taken = self._redis.set(self._lock(key), token, nx=True, px=max(1, round(lease * 1000)))
        except self._errors as exc:
            raise self._fail(exc) from exc
        return token if taken else None

    def unlock(self, key: str, token: str) -> None:
        """Release the lock if ``token`` still holds it (a lock whose lease ran out may be someone else's now)."""
        try:
            self._unlock(keys=[self._lock(key)], args=[token])
        except self._errors as exc:
            raise self._fail(exc) from exc

    def locked(self, key: str) -> bool:
        """Whether some process holds the lock on ``key`` (it is judging it now)."""
        try:
            return bool(self._redis.exists(self._lock(key)))
        except self._errors as exc:
            raise self._fail(exc) from exc

    def _entry_keys(self) -> list[bytes]:
        return list(self._redis.scan_iter(match=f"{self.prefix}entry:*", count=1000))

    def stats(self) -> dict[str, Any]:
        """Live entries under the prefix, hit, miss and tampered counters, and the entries' memory."""
        try:
            keys = self._entry_keys()
            pipe = self._redis.pipeline(transaction=False)
            for key in keys:
                pipe.memory_usage(key)
            sizes = pipe.execute()
            hits, misses, tampered = self._redis.mget(self._hits_key, self._misses_key, self._tampered_key)
        except self._errors as exc:
            raise self._fail(exc) from exc
        return {
            "backend": self.backend,
            "location": f"{self.location} (prefix {self.prefix!r})",
            "ttl_seconds": self.ttl,
            "entries": len(keys),
            "hits": int(hits or 0),
            "misses": int(misses or 0),
            "tampered": int(tampered or 0),
            "size_bytes": sum(size or 0 for size in sizes),
        }

    def clear(self) -> int:
        """Remove every entry under the prefix and reset the counters; returns how many were removed."""
        try:
            keys = self._entry_keys()
            removed = sum(self._redis.delete(*keys[i : i + 500]) for i in range(0, len(keys), 500))
            self._redis.delete(self._hits_key, self._misses_key, self._tampered_key)
        except self._errors as exc:
            raise self._fail(exc) from exc
        return int(removed)

    def close(self) -> None:
        self._redis.close()
