"""Where the gate keeps each session's tool calls and its decisions on them: a small SQLite file in the user's state directory.

Keyed by the client's session id. Only what a judge may be shown is kept: the
newest :data:`~guard.session.context.MAX_ACTIONS` actions of a session (older
rows are deleted as new ones arrive) and nothing older than :data:`RETENTION_S`.
No user message is ever kept here: consent comes only from the client's own
transcript (:mod:`guard.session.transcript`), since whoever can run ``guard hook``
can send an event claiming to be the user. For a client with a transcript, the
store only adds guard's decision to each call (by ``tool_use_id``); for the
others its actions are the history. The file lives outside the project
(``$XDG_STATE_HOME/guard/sessions.db``, else ``~/.local/state/guard/sessions.db``).
Every row is sealed (:mod:`guard.storage.secret`) and a row whose seal does not verify is
not shown; deleting rows is what the self-protection rule (which covers guard's
state directory) is there to stop.

Standard library only: ``guard hook`` records a tool call on its fast path.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from guard.session.context import MAX_ACTIONS, Action, SessionContext
from guard.storage.database import open_state_file, state_file
from guard.storage.secret import seal, verify

__all__ = ["RETENTION_S", "SessionStore", "SqliteSessionStore", "open_session_store", "session_db_path"]

RETENTION_S = 7 * 86400.0
_LIMITS = {"action": MAX_ACTIONS}
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
    """What the gate needs of a session store."""

    def add_action(self, session_id: str, action: Action, tool_use_id: str | None = None) -> None: ...

    def context(self, session_id: str) -> SessionContext: ...

    def decisions(self, session_id: str) -> dict[str, str | None]: ...


def session_db_path(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/guard/sessions.db``, else ``~/.local/state/guard/sessions.db``."""
    return state_file("sessions.db", env)


class SqliteSessionStore:
    """One SQLite file in WAL mode: concurrent hooks of one session append without losing rows."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = open_state_file(path, _SCHEMA)

    def _add(self, session_id: str, kind: str, body: str) -> None:
        now = time.time()
        mac = seal(_PURPOSE, session_id, kind, body, repr(now))  # TrustError (no secret): nothing is recorded
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT INTO session_entries (session_id, kind, body, at, mac) VALUES (?, ?, ?, ?, ?)",
                (session_id, kind, body, now, mac),
            )
            self._db.execute(
                "DELETE FROM session_entries WHERE session_id = ? AND kind = ? AND seq NOT IN "
                "(SELECT seq FROM session_entries WHERE session_id = ? AND kind = ? ORDER BY seq DESC LIMIT ?)",
                (session_id, kind, session_id, kind, _LIMITS[kind]),
            )
            if (
                self._db.execute("SELECT COUNT(*) FROM session_entries WHERE session_id = ?", (session_id,)).fetchone()[
                    0
                ]
                == 1
            ):
                # a session's first row is often enough to forget old sessions
                self._db.execute("DELETE FROM session_entries WHERE at < ?", (now - RETENTION_S,))

    def add_action(self, session_id: str, action: Action, tool_use_id: str | None = None) -> None:
        body = action.to_dict()
        if tool_use_id:
            body["tool_use_id"] = tool_use_id
        self._add(session_id, "action", json.dumps(body, ensure_ascii=False))

    def _bodies(self, session_id: str) -> list[dict[str, Any]]:
        """The session's action rows that verify, oldest first (rows of another kind, like an older guard's prompts, are never read)."""
        return [
            json.loads(body)
            for body, at, mac in self._db.execute(
                "SELECT body, at, mac FROM session_entries WHERE session_id = ? AND kind = 'action' AND at >= ? ORDER BY seq",
                (session_id, time.time() - RETENTION_S),
            )
            if verify(mac, _PURPOSE, session_id, "action", body, repr(at))
        ]

    def context(self, session_id: str) -> SessionContext:
        """The session's recorded actions (and never a user message)."""
        calls: dict[object, dict[str, Any]] = {}
        for i, data in enumerate(self._bodies(session_id)):
            call = calls.setdefault(
                data.get("tool_use_id") or i, data
            )  # a later row on the same call (a denial) updates it in place
            call["decision"] = data.get("decision")
        actions = tuple(Action(data["tool_name"], data["input"], data.get("decision")) for data in calls.values())
        return SessionContext((), actions).bounded()

    def decisions(self, session_id: str) -> dict[str, str | None]:
        """guard's decision on each recorded call, by the client's ``tool_use_id``."""
        return {
            data["tool_use_id"]: data.get("decision") for data in self._bodies(session_id) if data.get("tool_use_id")
        }

    def close(self) -> None:
        self._db.close()


def open_session_store(env: Mapping[str, str] | None = None) -> SqliteSessionStore:
    return SqliteSessionStore(session_db_path(env))
