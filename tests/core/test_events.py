from __future__ import annotations

import pytest

from guard.core.errors import EventError
from guard.core.events import CANONICAL_EVENTS, canonical_event, client_event_name
from guard.core.events.model import Event, SubagentStop, parse_event

ALIASES = {
    "PreToolUse": "pre_tool_use",
    "BeforeToolUse": "pre_tool_use",
    "BeforeTool": "pre_tool_use",
    "preToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "AfterToolUse": "post_tool_use",
    "AfterTool": "post_tool_use",
    "postToolUse": "post_tool_use",
    "PostToolUseFailure": "post_tool_use_failure",
    "UserPromptSubmit": "user_turn",
    "BeforeAgent": "user_turn",
    "userPromptSubmitted": "user_turn",
    "Stop": "stop",
    "AfterAgent": "stop",
    "agentStop": "stop",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "PermissionRequest": "permission_request",
    "Notification": "notification",
    "PreCompact": "pre_compact",
    "PostCompaction": "post_compaction",
    "PostCompact": "post_compaction",
}


@pytest.mark.parametrize(("alias", "canonical"), sorted(ALIASES.items()))
def test_every_contract_alias_maps_to_its_canonical_name(alias: str, canonical: str) -> None:
    assert canonical_event(alias) == canonical


def test_canonical_names_map_to_themselves_and_custom_keys_are_kept() -> None:
    for name in CANONICAL_EVENTS:
        assert canonical_event(name) == name
    assert canonical_event("deploy.approved") == "deploy.approved"
    with pytest.raises(ValueError):
        canonical_event("rm -rf /; echo")


def test_client_name_round_trips_for_claude_events() -> None:
    assert client_event_name("pre_tool_use") == "PreToolUse"
    assert client_event_name("user_turn") == "UserPromptSubmit"
    assert canonical_event(client_event_name("stop")) == "stop"


def test_event_keeps_fields_a_newer_client_adds() -> None:
    ev = parse_event(
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
            "effort": {"level": "high"},
        }
    )
    assert ev.event == "pre_tool_use"
    assert ev.payload()["effort"] == {"level": "high"}
    assert ev.with_tool_input({"command": "pwd"}).tool_input == {"command": "pwd"}
    assert ev.tool_input == {"command": "ls"}  # immutable original


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"tool_name": "Bash"}, "hook_event_name"),
        ({"hook_event_name": "PreToolUse", "tool_input": "rm -rf /"}, "tool_input"),
        ({"hook_event_name": "SubagentStop", "agent_type": "x"}, "task_id"),
        ({"hook_event_name": "bad name!"}, "hook_event_name"),
    ],
)
def test_malformed_event_names_the_field(data: dict, field: str) -> None:
    with pytest.raises(EventError, match=field):
        parse_event(data)


def test_non_object_event_is_refused() -> None:
    with pytest.raises(EventError, match="JSON object"):
        parse_event(["PreToolUse"])


def test_subagent_stop_is_typed() -> None:
    ev = parse_event(
        {
            "hook_event_name": "subagent_stop",
            "task_id": "t1",
            "status": "cancelled",
            "success": False,
            "duration_seconds": 3.5,
        }
    )
    assert isinstance(ev, SubagentStop) and isinstance(ev, Event)
    assert ev.status == "cancelled" and ev.duration_seconds == 3.5
