"""``guard serve``'s SQLite decision cache: lookups only read, hit and miss counts are written in batches.

A lookup that counts is a write transaction (the entry's hits, the hit or miss
counter). In ``guard serve`` lookups run on the event loop, so each would make
every request in flight wait for SQLite's write lock and any WAL checkpoint, and
a ``guard hook`` or ``guard cache stats`` beside the service holding that lock
would stall them all. Here a lookup reads and tallies its counts in memory; a
thread adds the tally in one transaction, on its own connection, every
:data:`FLUSH_INTERVAL_S`, and once more when the service stops, so a clean stop
loses no count. Verdicts are still stored at once (another process may need
them). Standard library only.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from typing import TYPE_CHECKING, Any

from guard.cache.sqlite import SCHEME, SQLiteCache
from guard.core.errors import CacheError

if TYPE_CHECKING:
    from guard.core.settings import Settings

__all__ = ["FLUSH_INTERVAL_S", "BatchedCounts", "for_service"]

log = logging.getLogger("guard.cache")

#: How often the tallied counts are written (``guard cache stats`` lags by at most this much).
FLUSH_INTERVAL_S = 1.0


class BatchedCounts:
    """Stands in for a :class:`SQLiteCache` (same ``get``, ``set``, ``stats``, ``clear``), counting lookups in batches."""

    def __init__(self, cache: SQLiteCache, *, interval: float = FLUSH_INTERVAL_S) -> None:
        self.backend = cache.backend
        self._cache = cache
        self._writer = SQLiteCache(
            cache.path, ttl=cache.ttl
        )  # its own connection: a flush never holds the lookups' lock
        self._entry_hits: Counter[str] = Counter()
        self._counters: Counter[str] = Counter()
        self._tally_lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._interval = interval
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._flush_every_interval, name="guard-cache-counts", daemon=True)
        self._thread.start()

    def get(self, key: str, *, record_miss: bool = True) -> dict[str, Any] | None:
        """The live verdict under ``key``; the hit (or the miss, unless told not to) is tallied, not written."""
        value = self._cache.read(key)
        if value is not None or record_miss:
            with self._tally_lock:
                if value is not None:
                    self._entry_hits[key] += 1
                self._counters["hits" if value is not None else "misses"] += 1
        return value

    def set(self, key: str, value: dict[str, Any], ttl: float | None = None) -> None:
        self._cache.set(key, value, ttl)

    def stats(self) -> dict[str, Any]:
        self.flush()
        return self._cache.stats()

    def clear(self) -> int:
        with self._tally_lock:  # counts from before the clear are reset with it
            self._entry_hits.clear()
            self._counters.clear()
        return self._cache.clear()

    def flush(self) -> None:
        """Write the tallied counts now; kept for the next flush if the file is busy."""
        with self._flush_lock:
            with self._tally_lock:
                entry_hits, counters = self._entry_hits, self._counters
                self._entry_hits, self._counters = Counter(), Counter()
            if not counters:
                return
            try:
                self._writer.add_counts(entry_hits, counters)
            except CacheError:
                log.warning("could not write the decision cache's hit and miss counts; retrying", exc_info=True)
                with self._tally_lock:
                    self._entry_hits.update(entry_hits)
                    self._counters.update(counters)

    def _flush_every_interval(self) -> None:
        while not self._stopping.wait(self._interval):
            self.flush()

    def close(self) -> None:
        """Stop the thread, write what is tallied, close both connections."""
        self._stopping.set()
        self._thread.join()
        self.flush()
        self._writer.close()
        self._cache.close()


def for_service(settings: Settings) -> BatchedCounts | None:
    """The decision cache ``guard serve`` should use when it is a SQLite file; None for Redis (a lookup there
    counts in its own round trip) or no cache."""
    if not settings.cache_url.startswith(SCHEME):
        return None
    return BatchedCounts(SQLiteCache.from_url(settings.cache_url, ttl=settings.cache_ttl, base_dir=settings.base_dir))
