"""The gate's side of session context: show it to the rules that read it, and record each turn after the decision.

Only a gate whose hooks include a session-aware rule keeps a history (others
pay nothing). What is recorded, keyed by the client's ``session_id``:

- ``user_turn`` (Claude ``UserPromptSubmit`` and its equivalents): the prompt, unless guard blocked it;
- ``pre_tool_use``: the tool, its input (as the call will run, after any rewrite) and guard's decision.

A session context arriving on a payload is never trusted: :meth:`SessionRecorder.attach`
replaces it with the store's (or removes it when no matching rule reads it), so
whoever can send an event cannot claim what the user asked for.

Standard library only: this runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from guard.core.session import SESSION_FIELD, reads_session
from guard.session.context import Action, SessionContext

if TYPE_CHECKING:
    from guard.core.decision import Decision
    from guard.core.spec import HookSpec
    from guard.session.store import SessionStore

__all__ = ["SessionRecorder"]

log = logging.getLogger("guard.session")


def _default_store(env: Mapping[str, str]) -> SessionStore:
    from guard.session.store import open_session_store

    return open_session_store(env)


class SessionRecorder:
    """Attaches session context to payloads and records turns, for one gate."""

    def __init__(self, env: Mapping[str, str], open_store: Callable[[Mapping[str, str]], SessionStore] = _default_store) -> None:
        self.env = env
        self._open_store = open_store
        self._store: SessionStore | None = None

    def store(self) -> SessionStore:
        if self._store is None:
            self._store = self._open_store(self.env)
        return self._store

    def attach(self, payload: dict[str, Any], specs: Iterable[HookSpec]) -> str | None:
        """Put the session's context on ``payload`` when a matching rule reads it; a warning when it could not be read.

        An unreadable store shows the rule an empty session: the user's direction
        is then absent, which can only make a session-aware rule stricter.
        """
        payload.pop(SESSION_FIELD, None)
        if not any(reads_session(spec) for spec in specs):
            return None
        session_id = payload.get("session_id")
        context = SessionContext()
        warning = None
        if isinstance(session_id, str) and session_id:
            try:
                context = self.store().context(session_id)
            except Exception as exc:  # the store is optional; the rule still runs, on less
                log.warning("session store read failed", exc_info=True)
                warning = f"session context unavailable ({type(exc).__name__}: {exc}): session-aware rules judged without it"
        payload[SESSION_FIELD] = context.to_dict()
        return warning

    def record(self, payload: dict[str, Any], event: str, decision: Decision) -> None:
        """Remember this turn for later judgements of the session; never changes the decision."""
        session_id = payload.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            return
        try:
            if event == "user_turn" and isinstance(payload.get("prompt"), str) and decision.decision != "deny":
                self.store().add_user_message(session_id, payload["prompt"])
            elif event == "pre_tool_use" and isinstance(payload.get("tool_name"), str):
                tool_input = decision.updated_input or payload.get("tool_input") or {}
                self.store().add_action(session_id, Action.of(payload["tool_name"], tool_input, decision.decision))
        except Exception:  # recording must never change or delay a decision beyond the write
            log.warning("session store write failed", exc_info=True)
