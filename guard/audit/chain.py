"""The audit log's sealed hash chain: a row deleted, edited, moved or cut off the end is found.

Each row written since the chain began carries ``chain``: the HMAC (under
guard's secret, :func:`guard.storage.secret.seal`) of the previous row's ``chain``, its own
id and every column guard wrote (not the ``label`` a person sets later). A
sealed head (``audit_head``) names the first chained id, the last row and its
``chain``, so rows cut off the end are missed too. Rows are chained inside the
transaction that writes them, under SQLite's write lock: many ``guard hook``
processes and ``guard serve``'s batch writer chain in one order.

A writer never repairs what it finds broken: when the head is missing, does
not verify, or names another last row, the next row restarts the chain (sealed
from ``"restart"``, the reason in its warnings), so the break stays on record.
Rows written before the chain existed are counted as unchained, not as broken.

The whole file replaced (by an older copy of itself, or an empty log) or deleted
takes its head with it: the head is also recorded outside the log
(:mod:`guard.audit.head_record`), and a log that does not continue that record
is reported, and restarts the chain on the next append. What it cannot see: both
removed or put back together. Keeping the agent off the state directory (the
client's sandbox, see docs/threat-model.md) is what prevents that.
Standard library only: it runs on the ``guard hook`` path.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence
from typing import Any

from guard.audit.head_record import HeadRecord, break_of
from guard.storage.secret import TrustError, seal, verify

__all__ = ["COLUMNS", "ChainReport", "ChainWriter", "create", "restart_reason", "verify_chain"]

#: The columns a row's seal covers, in order (``id`` is sealed beside them).
COLUMNS = (
    "time",
    "event",
    "tool",
    "session",
    "decision",
    "reason",
    "latency_ms",
    "cost_usd",
    "hooks",
    "payload",
    "payload_truncated",
    "payload_shortened",
    "details",
    "client",
    "judged",
    "warnings",
)
WARNINGS = COLUMNS.index("warnings")
_REAL = frozenset({"time", "latency_ms", "cost_usd"})
_INTEGER = frozenset({"payload_truncated", "payload_shortened", "judged"})
_ROW, _HEAD = "audit-row", "audit-head"
_START, _RESTART = "", "restart"
#: Problems one verification lists at most (``guard log verify`` names the first).
MOST_PROBLEMS = 20

Head = tuple[int, int, str, str]  # first_id, last_id, chain, seal


def create(db: sqlite3.Connection) -> None:
    """The chain column and its sealed head, the chain starting after the rows already there (a migration step)."""
    db.execute("ALTER TABLE decisions ADD COLUMN chain TEXT")
    db.execute(
        "CREATE TABLE audit_head (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), first_id INTEGER NOT NULL,"
        " last_id INTEGER NOT NULL, chain TEXT NOT NULL, seal TEXT NOT NULL)"
    )
    last = _last_id(db)
    _set_head(db, last + 1, last, _START)


def _last_id(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT coalesce(max(id), 0) FROM decisions").fetchone()[0])


def _canonical(values: Sequence[Any]) -> str:
    """The sealed text of a row's :data:`COLUMNS`: the same for the values written and for what SQLite gives back."""
    kept: list[Any] = []
    for name, value in zip(COLUMNS, values, strict=True):
        if name in _REAL and isinstance(value, int | float) and not isinstance(value, bool):
            value = float(value) if math.isfinite(value) else None  # SQLite stores REAL, and NaN as NULL
        elif name in _INTEGER and isinstance(value, int):
            value = int(value)
        kept.append(value)
    return json.dumps(kept, ensure_ascii=True, separators=(",", ":"))


def _seal_row(previous: str, row_id: int, values: Sequence[Any]) -> str:
    return seal(_ROW, previous, str(row_id), _canonical(values))


def _head_sealed(head: Head) -> bool:
    first_id, last_id, chain, mac = head
    return verify(mac, _HEAD, str(first_id), str(last_id), chain)


def _set_head(db: sqlite3.Connection, first_id: int, last_id: int, chain: str) -> None:
    try:
        mac = seal(_HEAD, str(first_id), str(last_id), chain)
    except TrustError:
        mac = ""  # no secret: the head is left unsealed, and verification says so
    db.execute(
        "INSERT INTO audit_head (singleton, first_id, last_id, chain, seal) VALUES (1, ?, ?, ?, ?)"
        " ON CONFLICT (singleton) DO UPDATE SET first_id = excluded.first_id, last_id = excluded.last_id,"
        " chain = excluded.chain, seal = excluded.seal",
        (first_id, last_id, chain, mac),
    )


def _head(db: sqlite3.Connection) -> Head | None:
    row = db.execute("SELECT first_id, last_id, chain, seal FROM audit_head WHERE singleton = 1").fetchone()
    return (int(row[0]), int(row[1]), str(row[2]), str(row[3])) if row else None


def _last_id_and_head(db: sqlite3.Connection) -> tuple[int, Head | None]:
    """The largest row id and the head, in one statement: a writer reads both on every append."""
    row = db.execute(
        "SELECT (SELECT coalesce(max(id), 0) FROM decisions), h.first_id, h.last_id, h.chain, h.seal"
        " FROM (SELECT 1) LEFT JOIN audit_head AS h ON h.singleton = 1"
    ).fetchone()
    head = None if row[1] is None else (int(row[1]), int(row[2]), str(row[3]), str(row[4]))
    return int(row[0]), head


def _first_chained(db: sqlite3.Connection, head: Head | None, *, sealed: bool | None = None) -> int:
    """Where the chain begins: the sealed head says; without one, the first row with a seal.

    ``sealed``: whether ``head`` verifies, when the caller has checked already (each check is an HMAC).
    """
    if head is not None and (_head_sealed(head) if sealed is None else sealed):
        return head[0]
    found = db.execute("SELECT min(id) FROM decisions WHERE chain IS NOT NULL").fetchone()[0]
    return int(found) if found is not None else _last_id(db) + 1


class ChainWriter:
    """Seals the rows one transaction appends, then moves the head past them (create it after ``BEGIN IMMEDIATE``).

    ``recorded``: the log's end as recorded outside it (read before the transaction); a log
    that does not continue it restarts the chain, its ids after the recorded one.
    """

    def __init__(self, db: sqlite3.Connection, recorded: HeadRecord | None = None) -> None:
        self.db = db
        last_id, head = _last_id_and_head(db)
        sealed = head is not None and _head_sealed(head)
        outside = recorded.last_id if recorded is not None and recorded.sealed else 0
        self.next_id = (
            max(last_id, head[1] if head else 0, outside) + 1
        )  # an id is never reused: a deleted row stays a gap
        self.first_id = _first_chained(db, head, sealed=sealed)
        #: Why the next row restarts the chain (for its warnings), or None.
        self.restart: str | None = None
        if head is None:
            self.restart = "the chain's sealed head is missing"
        elif not sealed:
            self.restart = "the chain's sealed head does not verify"
        elif head[1] != last_id:
            self.restart = f"the log ended at #{last_id} but its sealed head names #{head[1]}"
        else:
            self.restart = break_of(db, recorded, last_id, head[2])
        self.previous = _RESTART if self.restart else head[2]  # type: ignore[index]
        #: Whether the last row was sealed (without guard's secret it is not, and nothing is recorded outside the log).
        self.sealed = False

    def seal(self, values: Sequence[Any]) -> tuple[int, str | None]:
        """The id and ``chain`` for the next row (its :data:`COLUMNS`' values); ``None`` without guard's secret."""
        row_id = self.next_id
        self.next_id += 1
        try:
            self.previous = _seal_row(self.previous, row_id, values)
        except TrustError:
            self.sealed = False
            return row_id, None
        self.sealed = True
        return row_id, self.previous

    def finish(self) -> None:
        _set_head(self.db, self.first_id, self.next_id - 1, self.previous)


class ChainReport:
    """What one verification found: rows checked, unchained rows (older than the chain), problems in order."""

    __slots__ = ("chained", "last", "problems", "unchained")

    def __init__(self, unchained: int, last: tuple[int, str]) -> None:
        self.unchained = unchained
        self.chained = 0
        self.problems: list[str] = []
        self.last = last  # (id, chain) verified last: where a later check can go on from

    @property
    def intact(self) -> bool:
        return not self.problems

    def _add(self, problem: str) -> None:
        if len(self.problems) < MOST_PROBLEMS:
            self.problems.append(problem)


def restart_reason(warnings: Any) -> str:
    """The restart warning among a row's ``warnings`` (its JSON text): why the chain began again at that row."""
    try:
        found = [w for w in json.loads(warnings) if isinstance(w, str) and w.startswith("audit chain restarted")]
    except (TypeError, ValueError):
        found = []
    return found[0] if found else "audit chain restarted (no reason recorded)"


def verify_chain(
    db: sqlite3.Connection, *, after: tuple[int, str] | None = None, recorded: HeadRecord | None = None
) -> ChainReport:
    """Check every chained row (or those after ``after``, a ``ChainReport.last`` of an earlier check), the head, and that
    the log continues ``recorded``, its end as recorded outside it (read it before the log: :func:`guard.audit.head_record.read`).

    ``db`` should decode text leniently (``text_factory``): a row written by hand may hold any bytes.
    """
    head = _head(db)
    first_id = _first_chained(db, head)
    unchained = int(db.execute("SELECT count(*) FROM decisions WHERE id < ?", (first_id,)).fetchone()[0])
    expected_id, previous = after if after is not None else (first_id - 1, _START)
    report = ChainReport(unchained, (expected_id, previous))
    for row in db.execute(
        f"SELECT id, {', '.join(COLUMNS)}, chain FROM decisions WHERE id > ? ORDER BY id", (expected_id,)
    ):
        row_id, values, chain = row[0], row[1:-1], row[-1]
        report.chained += 1
        missing = row_id != expected_id + 1
        if missing:
            gap = f"#{expected_id + 1}" if row_id == expected_id + 2 else f"#{expected_id + 1}–#{row_id - 1}"
            report._add(f"{gap} {'is' if row_id == expected_id + 2 else 'are'} missing: deleted from the log")
        expected_id = row_id
        if chain is None:
            report._add(f"#{row_id} has no seal: it was not written by guard (or written without guard's secret)")
            continue
        if verify(chain, _ROW, previous, str(row_id), _canonical(values)):
            pass
        elif verify(chain, _ROW, _RESTART, str(row_id), _canonical(values)):
            report._add(f"#{row_id}: {restart_reason(values[WARNINGS])}")
        elif not missing:
            report._add(f"#{row_id} does not match its seal: it was edited, or moved from another place in the log")
        previous = chain
        report.last = (row_id, chain)
    _check_head(report, head, expected_id, previous)
    outside = break_of(db, recorded, expected_id)
    if outside:
        report._add(outside)
    return report


def _check_head(report: ChainReport, head: Head | None, last_id: int, last_chain: str) -> None:
    if head is None:
        report._add("the chain's sealed head is missing: the end of the log cannot be checked")
    elif not _head_sealed(head):
        report._add("the chain's sealed head does not verify: it was changed (or written without guard's secret)")
    elif head[1] > last_id:
        report._add(f"the log was cut off: its sealed head names #{head[1]}, the last row is #{last_id}")
    elif head[1] < last_id:
        report._add(f"#{head[1] + 1}–#{last_id} come after the sealed head: they were not written by guard")
    elif head[2] != last_chain:
        report._add(f"#{last_id} is not the row the sealed head names: the end of the log was replaced")
