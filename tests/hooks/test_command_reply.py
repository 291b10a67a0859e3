"""Reading a hook's JSON reply (shared by command hooks and webhooks): Claude Code and canonical shapes."""

from __future__ import annotations

from typing import Any

import pytest

from guard.core.errors import HookError
from guard.hooks.reply import decode_reply, parse_reply


def read(data: dict[str, Any], event: str = "pre_tool_use") -> Any:
    return parse_reply(data, hook_id="h1", kind="command", event=event)


@pytest.mark.parametrize(
    ("reply", "decision", "reason"),
    [
        (
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "no",
                }
            },
            "deny",
            "no",
        ),
        (
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "ask",
                    "permissionDecisionReason": "sure?",
                }
            },
            "ask",
            "sure?",
        ),
        ({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}, "allow", None),
        ({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "defer"}}, None, None),
        ({"decision": "block", "reason": "stop that"}, "deny", "stop that"),
        ({"decision": "approve", "reason": "fine"}, "allow", "fine"),
        ({"decision": "deny", "reason": "canonical"}, "deny", "canonical"),
        ({"decision": "ask"}, "ask", None),
        ({"decision": None, "reason": "abstains"}, None, None),
        ({"continue": False, "stopReason": "halt"}, "deny", "halt"),
        ({"continue": False}, "deny", "hook asked to stop (continue: false)"),
        ({"continue": True, "suppressOutput": True}, None, None),
        ({}, None, None),
        (
            {
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": {"behavior": "deny", "message": "nope"},
                }
            },
            "deny",
            "nope",
        ),
    ],
)
def test_decisions_from_each_shape(reply: dict[str, Any], decision: str | None, reason: str | None) -> None:
    result = read(reply)
    assert (result.id, result.type) == ("h1", "command")
    assert (result.decision, result.reason) == (decision, reason)


def test_strictest_part_of_a_mixed_reply_wins() -> None:
    reply = {
        "decision": "approve",
        "hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"},
    }
    assert (read(reply).decision, read(reply).reason) == ("deny", "no")
    assert read({"decision": "allow", "continue": False, "stopReason": "x"}).decision == "deny"


def test_rewrite_and_context_in_claude_shape() -> None:
    reply = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "ls --dry-run"},
            "additionalContext": "rewrote it",
        },
        "systemMessage": "shown to the user",
    }
    result = read(reply)
    assert result.updated_input == {"command": "ls --dry-run"}
    assert result.additional_context == "rewrote it"
    assert result.details["system_message"] == "shown to the user"


def test_rewrite_and_context_in_canonical_shape() -> None:
    result = read({"decision": "allow", "updated_input": {"a": 1}, "additional_context": "ctx"})
    assert (result.updated_input, result.additional_context) == ({"a": 1}, "ctx")


def test_a_deny_drops_its_rewrite() -> None:
    result = read({"decision": "deny", "updated_input": {"a": 1}})
    assert result.decision == "deny" and result.updated_input is None


def test_permission_request_rewrite() -> None:
    reply = {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": {"x": 2}},
        }
    }
    result = read(reply, event="permission_request")
    assert (result.decision, result.updated_input) == ("allow", {"x": 2})


def test_event_name_mismatch_is_honoured_but_noted() -> None:
    result = read({"hookSpecificOutput": {"hookEventName": "Stop", "permissionDecision": "deny"}})
    assert result.decision == "deny"
    assert "does not match" in result.details["reply_notes"][0]
    assert (
        "reply_notes"
        not in read({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}}).details
    )


@pytest.mark.parametrize(
    ("reply", "field"),
    [
        ({"decision": "maybe"}, "decision"),
        ({"decision": 1}, "decision"),
        ({"hookSpecificOutput": {"permissionDecision": "perhaps"}}, "hookSpecificOutput.permissionDecision"),
        ({"hookSpecificOutput": "deny"}, "hookSpecificOutput"),
        ({"hookSpecificOutput": {"updatedInput": "ls"}}, "hookSpecificOutput.updatedInput"),
        ({"decision": "deny", "reason": ["a"]}, "reason"),
        ({"updated_input": [1]}, "updated_input"),
    ],
)
def test_unreadable_replies_are_errors_never_allow(reply: dict[str, Any], field: str) -> None:
    with pytest.raises(HookError, match=f"hook h1: reply field '{field}'"):
        read(reply)


def test_decode_reply_follows_claude_first_character_rule() -> None:
    assert decode_reply('  \n{"decision": "block"}\n', hook_id="h") == {"decision": "block"}
    assert decode_reply("plain text {not json}", hook_id="h") is None
    assert decode_reply("", hook_id="h") is None
    with pytest.raises(HookError, match="not valid JSON"):
        decode_reply('{"decision": "block"', hook_id="h")
