"""The session context a rule is shown: the user's latest requests and the agent's recent actions, bounded.

One shape for production and eval: the gate reads it from the session store and
puts it on the payload under :data:`guard.session.SESSION_FIELD`; a dataset case's ``session``
goes to the same field. The judge's view is built from that field alone
(:func:`guard.judge.view.build_view`), so both paths show the judge the same bytes.

Bounds (documented in docs/session-rules.md): the last
:data:`MAX_USER_MESSAGES` user messages of at most :data:`MAX_MESSAGE_CHARS`
characters each, and the last :data:`MAX_ACTIONS` actions whose input is cut to
:data:`MAX_ACTION_CHARS` characters. A cut says how much it left out.

Standard library only: the ``guard hook`` fast path keys the cache on this view.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from guard.core.decision import DECISIONS

__all__ = [
    "MAX_ACTIONS",
    "MAX_ACTION_CHARS",
    "MAX_MESSAGE_CHARS",
    "MAX_USER_MESSAGES",
    "Action",
    "SessionContext",
    "SessionShapeError",
]

MAX_USER_MESSAGES = 3
MAX_MESSAGE_CHARS = 2000
MAX_ACTIONS = 12
MAX_ACTION_CHARS = 400


class SessionShapeError(ValueError):
    """A session given as data (a dataset case, a payload) does not have the documented shape."""


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[{len(text) - limit:,} more characters not shown]"


def action_input(tool_input: Any) -> str:
    """One action's input as the judge sees it: a lone command as itself, anything else as compact JSON, clipped."""
    if (
        isinstance(tool_input, Mapping)
        and isinstance(tool_input.get("command"), str)
        and set(tool_input) <= {"command", "description"}
    ):
        text = tool_input["command"]
    elif isinstance(tool_input, str):
        text = tool_input
    else:
        text = json.dumps(tool_input, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return clip(text, MAX_ACTION_CHARS)


@dataclass(frozen=True)
class Action:
    """One earlier tool call of the session and guard's decision on it (None: not decided by guard)."""

    tool_name: str
    input: str
    decision: str | None = None

    @classmethod
    def of(cls, tool_name: str, tool_input: Any, decision: str | None) -> Action:
        return cls(tool_name, action_input(tool_input), decision)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"tool_name": self.tool_name, "input": self.input}
        if self.decision is not None:
            data["decision"] = self.decision
        return data


@dataclass(frozen=True)
class SessionContext:
    """The user's messages (oldest first) and the session's earlier actions (oldest first; None: not shown to this rule)."""

    user_messages: tuple[str, ...] = ()
    actions: tuple[Action, ...] | None = ()

    def bounded(self) -> SessionContext:
        """The part a judge is shown: the newest messages and actions, each clipped."""
        messages = tuple(clip(m, MAX_MESSAGE_CHARS) for m in self.user_messages[-MAX_USER_MESSAGES:])
        if self.actions is None:
            return SessionContext(messages, None)
        actions = tuple(
            Action(a.tool_name, clip(a.input, MAX_ACTION_CHARS), a.decision) for a in self.actions[-MAX_ACTIONS:]
        )
        return SessionContext(messages, actions)

    def requests_only(self) -> SessionContext:
        """The user's messages without the actions (what a ``context: request`` rule is shown)."""
        return SessionContext(self.user_messages, None)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"user_messages": list(self.user_messages)}
        if self.actions is not None:
            data["actions"] = [a.to_dict() for a in self.actions]
        return data

    def digest(self) -> str:
        """Identifies exactly this context (the cache key of a session-aware rule holds it)."""
        text = json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()

    @classmethod
    def from_dict(cls, data: Any) -> SessionContext:
        """Read the documented shape: ``{"user_messages": [str], "actions": [{"tool_name", "tool_input" | "input", "decision"?}]}``.

        SessionShapeError names the field that is wrong.
        """
        if not isinstance(data, Mapping):
            raise SessionShapeError(f"session must be an object, got {type(data).__name__}")
        unknown = sorted(set(data) - {"user_messages", "actions"})
        if unknown:
            raise SessionShapeError(f"session: unknown field {unknown[0]!r} (expected user_messages, actions)")
        messages = data.get("user_messages") or []
        if not isinstance(messages, list) or not all(isinstance(m, str) for m in messages):
            raise SessionShapeError("session.user_messages must be a list of strings")
        raw_actions = data.get("actions") or []
        if not isinstance(raw_actions, list):
            raise SessionShapeError("session.actions must be a list")
        return cls(tuple(messages), tuple(_action(item, i) for i, item in enumerate(raw_actions)))


def _action(item: Any, index: int) -> Action:
    where = f"session.actions[{index}]"
    if not isinstance(item, Mapping):
        raise SessionShapeError(f"{where} must be an object")
    unknown = sorted(set(item) - {"tool_name", "tool_input", "input", "decision"})
    if unknown:
        raise SessionShapeError(f"{where}: unknown field {unknown[0]!r} (expected tool_name, tool_input, decision)")
    name = item.get("tool_name")
    if not isinstance(name, str) or not name:
        raise SessionShapeError(f"{where}.tool_name must be a non-empty string")
    decision = item.get("decision")
    if decision is not None and decision not in DECISIONS:
        raise SessionShapeError(f"{where}.decision must be one of {', '.join(DECISIONS)}")
    if "input" in item:
        if not isinstance(item["input"], str):
            raise SessionShapeError(f"{where}.input must be a string")
        return Action(name, item["input"], decision)
    return Action.of(name, item.get("tool_input", {}), decision)
