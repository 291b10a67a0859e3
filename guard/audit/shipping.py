"""Shipping the audit log to the team's stores: the local log is the queue, and no decision ever waits for it.

Every decision's row is written to the local SQLite log first, as always. A
target (the Postgres audit store, ``audit.url``; an OpenTelemetry collector,
``audit.otlp``) keeps its position in that log (``audit_shipping``: the last id
it acknowledged), and a shipper sends what lies past it, in batches, moving the
position only once the target took the batch. So a store that is down loses
nothing: rows wait in the local log and go once it is back, and ``guard log
ship`` / ``guard doctor`` say how many wait and since when.

Who ships, off every decision's path:

- ``guard hook`` is one process per tool call. After it has written its answer
  it hands its row over (:mod:`guard.audit.handoff`): it forks, and the child
  ships and lingers a moment for the next rows (:func:`linger`), while the parent
  exits at once. A child holds the log's ship lock, so one shipper runs per log;
  a hook that finds it held, or finds the store backing off after a failure (the
  ``.ship-after`` marker's mtime), does not fork at all.
- ``guard serve`` and a long-lived :class:`~guard.runtime.gate.Gate`: their audit
  writer thread (:mod:`guard.audit.writer`) wakes a shipper thread after each batch.
- ``guard log ship``: now, in the foreground (cron, systemd timers, tests).

What a row carries beyond the local columns: the machine, the user, the local
log's id (a random id made with the file, so a deleted or replaced log shows up
centrally as a new log beside the old one's last report) and the row's chain
position (its id and seal, :mod:`guard.audit.chain`), so rows deleted before they
were sent are a gap in the store. Standard library only at import: the targets'
clients load in the shipper.
"""

from __future__ import annotations

import fcntl
import getpass
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from guard.audit.handoff import lock_path, marker_path, target_names, without_password
from guard.core.logs import LazyLogger
from guard.core.record import FrozenRecord

__all__ = [
    "BATCH",
    "SHIPPED",
    "Identity",
    "Shipper",
    "Target",
    "TargetState",
    "create",
    "digest",
    "identity",
    "linger",
    "ship",
    "states",
]

log = LazyLogger("guard.audit")

#: Rows one request sends at most.
BATCH = 500
#: How long a forked shipper waits for more rows after the last it sent (a session's calls come in bursts).
LINGER_S = 2.0
#: Seconds before the first retry after a failure; doubled each time up to :data:`MOST_BACKOFF_S`.
FIRST_BACKOFF_S, MOST_BACKOFF_S = 5.0, 300.0
#: A local row's fields that a target receives, in order (the store's columns of the same names).
SHIPPED = (
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
    "details",
    "client",
    "judged",
    "warnings",
    "chain",
)
_COLUMNS = ("id", *SHIPPED)


def create(db: sqlite3.Connection) -> None:
    """The log's own id and each target's position (a migration step; a new id per file, so a new file is a new log)."""
    db.execute(
        "CREATE TABLE audit_identity (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), log_id TEXT NOT NULL, created REAL NOT NULL)"
    )
    db.execute("INSERT INTO audit_identity VALUES (1, ?, ?)", (uuid.uuid4().hex, time.time()))
    db.execute(
        "CREATE TABLE audit_shipping (target TEXT PRIMARY KEY, sent_id INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0,"
        " next_try REAL NOT NULL DEFAULT 0, last_error TEXT, last_sent REAL, failing_since REAL)"
    )


class Identity(FrozenRecord):
    """Whose rows these are: the machine, the user, the local log's id and path, and the id of its newest row."""

    __slots__ = ("machine", "user", "log_id", "log_path", "created", "last_id")
    machine: str
    user: str
    log_id: str
    log_path: str
    created: float
    last_id: int

    def __init__(self, machine: str, user: str, log_id: str, log_path: str, created: float, last_id: int) -> None:
        self._assign(locals())


class Target(Protocol):
    """Where rows go: ``send`` takes a batch or raises (the rows stay queued); ``close`` ends its connection."""

    name: str

    def send(self, rows: list[dict[str, Any]], source: Identity) -> None: ...

    def close(self) -> None: ...


def _targets(settings: Any) -> list[Target]:
    """The target clients (their libraries load here, in the shipper)."""
    found: list[Target] = []
    if settings.audit_url:
        from guard.audit.postgres import PostgresTarget

        found.append(PostgresTarget(settings.audit_url, "postgres:" + without_password(settings.audit_url)))
    if settings.audit_otlp:
        from guard.audit.otlp import OtlpTarget

        found.append(OtlpTarget(settings.audit_otlp, "otlp:" + without_password(settings.audit_otlp)))
    return found


def _open(path: Path) -> sqlite3.Connection:
    from guard.audit import migration
    from guard.storage.database import connect

    return connect(path, migration)


def identity(db: sqlite3.Connection, path: Path) -> Identity:
    log_id, created = db.execute("SELECT log_id, created FROM audit_identity").fetchone()
    last = int(db.execute("SELECT coalesce(max(id), 0) FROM decisions").fetchone()[0])
    return Identity(socket.gethostname(), getpass.getuser(), str(log_id), str(path), float(created), last)


def digest(row: dict[str, Any]) -> str:
    """What a row holds, as a short digest: two rows under one id that differ in anything differ here (no secret needed)."""
    import hashlib

    return hashlib.sha256(json.dumps([row[name] for name in _COLUMNS], default=str).encode()).hexdigest()[:32]


def _position(db: sqlite3.Connection, target: str) -> tuple[int, int, float]:
    """(sent id, failed attempts, next try) of ``target``, made at 0 the first time.

    The position is believed only while the row at it is still the row that was sent: a log emptied or cut back and
    numbered again (ids are reused after the highest row is deleted) would put its next rows at or below the position,
    where no shipper looks. Then the whole log is sent again: what the store has counts once, what changed arrives beside
    it (the store reports the row ids it got twice, :meth:`guard.audit.postgres.AuditStore.gaps`).
    """
    db.execute("INSERT OR IGNORE INTO audit_shipping (target) VALUES (?)", (target,))
    sent, attempts, next_try, sent_digest = db.execute(
        "SELECT sent_id, attempts, next_try, sent_digest FROM audit_shipping WHERE target = ?", (target,)
    ).fetchone()
    if sent and sent_digest is not None:
        at = _rows(db, int(sent) - 1, limit=1)
        if not at or int(at[0]["id"]) != int(sent) or digest(at[0]) != sent_digest:
            log.warning(
                "audit store %s: row #%d is no longer the row that was sent (the local log was rewritten): sending the log again",
                target,
                sent,
            )
            sent = 0
    return int(sent), int(attempts), float(next_try)


def _rows(db: sqlite3.Connection, after: int, limit: int = BATCH) -> list[dict[str, Any]]:
    cursor = db.execute(f"SELECT {', '.join(_COLUMNS)} FROM decisions WHERE id > ? ORDER BY id LIMIT ?", (after, limit))
    return [dict(zip(_COLUMNS, row)) for row in cursor.fetchall()]


@contextmanager
def _ship_lock(path: Path) -> Iterator[bool]:
    """The log's ship lock, if no other shipper holds it (True), else False at once."""
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _backoff(attempts: int) -> float:
    return min(FIRST_BACKOFF_S * 2.0 ** max(attempts - 1, 0), MOST_BACKOFF_S)


def _ship_target(db: sqlite3.Connection, target: Target, source: Identity, *, force: bool) -> int:
    """Send every row past ``target``'s position; the rows sent. On a failure the position stays and the back-off grows."""
    sent_id, attempts, next_try = _position(db, target.name)
    if not force and time.time() < next_try:
        return 0
    shipped = 0
    while True:
        rows = _rows(db, sent_id)
        if not rows:
            break
        try:
            target.send(rows, source)
        except Exception as exc:  # the store is down, refuses us, or the library failed: the rows stay queued
            attempts += 1
            wait = _backoff(attempts)
            error = f"{type(exc).__name__}: {exc}"[:1000]
            db.execute(
                "UPDATE audit_shipping SET attempts = ?, next_try = ?, last_error = ?, failing_since = coalesce(failing_since, ?)"
                " WHERE target = ?",
                (attempts, time.time() + wait, error, time.time(), target.name),
            )
            log.warning(
                "audit store %s: %d row(s) wait in the local log (retry in %.0fs): %s",
                target.name,
                source.last_id - sent_id,
                wait,
                error,
            )
            raise
        sent_id = int(rows[-1]["id"])
        shipped += len(rows)
        db.execute(
            "UPDATE audit_shipping SET sent_id = ?, sent_digest = ?, attempts = 0, next_try = 0, last_error = NULL, last_sent = ?,"
            " failing_since = NULL WHERE target = ?",
            (sent_id, digest(rows[-1]), time.time(), target.name),
        )
    return shipped


def ship(
    path: Path, settings: Any, *, force: bool = False, targets: list[Target] | None = None
) -> dict[str, int | str]:
    """Send the unsent rows of the log at ``path`` to every target of ``settings``: target name → rows sent, or the error.

    ``force`` tries a target that is backing off. Nothing is sent while another shipper holds the log's lock
    (``{"": "busy"}``). The back-off marker is set to the soonest retry, or removed when every target is caught up.
    """
    if not path.exists():
        return {}
    results: dict[str, int | str] = {}
    with _ship_lock(path) as mine:
        if not mine:
            return {"": "busy"}
        db = _open(path)
        chosen = _targets(settings) if targets is None else targets
        try:
            source = identity(db, path)
            for target in chosen:
                try:
                    results[target.name] = _ship_target(db, target, source, force=force)
                except Exception as exc:
                    results[target.name] = f"{type(exc).__name__}: {exc}"
            _set_marker(db, path)
        finally:
            for target in chosen:
                target.close()
            db.close()
    return results


def _set_marker(db: sqlite3.Connection, path: Path) -> None:
    due = db.execute("SELECT max(next_try) FROM audit_shipping WHERE attempts > 0").fetchone()[0]
    marker = marker_path(path)
    if due is None:
        marker.unlink(missing_ok=True)
        return
    marker.touch()
    os.utime(marker, (float(due), float(due)))


def _pending(path: Path, names: list[str]) -> bool:
    """Whether some target has rows past its position (a query a lingering shipper repeats)."""
    try:
        db = sqlite3.connect(path, timeout=1.0)
    except sqlite3.Error:
        return False
    try:
        last = db.execute("SELECT coalesce(max(id), 0) FROM decisions").fetchone()[0]
        positions = dict(db.execute("SELECT target, sent_id FROM audit_shipping").fetchall())
    except sqlite3.Error:
        return True  # a log from before shipping: the shipper's own connection migrates it
    finally:
        db.close()
    return any(int(positions.get(name, 0)) < int(last) for name in names)


def linger(path: Path, settings: Any) -> None:
    """The forked shipper's life: ship, wait for more rows a little, ship again; after letting go, look once more."""
    names = target_names(settings)
    while True:
        results = ship(path, settings)
        if results.get("") == "busy" or any(isinstance(value, str) for value in results.values()):
            return  # another shipper has it, or a target is failing (it backs off; the marker spares the next hooks)
        quiet_until = time.monotonic() + LINGER_S
        while time.monotonic() < quiet_until and not _pending(path, names):
            time.sleep(0.1)
        if not _pending(path, names):
            return  # the lock is already let go: a row written from now on finds no shipper and forks its own


def _spawned() -> None:
    """``python -m guard.audit.shipping``: what :func:`_spawn` started, its work on stdin."""
    import sys

    from guard.core.settings import Settings

    work = json.loads(sys.stdin.buffer.read())
    linger(Path(work["path"]), Settings.from_dict(work["settings"]))


class Shipper:
    """A thread that ships whenever it is woken (after each audit batch) and retries a failing target when it is due."""

    def __init__(self, settings: Any, audit_path: Path) -> None:
        self.settings = settings
        self.path = audit_path
        self._wake = threading.Event()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="guard-audit-ship", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        delay: float | None = None
        while not self._stop:
            self._wake.wait(delay)
            self._wake.clear()
            if self._stop:
                return
            try:
                results = ship(self.path, self.settings)
            except Exception:
                log.warning("shipping the audit log failed", exc_info=True)
                results = {"": "failed"}
            # retry a failing target when it is due, and a busy lock soon: a forked hook shipper holds it for a moment
            delay = FIRST_BACKOFF_S if any(isinstance(value, str) for value in results.values()) else None

    def close(self, timeout: float = 2.0) -> None:
        """A last attempt for what is queued (at most ``timeout`` s), then stop; what is left waits in the local log."""
        self._stop = True
        self._wake.set()
        self._thread.join(timeout)
        finished = threading.Thread(target=lambda: ship(self.path, self.settings), daemon=True)
        finished.start()
        finished.join(timeout)


class TargetState(FrozenRecord):
    """One target's queue, for a person: rows waiting, since when it fails and why."""

    __slots__ = ("target", "sent_id", "last_id", "last_sent", "failing_since", "last_error", "next_try")
    target: str
    sent_id: int
    last_id: int
    last_sent: float | None
    failing_since: float | None
    last_error: str | None
    next_try: float

    def __init__(
        self,
        target: str,
        sent_id: int,
        last_id: int,
        last_sent: float | None,
        failing_since: float | None,
        last_error: str | None,
        next_try: float,
    ) -> None:
        self._assign(locals())

    @property
    def waiting(self) -> int:
        return max(self.last_id - self.sent_id, 0)

    def describe(self) -> str:
        when: Callable[[float], str] = lambda t: time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))  # noqa: E731
        text = f"{self.target}: {self.waiting} row(s) waiting (sent up to #{self.sent_id} of #{self.last_id})"
        if self.last_error:
            text += f"; failing since {when(self.failing_since or 0)}: {self.last_error}"
        elif self.last_sent:
            text += f"; last sent {when(self.last_sent)}"
        return text


def states(path: Path, settings: Any) -> list[TargetState]:
    """Each target's queue in the log at ``path`` (a target never tried has sent nothing)."""
    names = target_names(settings)
    if not names or not path.exists():
        return [TargetState(name, 0, 0, None, None, None, 0.0) for name in names]
    db = _open(path)
    try:
        last = int(db.execute("SELECT coalesce(max(id), 0) FROM decisions").fetchone()[0])
        found = {
            row[0]: row[1:]
            for row in db.execute(
                "SELECT target, sent_id, last_sent, failing_since, last_error, next_try FROM audit_shipping"
            )
        }
    finally:
        db.close()
    out = []
    for name in names:
        sent, last_sent, failing, error, next_try = found.get(name, (0, None, None, None, 0.0))
        out.append(TargetState(name, int(sent), last, last_sent, failing, error, float(next_try or 0.0)))
    return out


if __name__ == "__main__":  # pragma: no cover  (run by _spawn)
    _spawned()
