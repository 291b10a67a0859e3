"""The audit log's end, recorded outside the log as well: a log emptied, replaced or cut short is noticed.

The sealed head inside ``audit.db`` names the log's last row, so rows cut off the end
are found; but whoever replaces or empties the whole file replaces that head with it,
and the new log verifies as intact. So every append also records the last row's id
and seal here, in guard's state folder (``audit-heads/<hash of the log's path>``, the
folder the default log lives in, under the same protection: the client's sandbox
denies the agent writes there), sealed under guard's secret. A log that is shorter
than this record, or whose row of that id is not the one recorded, did not come from
guard's appends alone: ``guard log verify``, ``guard doctor`` and ``guard view`` say so,
and the next append restarts the chain saying why (its ids continue after the record).

What it cannot see: the record and the log both removed, or both put back from an
older copy. Where the agent can write guard's state folder (the unsandboxed level)
it can do that; only rows kept elsewhere (the central audit store) survive it.
Standard library only: it runs on the ``guard hook`` path.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from functools import lru_cache
from pathlib import Path

from guard.core.record import FrozenRecord
from guard.storage.secret import TrustError, seal, verify

__all__ = ["HeadRecord", "break_of", "missing_log", "read", "record_path", "write"]

_PURPOSE = "audit-record"
#: Bytes a record may take (a 64-hex seal, a 20-digit id, a 64-hex chain, and room to spare).
_MOST = 512


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
    from guard.core.settings import user_dir

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
        sealed = verify(mac, _PURPOSE, str(log.absolute()), body)
    except TrustError:
        sealed = False
    return found if sealed else HeadRecord(found.last_id, found.chain, sealed=False)


def read(log: Path) -> HeadRecord | None:
    """The record for the log at ``log``: None when guard never recorded one; ``sealed=False`` when it was changed."""
    import fcntl

    try:
        fd = os.open(record_path(log), os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError:
        return HeadRecord(0, "", sealed=False)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # a writer rewrites it in place, under LOCK_EX
        data = os.pread(fd, _MOST, 0)
    except OSError:
        return HeadRecord(0, "", sealed=False)
    finally:
        os.close(fd)
    return _parse(log, data) if data else None


def write(log: Path, last_id: int, chain: str) -> None:
    """Record ``last_id`` and its seal as the log's end, unless a later row is recorded already (appends race after commit).

    Rewritten in place under an exclusive lock, a few system calls (a rename costs a
    millisecond on some file systems, on every tool call). Never raises: the rows are in
    the log already, and a record that could not be written only makes the next check
    less strict (a failure is noted like a failed audit write).
    """
    import fcntl

    path = record_path(log)
    try:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except FileNotFoundError:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = os.pread(fd, _MOST, 0)
            # a later row recorded already (an append that committed after this one) stands, unless it is forged
            if data and _parse(log, data, check=False).last_id >= last_id and _parse(log, data).sealed:
                return
            body = _body(last_id, chain)
            record = f"{seal(_PURPOSE, str(log.absolute()), body)}\n{body}".encode("ascii")
            os.pwrite(fd, record, 0)
            if len(data) > len(record):
                os.ftruncate(fd, len(record))
        finally:
            os.close(fd)
    except (OSError, TrustError, UnicodeEncodeError) as exc:
        from guard.audit import recovery

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
    recorded = read(log)
    if recorded is None:
        return None
    if not recorded.sealed:
        return f"there is no log at {log}, and guard's record of its end ({record_path(log)}) does not verify"
    return (
        f"there is no log at {log}, but guard recorded #{recorded.last_id} as its last row ({record_path(log)}): the file was "
        "deleted or moved"
    )
