"""Every field guard writes for Claude Code is one the current hooks reference documents for that event.

Claude Code ignores what it does not know, silently: a misspelt or misplaced
field is a deny that never happens. The table is the hooks reference's output
section (code.claude.com/docs/en/hooks, checked against Claude Code 2.1.332).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from guard.adapters import adapter
from guard.core.decision import Decision
from guard.core.events.names import CANONICAL_EVENTS, client_event_name

COMMON = {"continue", "stopReason", "systemMessage", "suppressOutput", "hookSpecificOutput"}
#: Events whose top-level ``decision: "block"`` + ``reason`` Claude Code honours.
BLOCK = {
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Stop",
    "SubagentStop",
    "ConfigChange",
    "PreCompact",
}
#: ``hookSpecificOutput`` fields per event (``hookEventName`` is required in every one).
SPECIFIC = {
    "PreToolUse": {"permissionDecision", "permissionDecisionReason", "updatedInput", "additionalContext"},
    "PermissionRequest": {"decision"},
    "UserPromptSubmit": {"additionalContext"},
    "SessionStart": {"additionalContext"},
    "PostToolUse": {"additionalContext", "updatedToolOutput", "updatedMCPToolOutput"},
    "PostToolUseFailure": {"additionalContext"},
    "SubagentStart": {"additionalContext"},
    "PermissionDenied": {"retry"},
}
PERMISSION_DECISION = {"behavior", "updatedInput", "updatedPermissions", "message", "interrupt"}

DECISIONS = {
    "allow": Decision(),
    "deny": Decision("deny", "no"),
    "ask": Decision("ask", "look"),
    "rewrite": Decision(updated_input={"command": "ls"}),
    "context": Decision(additional_context="remember this"),
    "warning": Decision(warnings=["a hook was not judged"]),
    "defer": Decision("deny", "judge down", details={"failure": "error", "defer": True}),
}


def written(event: str, decision: Decision) -> dict[str, Any]:
    payload = {
        "hook_event_name": client_event_name(event),
        "session_id": "s",
        "tool_name": "Bash",
        "tool_input": {"command": "x"},
    }
    rendered = adapter("claude").render(payload, decision)
    return json.loads(rendered.stdout) if rendered.stdout else {}


@pytest.mark.parametrize("kind", sorted(DECISIONS))
@pytest.mark.parametrize("event", CANONICAL_EVENTS)
def test_only_documented_fields_for_the_event(event: str, kind: str) -> None:
    out = written(event, DECISIONS[kind])
    name = client_event_name(event)
    allowed = COMMON | ({"decision", "reason"} if name in BLOCK else set())
    assert set(out) <= allowed, (name, kind, out)
    if "decision" in out:
        assert out["decision"] == "block" and out.get("reason")
    specific = out.get("hookSpecificOutput")
    if specific is not None:
        assert specific["hookEventName"] == name  # without it Claude Code drops the whole object
        assert set(specific) - {"hookEventName"} <= SPECIFIC.get(name, set()), (name, kind, specific)
        if "permissionDecision" in specific:
            assert specific["permissionDecision"] in ("allow", "deny", "ask", "defer")
        if name == "PermissionRequest":
            assert set(specific["decision"]) <= PERMISSION_DECISION and specific["decision"]["behavior"] in (
                "allow",
                "deny",
            )


def test_a_deny_and_a_block_reach_claude_code_where_they_can() -> None:
    assert written("pre_tool_use", DECISIONS["deny"])["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert written("pre_tool_use", DECISIONS["defer"])["hookSpecificOutput"]["permissionDecision"] == "defer"
    assert written("permission_request", DECISIONS["deny"])["hookSpecificOutput"]["decision"]["behavior"] == "deny"
    assert written("stop", DECISIONS["deny"])["decision"] == "block"
