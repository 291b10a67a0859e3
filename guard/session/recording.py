"""The gate's side of session context: show it to the rules that read it, and record each tool call after the decision.

Only a gate whose hooks include a session-aware rule keeps a history (others
pay nothing). What a rule is shown:

- the user's messages: only from the client's own transcript
  (:mod:`guard.session.transcript`); never from an event, since any process the
  agent starts can send a ``UserPromptSubmit``. No transcript guard can verify:
  no user message (``details.session.source`` says why);
- the earlier actions: the transcript's tool calls (so the history covers what
  happened before guard first saw the session), each with guard's decision when
  guard recorded one; without a transcript, the calls guard recorded.

What is recorded, keyed by the client's ``session_id``: each ``pre_tool_use``
call (its ``tool_use_id``, the tool, its input as it will run, after any rewrite,
and guard's decision), and each ``permission_denied`` (Claude Code's auto mode
or permission rules denied a call: the same ``tool_use_id`` is then recorded as
denied, so a rule sees that the agent was already refused). A session context arriving on a payload is never trusted:
:meth:`SessionRecorder.attach` replaces it (or removes it when no matching rule
reads it).

Standard library only: this runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from guard.core.session import SESSION_FIELD, reads_session
from guard.protection.client_transcripts import client_transcript
from guard.session.context import Action, SessionContext
from guard.session.transcript import read_turns

if TYPE_CHECKING:
    from guard.core.decision import Decision
    from guard.core.spec import HookSpec
    from guard.session.store import SessionStore

__all__ = ["NO_TRANSCRIPT", "SessionRecorder"]

log = logging.getLogger("guard.session")

#: Events that record a tool call: guard's own judgement, and the client denying a call after it (its decision replaces guard's).
_RECORDED = frozenset({"pre_tool_use", "permission_denied"})

NO_TRANSCRIPT = "nowhere: no transcript at the client's own location, so no user message is believed"


def _default_store(env: Mapping[str, str]) -> SessionStore:
    from guard.session.store import open_session_store

    return open_session_store(env)


class SessionRecorder:
    """Attaches session context to payloads and records turns, for one gate."""

    def __init__(
        self, env: Mapping[str, str], open_store: Callable[[Mapping[str, str]], SessionStore] = _default_store
    ) -> None:
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
        transcript = client_transcript(payload.get("transcript_path"), self.env)
        if isinstance(session_id, str) and session_id:
            try:
                context = self._context(session_id, transcript, payload.get("tool_use_id"))
            except Exception as exc:  # the store is optional; the rule still runs, on less
                log.warning("session store read failed", exc_info=True)
                warning = (
                    f"session context unavailable ({type(exc).__name__}: {exc}): session-aware rules judged without it"
                )
        payload[SESSION_FIELD] = context.to_dict()
        return warning

    def _context(self, session_id: str, transcript: Any, pending: object) -> SessionContext:
        if transcript is None:
            return self.store().context(session_id)
        turns = read_turns(transcript, pending=pending if isinstance(pending, str) else None)
        decided = self.store().decisions(session_id)
        actions = tuple(
            Action.of(name, tool_input, decided.get(call_id)) for call_id, name, tool_input in turns.actions
        )
        return SessionContext(turns.user_messages, actions).bounded()

    def source(self, payload: dict[str, Any]) -> str:
        """Where the user's messages shown for ``payload`` came from (``details.session.user_messages_from``)."""
        transcript = client_transcript(payload.get("transcript_path"), self.env)
        return f"the {transcript.client} transcript {transcript.path}" if transcript else NO_TRANSCRIPT

    def record(self, payload: dict[str, Any], event: str, decision: Decision) -> None:
        """Remember this turn for later judgements of the session; never changes the decision."""
        session_id = payload.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            return
        try:
            if event in _RECORDED and isinstance(payload.get("tool_name"), str):
                tool_input = decision.updated_input or payload.get("tool_input") or {}
                tool_use_id = payload.get("tool_use_id")
                # the client's own denial (Claude Code's PermissionDenied) is what happened to the call, whatever guard said
                outcome = "deny" if event == "permission_denied" else decision.decision
                action = Action.of(payload["tool_name"], tool_input, outcome)
                self.store().add_action(session_id, action, tool_use_id if isinstance(tool_use_id, str) else None)
        except Exception:  # recording must never change or delay a decision beyond the write
            log.warning("session store write failed", exc_info=True)
