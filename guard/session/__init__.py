"""Session context: what the user asked for and what the agent did earlier in the same session.

The gate records it (:mod:`guard.session.store`, :mod:`guard.session.recording`); rules
that read it (``context: session``) see a bounded view of it
(:mod:`guard.session.context`), fenced as untrusted data. This module holds only what
every ``guard hook`` run needs to decide whether any of that applies, so a config
without session-aware rules imports nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from guard.hooks.spec import HookSpec

__all__ = ["SESSION_CONTEXT", "SESSION_FIELD", "reads_session"]

#: The payload field that carries the session context to the judge (never taken from a client: the gate overwrites it).
SESSION_FIELD = "guard_session"
#: The ``context`` value of a hook that reads session context.
SESSION_CONTEXT = "session"


def reads_session(spec: HookSpec) -> bool:
    """Whether ``spec``'s judge is shown the session (a smart hook with ``context: session``)."""
    return spec.kind == "smart" and spec.context == SESSION_CONTEXT
