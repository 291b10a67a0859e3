"""Lifecycle events: canonical names, client aliases and the payload model.

The names live in :mod:`guard.core.events.names` (standard library only, used on the
``guard hook`` fast path); the pydantic payload model in :mod:`guard.core.events.model`
is loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from guard.core.events.names import (
    BLOCKABLE_EVENTS,
    CANONICAL_EVENTS,
    TOOL_EVENTS,
    canonical_event,
    client_event_name,
)

if TYPE_CHECKING:
    from guard.core.events.model import Event, SubagentStart, SubagentStop

__all__ = [
    "BLOCKABLE_EVENTS",
    "CANONICAL_EVENTS",
    "TOOL_EVENTS",
    "Event",
    "SubagentStart",
    "SubagentStop",
    "canonical_event",
    "client_event_name",
]


def __getattr__(name: str) -> Any:
    if name in {"Event", "SubagentStart", "SubagentStop"}:
        from guard.core.events import model

        return getattr(model, name)
    raise AttributeError(name)
