"""The approval requests a waiting call holds open, and the answers people give, in guard's state directory.

One SQLite file per user (``$XDG_STATE_HOME/guard/approvals.db``), where the
self-protection rule keeps the agent out. Each answer is sealed with the user's
secret (:mod:`guard.storage.secret`) over the request's id, the answer and who
gave it: the waiting call believes only a sealed answer, so a row written by
anything that cannot read the secret (the agent, if it ever reached the file)
approves nothing. Standard library only.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from guard.core.settings import user_dir
from guard.storage.database import Migrations, connect
from guard.storage.secret import seal, verify

__all__ = ["APPROVED", "DENIED", "EXPIRED", "PENDING", "Answer", "ApprovalRequest", "ApprovalStore", "default_path"]

PENDING, APPROVED, DENIED, EXPIRED = "pending", "approved", "denied", "expired"
_PURPOSE = "approval-answer"

migration = Migrations("_guard_approvals_migrations")


@migration
def m001_requests(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE requests (
            id TEXT PRIMARY KEY,
            created REAL NOT NULL,
            expires REAL NOT NULL,
            status TEXT NOT NULL,
            rules TEXT NOT NULL,
            tool TEXT,
            input TEXT NOT NULL,
            session TEXT,
            cwd TEXT,
            machine TEXT,
            user TEXT,
            answered_by TEXT,
            answered_via TEXT,
            answered_at REAL,
            seal TEXT
        )"""
    )
    db.execute("CREATE INDEX requests_created ON requests (created)")


def default_path() -> Path:
    return user_dir("state") / "approvals.db"


@dataclass(slots=True)
class ApprovalRequest:
    """One held call: what it would do, which rules asked, and until when it waits."""

    id: str
    created: float
    expires: float
    status: str
    rules: list[dict[str, Any]]
    tool: str | None
    input: object
    session: str | None
    cwd: str | None
    machine: str | None
    user: str | None
    answered_by: str | None = None
    answered_via: str | None = None
    answered_at: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Answer:
    """A person's answer, as the waiting call reads it (sealed, or it is no answer)."""

    status: str
    by: str
    via: str
    at: float


def new_id() -> str:
    """Ten hex digits: short enough to type (``guard approve 3f9c0a17be``), never guessed in the time a request waits."""
    return secrets.token_hex(5)


class ApprovalStore:
    """The requests file; each call opens, does its one thing, and closes (many processes share it)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()

    def _db(self) -> sqlite3.Connection:
        return connect(self.path, migration)

    def open_request(self, request: ApprovalRequest) -> None:
        db = self._db()
        try:
            db.execute(
                "INSERT INTO requests (id, created, expires, status, rules, tool, input, session, cwd, machine, user)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    request.id,
                    request.created,
                    request.expires,
                    PENDING,
                    json.dumps(request.rules),
                    request.tool,
                    json.dumps(request.input, ensure_ascii=False, default=str),
                    request.session,
                    request.cwd,
                    request.machine,
                    request.user,
                ),
            )
        finally:
            db.close()

    def get(self, request_id: str) -> ApprovalRequest | None:
        if not self.path.exists():
            return None
        db = self._db()
        try:
            row = db.execute(
                "SELECT id, created, expires, status, rules, tool, input, session, cwd, machine, user, answered_by, answered_via,"
                " answered_at FROM requests WHERE id = ?",
                (request_id,),
            ).fetchone()
        finally:
            db.close()
        return _request(row) if row else None

    def listed(self, *, pending_only: bool = False, limit: int = 50) -> list[ApprovalRequest]:
        """The newest requests (pending ones only, if asked), newest first; a pending one past its time shows as expired."""
        if not self.path.exists():
            return []
        db = self._db()
        try:
            where = "WHERE status = 'pending' AND expires > ?" if pending_only else "WHERE ? IS NOT NULL"
            rows = db.execute(
                "SELECT id, created, expires, status, rules, tool, input, session, cwd, machine, user, answered_by, answered_via,"
                f" answered_at FROM requests {where} ORDER BY created DESC LIMIT ?",
                (time.time(), limit),
            ).fetchall()
        finally:
            db.close()
        return [_request(row) for row in rows]

    def answer(self, request_id: str, status: str, *, by: str, via: str) -> ApprovalRequest:
        """Record a person's answer (``approved`` or ``denied``); ValueError when there is no such pending request."""
        assert status in (APPROVED, DENIED)
        now = time.time()
        mac = seal(_PURPOSE, request_id, status, by, via)
        db = self._db()
        try:
            db.execute("BEGIN IMMEDIATE")
            row = db.execute("SELECT status, expires FROM requests WHERE id = ?", (request_id,)).fetchone()
            if row is None:
                db.execute("ROLLBACK")
                raise ValueError(f"there is no approval request {request_id}")
            if row[0] != PENDING or row[1] <= now:
                db.execute("ROLLBACK")
                raise ValueError(
                    f"approval request {request_id} is {row[0] if row[0] != PENDING else EXPIRED} already: no call waits on it"
                )
            db.execute(
                "UPDATE requests SET status = ?, answered_by = ?, answered_via = ?, answered_at = ?, seal = ? WHERE id = ?",
                (status, by, via, now, mac, request_id),
            )
            db.execute("COMMIT")
        finally:
            db.close()
        found = self.get(request_id)
        assert found is not None
        return found

    def answered(self, request_id: str) -> Answer | None:
        """The request's sealed answer, or None while it waits (an answer whose seal fails is no answer)."""
        db = sqlite3.connect(self.path, timeout=5.0)
        try:
            row = db.execute(
                "SELECT status, answered_by, answered_via, answered_at, seal FROM requests WHERE id = ?", (request_id,)
            ).fetchone()
        finally:
            db.close()
        if row is None or row[0] not in (APPROVED, DENIED):
            return None
        status, by, via, at, mac = row
        if not verify(mac, _PURPOSE, request_id, status, str(by), str(via)):
            return None
        return Answer(status, str(by), str(via), float(at))

    def expire(self, request_id: str) -> Answer | None:
        """The wait is over: mark the request expired, so a later ``guard approve`` says so instead of approving nothing.

        An answer given since the last look wins (the same transaction checks): it is returned, and the call gets it.
        """
        db = self._db()
        try:
            expired = db.execute(
                "UPDATE requests SET status = ? WHERE id = ? AND status = ?", (EXPIRED, request_id, PENDING)
            ).rowcount
        finally:
            db.close()
        return None if expired else self.answered(request_id)


def _request(row: tuple[Any, ...]) -> ApprovalRequest:
    status = row[3]
    if status == PENDING and row[2] <= time.time():
        status = EXPIRED
    return ApprovalRequest(row[0], row[1], row[2], status, json.loads(row[4]), row[5], json.loads(row[6]), *row[7:])
