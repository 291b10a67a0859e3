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
takes its head with it, and the new log verifies as intact. So every append also
records the last row's id and seal outside the log (:class:`HeadRecord`), in guard's
state folder (``audit-heads/<hash of the log's path>``, the folder the default log
lives in, under the same protection: the client's sandbox denies the agent writes
there), sealed under guard's secret. A log that is shorter than this record, or
whose row of that id is not the one recorded, did not come from guard's appends
alone: ``guard log verify``, ``guard doctor`` and ``guard view`` say so, and the next
append restarts the chain saying why (its ids continue after the record).

What it cannot see: the record and the log both removed, or both put back from an
older copy. Where the agent can write guard's state folder (the unsandboxed level)
it can do that; only rows kept elsewhere (the central audit store) survive it.
Keeping the agent off the state directory (the client's sandbox, see
docs/threat-model.md) is what prevents that. Standard library only: it runs on the
``guard hook`` path.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import sqlite3
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from guard.core.record import FrozenRecord
from guard.core.settings import user_dir
from guard.storage.secret import TrustError, seal, verify

__all__ = [
    "COLUMNS",
    "ChainReport",
    "ChainWriter",
    "HeadRecord",
    "break_of",
    "create",
    "missing_log",
    "read_record",
    "record_path",
    "restart_reason",
    "verify_chain",
    "write_record",
]

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
_ROW, _HEAD, _RECORD = "audit-row", "audit-head", "audit-record"
_START, _RESTART = "", "restart"
#: Problems one verification lists at most (``guard log verify`` names the first).
MOST_PROBLEMS = 20

#: Bytes a record of the log's end may take (a 64-hex seal, a 20-digit id, a 64-hex chain, and room to spare).
_RECORD_BYTES = 512

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


# -- the log's end, recorded outside it --------------------------------------------------------------------------------


class HeadRecord(FrozenRecord):
    """The last row guard appended to one log: its id and seal; ``sealed`` False when the record fails its seal."""

    __slots__ = ("chain", "last_id", "sealed")
    last_id: int
    chain: str
    sealed: bool

    def __init__(self, last_id: int, chain: str, sealed: bool = True) -> None:
        self._assign(locals())


def record_path(log: Path) -> Path:
    return _record_path(str(log.absolute()))


@lru_cache(maxsize=16)
def _record_path(log: str) -> Path:
    return user_dir("state") / "audit-heads" / f"{hashlib.sha256(log.encode()).hexdigest()[:16]}.head"


def _body(last_id: int, chain: str) -> str:
    """The sealed text: the id at a fixed width, so a record is always rewritten whole, in place."""
    return f"{last_id:020d} {chain}"


def _parse(log: Path, data: bytes, *, check: bool = True) -> HeadRecord:
    """The record in ``data``; its seal checked unless ``check`` is off (then ``sealed`` says nothing)."""
    try:
        mac, _, body = data.decode("ascii").partition("\n")
        number, _, chain = body.partition(" ")
        found = HeadRecord(int(number), chain)
    except ValueError:
        return HeadRecord(0, "", sealed=False)
    if not check:
        return found
    try:
        sealed = verify(mac, _RECORD, str(log.absolute()), body)
    except TrustError:
        sealed = False
    return found if sealed else HeadRecord(found.last_id, found.chain, sealed=False)


def read_record(log: Path) -> HeadRecord | None:
    """The record for the log at ``log``: None when guard never recorded one; ``sealed=False`` when it was changed."""
    try:
        fd = os.open(record_path(log), os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError:
        return HeadRecord(0, "", sealed=False)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # a writer rewrites it in place, under LOCK_EX
        data = os.pread(fd, _RECORD_BYTES, 0)
    except OSError:
        return HeadRecord(0, "", sealed=False)
    finally:
        os.close(fd)
    return _parse(log, data) if data else None


def write_record(log: Path, last_id: int, chain: str) -> None:
    """Record ``last_id`` and its seal as the log's end, unless a later row is recorded already (appends race after commit).

    Rewritten in place under an exclusive lock, a few system calls (a rename costs a
    millisecond on some file systems, on every tool call). Never raises: the rows are in
    the log already, and a record that could not be written only makes the next check
    less strict (a failure is noted like a failed audit write).
    """
    path = record_path(log)
    try:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except FileNotFoundError:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = os.pread(fd, _RECORD_BYTES, 0)
            # a later row recorded already (an append that committed after this one) stands, unless it is forged
            if data and _parse(log, data, check=False).last_id >= last_id and _parse(log, data).sealed:
                return
            body = _body(last_id, chain)
            record = f"{seal(_RECORD, str(log.absolute()), body)}\n{body}".encode("ascii")
            os.pwrite(fd, record, 0)
            if len(data) > len(record):
                os.ftruncate(fd, len(record))
        finally:
            os.close(fd)
    except (OSError, TrustError, UnicodeEncodeError) as exc:
        from guard.audit import recovery  # here: only a write that failed needs it

        recovery.note_failure(log, exc)


def break_of(
    db: sqlite3.Connection, recorded: HeadRecord | None, last_id: int, last_chain: str | None = None
) -> str | None:
    """How the log in ``db`` (its largest row id ``last_id``) fails to continue ``recorded``; None when it does (or nothing was recorded).

    ``last_chain``: the seal of row ``last_id`` when the caller knows it (a writer's sealed head), saving the lookup.
    Read ``recorded`` before the log: it is written after each commit, so it never names a row the log has yet to show.
    """
    if recorded is None:
        return None
    where = "guard's record of the log's end outside it"
    if not recorded.sealed:
        return f"{where} does not verify: it was changed"
    if recorded.last_id > last_id:
        return (
            f"the log ends at #{last_id}, but {where} names #{recorded.last_id}: rows were removed, or the file was emptied or "
            "replaced"
        )
    if recorded.last_id == last_id and last_chain is not None:
        row: tuple[str | None] | None = (last_chain,)
    else:
        row = db.execute("SELECT chain FROM decisions WHERE id = ?", (recorded.last_id,)).fetchone()
    if row is None:
        return f"#{recorded.last_id}, the last row {where} names, is missing"
    if row[0] != recorded.chain:
        return f"#{recorded.last_id} is not the row {where} names: the log was replaced"
    return None


def missing_log(log: Path) -> str | None:
    """What is wrong with there being no log at ``log``: None unless guard recorded rows for it."""
    recorded = read_record(log)
    if recorded is None:
        return None
    if not recorded.sealed:
        return f"there is no log at {log}, and guard's record of its end ({record_path(log)}) does not verify"
    return (
        f"there is no log at {log}, but guard recorded #{recorded.last_id} as its last row ({record_path(log)}): the file was "
        "deleted or moved"
    )


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
    the log continues ``recorded``, its end as recorded outside it (read it before the log: :func:`read_record`).

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
