"""Whether the audit log the view shows is whole: its sealed chain, writes that failed, logs set aside.

The decisions page shows a banner when any of these says the log is not the
whole record. The chain is checked in full when the view first asks, every
:data:`FULL_EVERY` seconds after, and whenever rows already checked are gone;
in between only the rows written since (and the head) are checked, so a page
costs what the new rows cost and an edit to an old row shows within minutes.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from guard.audit import chain as audit_chain
from guard.audit import recovery as audit_recovery

__all__ = ["FULL_EVERY", "AuditIntegrity"]

#: Seconds between full checks of the chain (an edit to an old row shows within this).
FULL_EVERY = 300.0


class AuditIntegrity:
    """The state of one audit log file, for the decisions page's banner."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._report: audit_chain.ChainReport | None = None
        self._checked_at = 0.0
        self._counted = 0  # rows up to the last one checked, when it was checked: fewer now means rows were deleted

    def _verify(self) -> audit_chain.ChainReport:
        assert self.path is not None
        recorded = audit_chain.read_record(self.path)  # before the log: it never names a row the log has yet to show
        db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None)
        try:
            db.execute("PRAGMA query_only = 1")
            db.text_factory = lambda data: data.decode("utf-8", "replace")
            if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'audit_head'").fetchone() is None:
                return audit_chain.ChainReport(0, (0, ""))  # not migrated yet: the view's first read migrates it
            earlier = self._report
            counted = int(
                db.execute(
                    "SELECT count(*) FROM decisions WHERE id <= ?", (earlier.last[0] if earlier else 0,)
                ).fetchone()[0]
            )
            if earlier is None or counted != self._counted or time.monotonic() - self._checked_at > FULL_EVERY:
                self._checked_at = time.monotonic()  # first, due, or rows already checked are gone: check everything
                report = audit_chain.verify_chain(db, recorded=recorded)
                self._counted = int(
                    db.execute("SELECT count(*) FROM decisions WHERE id <= ?", (report.last[0],)).fetchone()[0]
                )
                return report
            later = audit_chain.verify_chain(db, after=earlier.last, recorded=recorded)
            self._counted = counted + later.chained
            later.chained += earlier.chained
            later.problems = list(dict.fromkeys(earlier.problems + later.problems))[: audit_chain.MOST_PROBLEMS]
            return later
        finally:
            db.close()

    def problems(self) -> list[str]:
        """What a person must know about the log: a broken chain, failed writes, logs set aside ([] when whole)."""
        if self.path is None:
            return []
        found: list[str] = []
        gone = None if self.path.exists() else audit_chain.missing_log(self.path)
        if gone is not None:
            found.append(
                f"The audit log is gone: {gone}. The decisions logged so far are not in this view; run guard log verify."
            )
        if self.path.exists():
            self._report = self._verify()
            if self._report.problems:
                first, more = self._report.problems[0], len(self._report.problems) - 1
                also = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
                found.append(
                    f"The audit log's sealed chain is broken: {first}{also}. Rows were deleted, edited or cut off "
                    "outside guard; run guard log verify for the list."
                )
        failed = audit_recovery.failures(self.path)
        if failed:
            last = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(failed[-1]["time"]))
            found.append(
                f"{len(failed)} decision{'s were' if len(failed) > 1 else ' was'} not logged: the audit write failed "
                f"(last at {last}: {failed[-1]['error']})."
            )
        found += [
            f"An unreadable audit log was set aside as {aside}; this log started anew."
            for aside in audit_recovery.set_aside_files(self.path)
        ]
        return found
