"""The default decision cache: one SQLite file shared by every ``guard hook`` process.

A cache hit is the common case of a hook that runs on every tool call, so the
hit path is one write transaction (the entry's hit count and the hit counter)
on a connection opened without schema work. ``guard serve`` reads instead and
writes the counts in batches (:mod:`guard.cache.batched_counts`). The file and its directory are
created on first use; ``stats()`` and ``clear()`` never create it.

Every entry is sealed (:mod:`guard.storage.secret`) over its key, verdict and expiry: the
agent being guarded can write this file, and a row it rewrote from deny to
allow (or forged) fails its seal, is deleted and counted as ``tampered``, and
the call is judged again. Standard library only.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from guard.cache import entry_seal, sealed
from guard.core.errors import CacheError, ConfigError
from guard.core.logs import LazyLogger
from guard.storage.database import Migrations, connect
from guard.storage.secret import TrustError

__all__ = ["SQLiteCache"]

log = LazyLogger("guard.cache")

SCHEME = "sqlite:///"

migration = Migrations("_guard_cache_migrations")


@migration
def m001_entries(db: sqlite3.Connection) -> None:
    db.execute(
        "CREATE TABLE entries (key TEXT PRIMARY KEY, value TEXT NOT NULL, created_at REAL NOT NULL,"
        " expires_at REAL NOT NULL, hits INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID"
    )
    db.execute("CREATE INDEX entries_expires_at ON entries (expires_at)")
    db.execute("CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID")
    db.execute("INSERT INTO counters (name, value) VALUES ('hits', 0), ('misses', 0)")


@migration
def m002_seals(db: sqlite3.Connection) -> None:
    """Entries from before seals have none, so they miss once and are judged again."""
    db.execute("ALTER TABLE entries ADD COLUMN mac TEXT NOT NULL DEFAULT ''")
    db.execute("INSERT INTO counters (name, value) VALUES ('tampered', 0)")


def _damaged(exc: BaseException | None) -> bool:
    """SQLite's "not a database" / "malformed" errors (its subclasses mean locks, constraints …)."""
    return type(exc) is sqlite3.DatabaseError


class SQLiteCache:
    """Verdicts by cache key in a SQLite file, with a TTL and hit/miss counters."""

    backend = "sqlite"

    def __init__(self, path: str | os.PathLike[str], *, ttl: float) -> None:
        self.path = Path(path)
        self.ttl = ttl
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()  # one connection, shared by the engine's threads

    @classmethod
    def from_url(cls, url: str, *, ttl: float, base_dir: str | os.PathLike[str] = ".") -> SQLiteCache:
        """``sqlite:///relative/path.db`` (against ``base_dir``) or ``sqlite:////absolute/path.db``."""
        if not url.startswith(SCHEME) or len(url) == len(SCHEME):
            raise ConfigError(
                f"expected sqlite:///path/to/cache.db or redis://host:port/db, got {url!r}", key="cache.url"
            )
        path = Path(os.path.expanduser(url[len(SCHEME) :]))
        return cls(path if path.is_absolute() else Path(base_dir) / path, ttl=ttl)

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """The (lazily opened) database, held for the block; SQLite errors become CacheError."""
        with self._lock:
            try:
                if self._db is None:
                    self._db = connect(self.path, migration, durable=False)  # a cache can be judged again
                yield self._db
            except (sqlite3.Error, OSError) as exc:
                hint = " (the file is damaged; `guard cache clear` starts a new one)" if _damaged(exc) else ""
                raise CacheError(f"decision cache {self.path}: {exc}{hint}") from exc

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction on the database; SQLite errors become CacheError."""
        with self._connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def _drop_tampered(self, db: sqlite3.Connection, key: str) -> None:
        log.warning(
            "decision cache %s: the entry for %s fails its seal (tampered or forged); judging again", self.path, key
        )
        db.execute("DELETE FROM entries WHERE key = ?", (key,))
        db.execute("UPDATE counters SET value = value + 1 WHERE name = 'tampered'")

    def get(self, key: str, *, record_miss: bool = True) -> dict[str, Any] | None:
        """The live verdict stored under ``key``, counting the hit (and the miss, unless told not to).

        An entry whose seal does not verify is deleted and counted as tampered: a miss.
        """
        with self._transaction() as db:
            row = db.execute(
                "UPDATE entries SET hits = hits + 1 WHERE key = ? AND expires_at > ? RETURNING value, expires_at, mac",
                (key, time.time()),
            ).fetchone()
            if row and not sealed(row[2], key, row[0], row[1]):
                self._drop_tampered(db, key)
                row = None
            if row or record_miss:
                db.execute("UPDATE counters SET value = value + 1 WHERE name = ?", ("hits" if row else "misses",))
        return json.loads(row[0]) if row else None

    def read(self, key: str) -> dict[str, Any] | None:
        """The live verdict under ``key`` without counting it: a read, no write transaction (an entry failing its
        seal is still deleted and counted as tampered). For callers that count in batches (:meth:`add_counts`)."""
        with self._connection() as db:
            row = db.execute(
                "SELECT value, expires_at, mac FROM entries WHERE key = ? AND expires_at > ?", (key, time.time())
            ).fetchone()
        if row and not sealed(row[2], key, row[0], row[1]):
            with self._transaction() as db:
                self._drop_tampered(db, key)
            return None
        return json.loads(row[0]) if row else None

    def add_counts(self, entry_hits: Mapping[str, int], counters: Mapping[str, int]) -> None:
        """Add hits per entry and to the ``hits``/``misses`` counters, counted elsewhere, in one transaction."""
        with self._transaction() as db:
            db.executemany(
                "UPDATE entries SET hits = hits + ? WHERE key = ?", [(n, key) for key, n in entry_hits.items()]
            )
            db.executemany(
                "UPDATE counters SET value = value + ? WHERE name = ?", [(n, name) for name, n in counters.items()]
            )

    def set(self, key: str, value: dict[str, Any], ttl: float | None = None) -> None:
        """Store a parsed verdict for ``ttl`` seconds (the cache's TTL by default); drop expired entries."""
        now = time.time()
        expires_at = now + (self.ttl if ttl is None else ttl)
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        try:
            mac = entry_seal(key, text, expires_at)
        except TrustError as exc:
            raise CacheError(f"decision cache {self.path}: {exc}") from exc
        with self._transaction() as db:
            db.execute("DELETE FROM entries WHERE expires_at <= ?", (now,))
            db.execute(
                "INSERT INTO entries (key, value, created_at, expires_at, hits, mac) VALUES (?, ?, ?, ?, 0, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value, created_at = excluded.created_at,"
                " expires_at = excluded.expires_at, hits = 0, mac = excluded.mac",
                (key, text, now, expires_at, mac),
            )

    def stats(self) -> dict[str, Any]:
        """Live entries, hits, misses and tampered entries counted since the last clear, and the file's size."""
        base: dict[str, Any] = {"backend": self.backend, "location": str(self.path), "ttl_seconds": self.ttl}
        if not self.path.exists():
            return {**base, "entries": 0, "hits": 0, "misses": 0, "tampered": 0, "size_bytes": 0}
        with self._transaction() as db:
            entries = db.execute("SELECT count(*) FROM entries WHERE expires_at > ?", (time.time(),)).fetchone()[0]
            counters = dict(db.execute("SELECT name, value FROM counters").fetchall())
        size = sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())
        counts = {name: counters.get(name, 0) for name in ("hits", "misses", "tampered")}
        return {**base, "entries": entries, **counts, "size_bytes": size}

    def clear(self) -> int:
        """Remove every entry and reset the counters; returns how many entries were removed.

        A file SQLite cannot read (an OS crash can damage it: see ``connect``) is
        deleted instead, so the next lookup starts a fresh cache.
        """
        if not self.path.exists():
            return 0
        try:
            with self._transaction() as db:
                removed = db.execute("DELETE FROM entries").rowcount
                db.execute("UPDATE counters SET value = 0")
        except CacheError as exc:
            if not _damaged(exc.__cause__):
                raise
            self.close()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            return 0
        return removed

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
