"""The event payload handed to every hook: one immutable object, so hook signatures never change.

Clients add fields every release, so unknown fields are kept (``extra="allow"``) and
come back out of :meth:`Event.payload` unchanged.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from guard.core.errors import EventError
from guard.core.events.names import canonical_event

__all__ = ["Event", "SubagentStart", "SubagentStop", "parse_event"]


class Event(BaseModel):
    """A lifecycle event as a client sent it, with its canonical name alongside."""

    model_config = ConfigDict(extra="allow", frozen=True)

    hook_event_name: str
    session_id: str | None = None
    prompt_id: str | None = None
    transcript_path: str | None = None
    cwd: str | None = None
    permission_mode: str | None = None
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None
    tool_use_id: str | None = None
    tool_response: Any = None
    prompt: str | None = None

    @field_validator("hook_event_name")
    @classmethod
    def _known_shape(cls, value: str) -> str:
        canonical_event(value)  # raises ValueError for a malformed key
        return value

    @property
    def event(self) -> str:
        """The canonical snake_case event name (``PreToolUse`` → ``pre_tool_use``)."""
        return canonical_event(self.hook_event_name)

    def payload(self) -> dict[str, Any]:
        """The event as JSON-ready data, unknown fields included, unset ones left out."""
        return self.model_dump(mode="json", exclude_unset=True)

    def with_tool_input(self, tool_input: dict[str, Any]) -> Event:
        """A copy whose tool input is replaced (used to re-check a rewritten call)."""
        return self.model_copy(update={"tool_input": tool_input})


class SubagentStart(Event):
    """``subagent_start``: a subagent run begins."""

    task_id: str
    agent_type: str | None = None
    task_description: str | None = None
    trace_id: str | None = None


class SubagentStop(Event):
    """``subagent_stop``: a subagent run ended; for one task_id the last stop counts."""

    task_id: str
    agent_type: str | None = None
    success: bool | None = None
    status: Literal["completed", "failed", "cancelled", "pending_approval", "timed_out"] | str | None = None
    duration_seconds: float | None = None
    trace_id: str | None = None
    result: Any = None
    error: str | None = None


_TYPED: dict[str, type[Event]] = {"subagent_start": SubagentStart, "subagent_stop": SubagentStop}


def parse_event(data: Any, *, source: str = "event") -> Event:
    """Validate one event; a bad one raises :class:`EventError` naming the field."""
    if not isinstance(data, dict):
        raise EventError(f"{source}: expected a JSON object, got {type(data).__name__}")
    name = data.get("hook_event_name")
    if not isinstance(name, str):
        raise EventError(f"{source}: field 'hook_event_name' is missing or not a string")
    try:
        model = _TYPED.get(canonical_event(name), Event)
    except ValueError as exc:
        raise EventError(f"{source}: field 'hook_event_name': {exc}") from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(root)"
        raise EventError(f"{source}: field '{field}': {first['msg']}") from exc
