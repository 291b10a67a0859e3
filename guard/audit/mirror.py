"""A local copy of the audit store, for ``guard view --audit URL``: every machine's rows in the shape the view already reads.

The view's pages query a SQLite audit log through its indexes (:mod:`guard.audit.index`).
Rather than a second set of queries for Postgres, the view reads a copy: the
store's rows in the order they arrived (its ``seq``), appended to a SQLite file
in the user's cache, each with where it came from (machine, user, log, row id,
the inserting role) under ``details.origin``. A page refreshes the copy first
(at most every :data:`REFRESH_S`); the store stays the record, and its gaps
(:meth:`~guard.audit.postgres.AuditStore.gaps`) are what the page's banner shows,
not the copy's chain, which guard never sealed.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any

from guard.audit import index as audit_index
from guard.audit import migration
from guard.audit.handoff import without_password
from guard.audit.postgres import AuditStore
from guard.core.settings import user_dir
from guard.storage.database import connect

__all__ = ["REFRESH_S", "Mirror"]

#: Seconds between two copies of the store's new rows.
REFRESH_S = 2.0
_PAGE = 2000


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class Mirror:
    """The copy of the store at ``url`` (in ``folder``, default the user's cache), its gaps, refreshed on demand."""

    def __init__(self, url: str, folder: Path | None = None) -> None:
        self.url = url
        name = hashlib.sha256(without_password(url).encode()).hexdigest()[:16]
        self.path = (folder or user_dir("cache") / "central") / f"{name}.db"
        self._lock = threading.Lock()
        self._refreshed = 0.0
        self._gaps: list[str] = []
        self._checked = 0.0

    def _store(self) -> Any:
        return AuditStore(self.url)

    def refresh(self) -> None:
        """Copy the rows that arrived since the last copy (throttled: a page load after a page load copies nothing)."""
        with self._lock:
            if time.monotonic() - self._refreshed < REFRESH_S:
                return
            self._refreshed = time.monotonic()
            db = connect(self.path, migration)
            store = self._store()
            try:
                db.execute(
                    "CREATE TABLE IF NOT EXISTS mirror_state (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), seq INTEGER NOT NULL)"
                )
                seq = int((db.execute("SELECT seq FROM mirror_state").fetchone() or (0,))[0])
                while True:
                    rows = store.after(seq, _PAGE)
                    if not rows:
                        break
                    self._append(db, rows)
                    seq = int(rows[-1]["seq"])
                    db.execute(
                        "INSERT INTO mirror_state VALUES (1, ?) ON CONFLICT (singleton) DO UPDATE SET seq = excluded.seq",
                        (seq,),
                    )
            finally:
                store.close()
                db.close()

    @staticmethod
    def _append(db: Any, rows: list[dict[str, Any]]) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            next_id = int(db.execute("SELECT coalesce(max(id), 0) FROM decisions").fetchone()[0]) + 1
            for row in rows:
                origin = {name: row[name] for name in ("machine", "os_user", "log_id", "row_id", "db_role", "chain")}
                details = {**(row["details"] if isinstance(row["details"], dict) else {}), "origin": origin}
                hooks = row["hooks"] if isinstance(row["hooks"], list) else []
                payload = row["payload"] if isinstance(row["payload"], str) else _compact(row["payload"])
                values = (
                    next_id,
                    row["time"],
                    row["event"],
                    row["tool"],
                    row["session"],
                    row["decision"],
                    row["reason"],
                    row["latency_ms"],
                    row["cost_usd"],
                    _compact(hooks),
                    payload,
                    int(bool(row["payload_truncated"])),
                    _compact(details),
                    row["client"],
                    None if row["judged"] is None else int(row["judged"]),
                    _compact(row["warnings"]) if row["warnings"] else None,
                )
                db.execute(
                    "INSERT INTO decisions (id, time, event, tool, session, decision, reason, latency_ms, cost_usd, hooks, payload,"
                    " payload_truncated, details, client, judged, warnings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    values,
                )
                audit_index.write(db, next_id, row["time"], row["tool"], row["reason"], payload, hooks)
                next_id += 1
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def gaps(self) -> list[str]:
        """The store's gaps, as the decisions page's banner says them (checked at most every ten seconds)."""
        with self._lock:
            if time.monotonic() - self._checked > 10.0:
                store = self._store()
                try:
                    self._gaps = [f"The audit store is not whole: {gap}" for gap in store.gaps()]
                finally:
                    store.close()
                self._checked = time.monotonic()
            return list(self._gaps)
