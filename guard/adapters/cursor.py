"""Cursor: camelCase events with their own shapes in, ``{permission, user_message, agent_message}`` out.

Cursor's agent hooks (https://cursor.com/docs/agent/hooks, ``.cursor/hooks.json``)
split "before a tool" into ``preToolUse`` (every tool) and the older specific
events ``beforeShellExecution``, ``beforeMCPExecution`` and ``beforeReadFile``;
each becomes guard's ``PreToolUse`` with a ``tool_name`` and ``tool_input``, so
one rule covers both (the shell is ``Shell``, as ``preToolUse`` names it).
The Cursor event name rides along as ``cursor_event``: the answer's shape
depends on it.

A plain allow answers ``{}``: no objection, and Cursor's own approval flow still
applies (``"permission": "allow"`` would skip it). Every answer is JSON, because
a hook installed with ``failClosed`` blocks on output Cursor cannot parse.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from guard.adapters import Client, Rendered
from guard.core.decision import Decision

__all__ = ["CLIENT", "EVENTS", "PERMISSION_EVENTS", "normalize", "render"]

#: Cursor's agent events and the Claude Code name guard reads each as (its documented list, Tab hooks aside).
EVENTS: dict[str, str] = {
    "preToolUse": "PreToolUse",
    "beforeShellExecution": "PreToolUse",
    "beforeMCPExecution": "PreToolUse",
    "beforeReadFile": "PreToolUse",
    "postToolUse": "PostToolUse",
    "afterShellExecution": "PostToolUse",
    "afterMCPExecution": "PostToolUse",
    "afterFileEdit": "PostToolUse",
    "postToolUseFailure": "PostToolUseFailure",
    "beforeSubmitPrompt": "UserPromptSubmit",
    "stop": "Stop",
    "subagentStart": "SubagentStart",
    "subagentStop": "SubagentStop",
    "sessionStart": "SessionStart",
    "sessionEnd": "SessionEnd",
    "preCompact": "PreCompact",
}

#: Events answered with ``permission`` (allow | deny | ask); ``beforeReadFile`` knows no ask.
PERMISSION_EVENTS = frozenset({"preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile"})
_NO_ASK = frozenset({"beforeReadFile"})
_NO_MESSAGES = frozenset({"beforeReadFile"})  # it reads only ``permission``
_CONTEXT_EVENTS = frozenset({"sessionStart", "postToolUse"})
_FOLLOWUP_EVENTS = frozenset({"stop", "subagentStop"})


def _json_field(payload: dict[str, Any], field: str) -> Any:
    """A field Cursor may send as a JSON string (``beforeMCPExecution``'s ``tool_input``), decoded.

    A string that is not JSON stays a string: guard's reading of the event then
    names the field, and the event's failure policy applies to a ``PreToolUse``.
    """
    value = payload.get(field)
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value) if value.strip() else {}
    except json.JSONDecodeError:
        return value


def _tool(event: str, payload: dict[str, Any]) -> tuple[str, Any] | None:
    """(tool_name, tool_input) for the events that carry a tool, else None."""
    if event in ("beforeShellExecution", "afterShellExecution"):
        return "Shell", {k: payload[k] for k in ("command", "cwd") if k in payload}
    if event in ("beforeReadFile",):
        return "Read", {k: payload[k] for k in ("file_path", "content") if k in payload}
    if event == "afterFileEdit":
        return "Edit", {k: payload[k] for k in ("file_path", "edits") if k in payload}
    if event in ("beforeMCPExecution", "afterMCPExecution"):
        return f"MCP:{payload.get('tool_name', '')}", _json_field(payload, "tool_input")
    if event in ("preToolUse", "postToolUse", "postToolUseFailure"):
        return str(payload.get("tool_name", "")), _json_field(payload, "tool_input")
    return None


def normalize(payload: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    event = payload.get("hook_event_name")
    if not isinstance(event, str) or event not in EVENTS:
        return payload  # guard's own reading names what it cannot read
    out = {**payload, "hook_event_name": EVENTS[event], "cursor_event": event}
    tool = _tool(event, payload)
    if tool is not None:
        name, tool_input = tool
        out["tool_name"] = name
        out["tool_input"] = tool_input if isinstance(tool_input, (dict, str)) else {"value": tool_input}
    if event == "afterShellExecution" and "output" in payload:
        out["tool_response"] = payload["output"]
    elif event == "afterMCPExecution" and "result_json" in payload:
        out["tool_response"] = payload["result_json"]
    out.setdefault("session_id", payload.get("conversation_id", ""))
    roots = payload.get("workspace_roots")
    if not out.get("cwd") and isinstance(roots, list) and roots and isinstance(roots[0], str):
        out["cwd"] = roots[0]  # Cursor's cwd may be empty; the first workspace root is the project
    return out


#: The generic Cursor event for each name guard reads (an unreadable event keeps only its normalized name).
_BY_CLAUDE_NAME: dict[str, str] = {claude: cursor for cursor, claude in reversed(EVENTS.items())}


def _client_event(payload: dict[str, Any]) -> str:
    event = payload.get("cursor_event", payload.get("hook_event_name", ""))
    if not isinstance(event, str):
        return ""
    return _BY_CLAUDE_NAME.get(event, event)


def render(payload: dict[str, Any], decision: Decision) -> Rendered:
    event = _client_event(payload)
    blocked = decision.decision != "allow"
    reason = decision.reason or f"guard: {decision.decision}"
    out: dict[str, Any] = {}
    if event in PERMISSION_EVENTS:
        if blocked:
            out["permission"] = "deny" if decision.decision == "deny" or event in _NO_ASK else "ask"
            if event not in _NO_MESSAGES:
                out["user_message"] = reason
                out["agent_message"] = reason
        elif decision.updated_input is not None and event == "preToolUse":
            out["permission"] = "allow"  # the rewritten input has passed every blocking hook
            out["updated_input"] = decision.updated_input
    elif event == "beforeSubmitPrompt":
        out["continue"] = not blocked
        if blocked:
            out["user_message"] = reason
    elif event in _FOLLOWUP_EVENTS and blocked:
        out["followup_message"] = reason  # guard's "block a stop" is "keep working on this"
    elif event not in EVENTS and blocked:
        # an event guard could not read has no JSON channel to deny through: exit 2 blocks in Cursor
        return Rendered(exit_code=2, stderr=reason)
    if decision.additional_context and event in _CONTEXT_EVENTS:
        out["additional_context"] = decision.additional_context
    return Rendered(stdout=json.dumps(out))


CLIENT = Client(
    "cursor",
    normalize,
    render,
    deadline=30.0,
    installer="guard.adapters.installers:CURSOR",
    project_var="CURSOR_PROJECT_DIR",
)
