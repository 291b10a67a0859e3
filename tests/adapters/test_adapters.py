from __future__ import annotations

import json

import pytest

from guard.adapters import adapter
from guard.core.decision import Decision, HookResult
from guard.core.errors import EventError, UnknownName

PRE = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}


def out(fmt: str, payload: dict, decision: Decision) -> dict:
    rendered = adapter(fmt).render(payload, decision)
    assert rendered.exit_code == 0
    return json.loads(rendered.stdout) if rendered.stdout else {}


def test_claude_deny_carries_event_name_and_reason() -> None:
    o = out("claude", PRE, Decision("deny", "destructive"))
    assert o == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "destructive",
        }
    }


def test_claude_plain_allow_says_nothing_so_claude_permissions_still_apply() -> None:
    assert (
        adapter("claude").render(PRE, Decision("allow", None, hooks=[HookResult("a", "smart", "allow")])).stdout == ""
    )


def test_claude_rewrite_returns_the_whole_input_with_allow() -> None:
    new = {"command": "rm -rf ./build", "description": "x"}
    o = out("claude", PRE, Decision("allow", None, updated_input=new))["hookSpecificOutput"]
    assert o["permissionDecision"] == "allow" and o["updatedInput"] == new


def test_claude_ask_and_context() -> None:
    o = out("claude", PRE, Decision("ask", "confirm", additional_context="note"))["hookSpecificOutput"]
    assert o["permissionDecision"] == "ask" and o["additionalContext"] == "note"


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop", "SubagentStop", "PostToolUse"])
def test_claude_top_level_block_events(event: str) -> None:
    o = out("claude", {"hook_event_name": event}, Decision("deny", "why"))
    assert o["decision"] == "block" and o["reason"] == "why"


def test_claude_permission_request_deny() -> None:
    o = out("claude", {**PRE, "hook_event_name": "PermissionRequest"}, Decision("deny", "no"))
    assert o["hookSpecificOutput"]["decision"] == {"behavior": "deny", "message": "no"}


def test_claude_caps_strings_at_ten_thousand() -> None:
    o = out("claude", PRE, Decision("deny", "x" * 20_000))
    assert len(o["hookSpecificOutput"]["permissionDecisionReason"]) == 10_000


def test_devin_blocks_top_level_and_reads_project_dir() -> None:
    payload = adapter("devin").normalize(
        {"hook_event_name": "PreToolUse", "tool_name": "exec"}, {"DEVIN_PROJECT_DIR": "/p"}
    )
    assert payload["cwd"] == "/p"
    assert out("devin", payload, Decision("deny", "no")) == {"decision": "block", "reason": "no"}
    assert out("devin", payload, Decision("ask", "confirm"))["decision"] == "block"  # Devin has no ask
    o = out("devin", payload, Decision("allow", updated_input={"command": "ls"}))
    assert o["hookSpecificOutput"]["updatedInput"] == {"command": "ls"} and "decision" not in o


def test_gemini_deny_and_merge_rewrite() -> None:
    p = {"hook_event_name": "BeforeTool", "tool_name": "run_shell_command"}
    assert out("gemini", p, Decision("deny", "no")) == {"decision": "deny", "reason": "no"}
    assert out("gemini", p, Decision("allow", updated_input={"command": "ls"})) == {
        "hookSpecificOutput": {"tool_input": {"command": "ls"}}
    }


def test_codex_speaks_claude() -> None:
    assert out("codex", PRE, Decision("deny", "no"))["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_copilot_camel_case_input_and_flat_deny() -> None:
    payload = adapter("copilot").normalize({"toolName": "bash", "toolArgs": '{"command": "rm -rf /"}', "cwd": "/p"}, {})
    assert payload["tool_name"] == "bash" and payload["tool_input"] == {"command": "rm -rf /"}
    assert payload["hook_event_name"] == "preToolUse"
    assert out("copilot", payload, Decision("deny", "no")) == {
        "permissionDecision": "deny",
        "permissionDecisionReason": "no",
    }
    with pytest.raises(EventError, match="toolArgs"):
        adapter("copilot").normalize({"toolName": "bash", "toolArgs": "{not json"}, {})


def test_unknown_format() -> None:
    with pytest.raises(UnknownName, match="claude"):
        adapter("windsurf")
