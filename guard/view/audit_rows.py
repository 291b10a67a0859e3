"""An audit row as the pages can rely on it, or flagged as malformed.

The audit log is a file in the workspace, so the agent being watched can write
rows into it by hand. A row whose JSON does not parse, nests deeper than an
event may (the pages' code recurses), or holds a value of the wrong type is shown as "malformed" with its raw payload as
text: it must not take the page (and every real decision on it) down with it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from guard.audit import PAYLOAD_LIMIT, parsed_row
from guard.core.errors import EventError
from guard.core.events.payload import read_json

__all__ = ["MALFORMED", "checked_row"]

MALFORMED = "malformed"
_JSON_COLUMNS = ("hooks", "payload", "details", "warnings")


class _Hook(BaseModel):
    """One hook's result, with the types the templates format; other keys pass through."""

    model_config = ConfigDict(extra="allow")

    id: str
    type: str | None = None
    decision: str | None = None
    reason: str | None = None
    tier: str | None = None
    model: str | None = None
    confidence: float | None = None
    cached: bool = False
    latency_ms: float | None = None
    cost_usd: float | None = None
    error: str | None = None


class _Row(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: int
    time: float
    event: str | None = None
    tool: str | None = None
    session: str | None = None
    client: str | None = None
    decision: str
    reason: str | None = None
    label: str | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    hooks: list[_Hook]
    payload: Any
    payload_truncated: bool
    details: dict[str, Any]
    warnings: list[str]
    judged: int | None = None


def _problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"field {'.'.join(str(part) for part in first['loc'])}: {first['msg']}"
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    return str(exc)


def _as_an_event_may_be(value: Any) -> Any:
    """``value`` no deeper than an event may be (a payload exactly as deep as ``guard hook`` accepts passes), lone surrogates repaired."""
    return read_json(value)[0] if isinstance(value, dict) else read_json({"": value})[0][""]


def checked_row(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` (as SQLite gave it) with its JSON read back and its types checked; a malformed row says what is wrong."""
    try:
        parsed = parsed_row(dict(row))
        checked = {name: _as_an_event_may_be(parsed[name]) for name in _JSON_COLUMNS}
        return _Row.model_validate({**parsed, **checked}).model_dump()
    except (
        ValueError,
        TypeError,
        RecursionError,
        EventError,
    ) as exc:  # JSONDecodeError and ValidationError are ValueErrors
        raw = row.get("payload")
        return {
            "id": row["id"],
            "time": row["time"] if isinstance(row.get("time"), (int, float)) else 0.0,
            **dict.fromkeys(("event", "tool", "session", "client", "reason", "label", "latency_ms", "cost_usd")),
            "decision": MALFORMED,
            "hooks": [],
            "payload": raw[:PAYLOAD_LIMIT] if isinstance(raw, str) else repr(raw)[:PAYLOAD_LIMIT],
            "payload_truncated": True,
            "details": {},
            "warnings": [f"{MALFORMED} audit row (written by something other than guard?): {_problem(exc)}"],
        }
