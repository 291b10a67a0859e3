"""The audit log written by a thread: a decision never waits for SQLite.

Every decision (a cache hit included) appends an audit row: a chained, sealed
row and its index, a transaction of about 14 statements, longer than the hit
it records. ``guard serve`` (on its event loop, where a WAL checkpoint or
another process holding the write lock would stall every request in flight)
and a long-lived in-process :class:`~guard.runtime.gate.Gate` (an SDK's, where
it would double each hit) only queue the row; one thread writes whatever has
queued, in order and in one transaction per batch (under load, one commit for
many decisions), and :meth:`BackgroundAudit.close` drains the queue first.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any

__all__ = ["BackgroundAudit"]

log = logging.getLogger("guard.audit")

_STOP = object()
#: Most rows written in one transaction.
BATCH = 256
#: How long the writer waits after a row for more to write with it: a row alone costs about four times
#: as much as one of ten (the transaction, the chain's head), all of it taken from the deciding thread.
GATHER_S = 0.005


class BackgroundAudit:
    """Stands in for an :class:`~guard.audit.AuditLog` (same ``record``), writing from a daemon thread.

    With ``settings`` that name an audit store or a collector, the thread wakes a
    :class:`~guard.audit.shipping.Shipper` after each batch it commits: the rows
    go on from the local log, never from a decision's path.
    """

    def __init__(self, audit: Any, settings: Any = None) -> None:
        self._audit = audit
        self._shipper: Any = None
        if settings is not None:
            from guard.audit.handoff import target_names
            from guard.audit.shipping import Shipper

            if target_names(settings):
                self._shipper = Shipper(settings, audit.path)
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
            time.sleep(GATHER_S)  # the rows of the next few decisions join this one's transaction
            while len(batch) < BATCH and not self._rows.empty():
                batch.append(self._rows.get())
            if _STOP in batch:
                stopping = True
                batch = [item for item in batch if item is not _STOP]
            if not batch:
                continue
            try:
                self._audit.record_many(batch, note=len(batch) == 1)  # a batch retried row by row notes each row lost
            except Exception:  # the audit log must never take the service down
                if len(batch) > 1:
                    self._one_by_one(batch)
                else:
                    log.warning("audit log write failed", exc_info=True)
            if self._shipper is not None:
                self._shipper.wake()

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
        if self._shipper is not None:
            self._shipper.close()
