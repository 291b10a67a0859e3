"""The service's audit log, written by a thread: a decision never waits for SQLite.

In ``guard serve`` every decision (a cache hit included) appends an audit row.
Written on the event loop, each insert is a transaction there, and a WAL
checkpoint or another process holding the write lock (``guard log``, a
``guard hook`` beside the service) stalls every request in flight for as long
as it lasts. Here the engine's ``record`` only queues the row; one thread
writes whatever has queued, in order and in one transaction per batch (under
load, one commit for many decisions), and the queue is drained before the
service exits.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any

__all__ = ["BackgroundAudit"]

log = logging.getLogger("guard.server")

_STOP = object()
#: Most rows written in one transaction.
BATCH = 256


class BackgroundAudit:
    """Stands in for an :class:`~guard.audit.AuditLog` (same ``record``), writing from a daemon thread."""

    def __init__(self, audit: Any) -> None:
        self._audit = audit
        self._rows: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._write, name="guard-audit", daemon=True)
        self._thread.start()

    def record(self, payload: dict[str, Any], decision: Any, *, latency_ms: float, client: str | None = None) -> None:
        """Queue one decision's row; returns at once."""
        self._rows.put((payload, decision, latency_ms, client))

    def _write(self) -> None:
        stopping = False
        while not stopping:
            batch = [self._rows.get()]
            while len(batch) < BATCH and not self._rows.empty():
                batch.append(self._rows.get())
            if _STOP in batch:
                stopping = True
                batch = [item for item in batch if item is not _STOP]
            if not batch:
                continue
            try:
                self._audit.record_many(batch)
            except Exception:  # the audit log must never take the service down
                self._one_by_one(batch)

    def _one_by_one(self, batch: list[Any]) -> None:
        """After a failed batch, each row on its own: one bad row loses only itself."""
        for entry in batch:
            try:
                self._audit.record_many([entry])
            except Exception:
                log.warning("audit log write failed", exc_info=True)

    def close(self) -> None:
        """Write every queued row, then close the log."""
        self._rows.put(_STOP)
        self._thread.join()
        self._audit.close()
