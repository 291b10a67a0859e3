"""What a rule is shown of an event: the one view builder for ``guard hook``, ``guard serve`` and ``guard eval``.

The action is the payload as :func:`~guard.judge.prompts.judge_view` renders it.
A session-aware rule (``context: session``: every policy, and any hook that says
so; ``context: request`` shows the user's requests without the actions, so its
cache key changes only when the user speaks) is also shown the bounded session context found on the payload under
:data:`~guard.session.SESSION_FIELD` — put there by the gate from the
session store in production and from the case's ``session`` in eval — and an
empty one when there is none, so a missing history reads as "the user asked for
nothing", never as consent. Context-free rules are shown no session at all and
keep their cache key.

Standard library only: the ``guard hook`` fast path computes cache keys with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from guard.core.session import REQUEST_CONTEXT, SESSION_FIELD, reads_session

if TYPE_CHECKING:
    from guard.core.spec import HookSpec
    from guard.session.context import SessionContext

__all__ = ["session_shown"]


def session_shown(spec: HookSpec, payload: dict[str, Any]) -> SessionContext | None:
    """The session context ``spec`` is shown on ``payload``: None for a context-free rule, else bounded (maybe empty).

    Raises SessionShapeError (a ValueError) when the payload's session is malformed.
    """
    if not reads_session(spec):
        return None
    from guard.session.context import SessionContext  # only session-aware rules pay for it

    raw = payload.get(SESSION_FIELD)
    shown = SessionContext() if raw is None else SessionContext.from_dict(raw).bounded()
    return shown.requests_only() if spec.context == REQUEST_CONTEXT else shown
