"""Session context names every layer shares: the payload field the judge reads it from, and which hooks read it.

The gate records it (:mod:`guard.session.store`, :mod:`guard.session.recording`); rules
that read it (``context: session``) see a bounded view of it
(:mod:`guard.session.context`), fenced as untrusted data. This module holds only what
every ``guard hook`` run needs to decide whether any of that applies, so a config
without session-aware rules imports nothing more.
"""

from __future__ import annotations

from guard.core.spec import HookSpec, SmartSettings

__all__ = ["FILES_FIELD", "REQUEST_CONTEXT", "SESSION_CONTEXT", "SESSION_FIELD", "WRITTEN_FIELD", "reads_session"]

#: The payload field that carries the session context to the judge (never taken from a client: the gate overwrites it).
SESSION_FIELD = "guard_session"
#: The payload field ``guard eval`` puts a case's current files on (path → content), so the judge's view of a
#: write reads the case's world, not the disk (:mod:`guard.judge.view`); never taken from a client: the gate drops it.
FILES_FIELD = "guard_files"
#: The payload field the gate puts the record of what the agent wrote on, before a call that may run project code
#: it does not name (:mod:`guard.session.provenance`); never taken from a client: the gate overwrites it.
WRITTEN_FIELD = "guard_written"
#: ``context:`` values beyond the default ``event``: the user's latest requests; the requests and the recent actions.
REQUEST_CONTEXT = "request"
SESSION_CONTEXT = "session"


def reads_session(spec: HookSpec) -> bool:
    """Whether ``spec``'s judge is shown session context (a smart hook with ``context: request`` or ``session``)."""
    return isinstance(spec.options, SmartSettings) and spec.options.context in (REQUEST_CONTEXT, SESSION_CONTEXT)
