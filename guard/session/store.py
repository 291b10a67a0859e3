"""Where the gate keeps each session's user messages and tool calls: a small SQLite file in the user's state directory.

Keyed by the client's session id. Only what a judge may be shown is kept: the
newest :data:`~guard.session.context.MAX_USER_MESSAGES` messages and
:data:`~guard.session.context.MAX_ACTIONS` actions of a session (older rows are
deleted as new ones arrive) and nothing older than :data:`RETENTION_S`. The file
lives outside the project (``$XDG_STATE_HOME/guard/sessions.db``, else
``~/.local/state/guard/sessions.db``): the guarded agent works in the project tree
and must not be able to write the user's requests for it. Every row is sealed
(:mod:`guard.trust`) and a row whose seal does not verify is not shown, so an
agent that reaches the file still cannot forge a request; deleting rows is what
the self-protection rule (which covers guard's state directory) is there to stop.

Standard library only: ``guard hook`` records a user turn on its fast path.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from guard.session.context import MAX_ACTIONS, MAX_USER_MESSAGES, Action, SessionContext
from guard.trust import seal, verify

__all__ = ["RETENTION_S", "SessionStore", "SqliteSessionStore", "open_session_store", "session_db_path"]

RETENTION_S = 7 * 86400.0
_LIMITS = {"user": MAX_USER_MESSAGES, "action": MAX_ACTIONS}
_PURPOSE = "session"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS session_entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    at REAL NOT NULL,
    mac TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS session_entries_by_session ON session_entries (session_id, kind, seq);
CREATE INDEX IF NOT EXISTS session_entries_by_age ON session_entries (at);
"""


class SessionStore(Protocol):
    """What the gate needs of a session store (a sealed store can stand in at merge time)."""

    def add_user_message(self, session_id: str, text: str) -> None: ...

    def add_action(self, session_id: str, action: Action) -> None: ...

    def context(self, session_id: str) -> SessionContext: ...


def session_db_path(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/guard/sessions.db``, else ``~/.local/state/guard/sessions.db``."""
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "guard" / "sessions.db"


class SqliteSessionStore:
    """One SQLite file in WAL mode: concurrent hooks of one session append without losing rows."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = path
        self._db = sqlite3.connect(str(path), timeout=5.0, isolation_level=None)
        self._db.execute("PRAGMA busy_timeout = 5000")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.executescript(_SCHEMA)

    def _add(self, session_id: str, kind: str, body: str) -> None:
        now = time.time()
        mac = seal(_PURPOSE, session_id, kind, body, repr(now))  # TrustError (no secret): nothing is recorded
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT INTO session_entries (session_id, kind, body, at, mac) VALUES (?, ?, ?, ?, ?)", (session_id, kind, body, now, mac))
            self._db.execute(
                "DELETE FROM session_entries WHERE session_id = ? AND kind = ? AND seq NOT IN "
                "(SELECT seq FROM session_entries WHERE session_id = ? AND kind = ? ORDER BY seq DESC LIMIT ?)",
                (session_id, kind, session_id, kind, _LIMITS[kind]),
            )
            if kind == "user":  # once a turn is often enough to forget old sessions
                self._db.execute("DELETE FROM session_entries WHERE at < ?", (now - RETENTION_S,))

    def add_user_message(self, session_id: str, text: str) -> None:
        self._add(session_id, "user", text)

    def add_action(self, session_id: str, action: Action) -> None:
        self._add(session_id, "action", json.dumps(action.to_dict(), ensure_ascii=False))

    def context(self, session_id: str) -> SessionContext:
        rows = [
            (kind, body)
            for kind, body, at, mac in self._db.execute(
                "SELECT kind, body, at, mac FROM session_entries WHERE session_id = ? AND at >= ? ORDER BY seq", (session_id, time.time() - RETENTION_S)
            )
            if verify(mac, _PURPOSE, session_id, kind, body, repr(at))
        ]
        messages = tuple(body for kind, body in rows if kind == "user")
        actions = tuple(_read_action(body) for kind, body in rows if kind == "action")
        return SessionContext(messages, actions).bounded()

    def close(self) -> None:
        self._db.close()


def _read_action(body: str) -> Action:
    data = json.loads(body)
    return Action(data["tool_name"], data["input"], data.get("decision"))


def open_session_store(env: Mapping[str, str] | None = None) -> SqliteSessionStore:
    return SqliteSessionStore(session_db_path(env))
