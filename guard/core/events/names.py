"""Canonical snake_case event names and every client's spelling of them.

Standard library only: this module is on the path of every ``guard hook`` call.
"""

from __future__ import annotations

import re

__all__ = [
    "BLOCKABLE_EVENTS",
    "CANONICAL_EVENTS",
    "TOOL_EVENTS",
    "canonical_event",
    "client_event_name",
    "suggest_event",
]

CANONICAL_EVENTS: tuple[str, ...] = (
    "pre_tool_use",
    "post_tool_use",
    "post_tool_use_failure",
    "post_tool_use_cancelled",
    "permission_request",
    "permission_denied",
    "user_turn",
    "stop",
    "subagent_start",
    "subagent_stop",
    "subagent_cancel_complete",
    "session_start",
    "session_end",
    "notification",
    "pre_compact",
    "post_compaction",
    "approval_correction",
)

#: Events whose hooks see a ``tool_name`` (matchers and ``tools`` globs apply).
TOOL_EVENTS = frozenset(
    {
        "pre_tool_use",
        "post_tool_use",
        "post_tool_use_failure",
        "post_tool_use_cancelled",
        "permission_request",
        "permission_denied",
    }
)

#: Events where a deny actually stops something in the clients.
BLOCKABLE_EVENTS = frozenset(
    {
        "pre_tool_use",
        "permission_request",
        "user_turn",
        "stop",
        "subagent_stop",
        "post_tool_use",
        "post_tool_use_failure",
        "pre_compact",
    }
)

_ALIASES: dict[str, str] = {
    "PreToolUse": "pre_tool_use",
    "BeforeToolUse": "pre_tool_use",
    "BeforeTool": "pre_tool_use",
    "preToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "AfterToolUse": "post_tool_use",
    "AfterTool": "post_tool_use",
    "postToolUse": "post_tool_use",
    "PostToolUseFailure": "post_tool_use_failure",
    "PostToolUseCancelled": "post_tool_use_cancelled",
    "PermissionRequest": "permission_request",
    "PermissionDenied": "permission_denied",
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
    "SubagentCancelComplete": "subagent_cancel_complete",
    "Notification": "notification",
    "PreCompact": "pre_compact",
    "PostCompaction": "post_compaction",
    "PostCompact": "post_compaction",
    "ApprovalCorrection": "approval_correction",
}

#: The Claude Code (PascalCase) name of each canonical event, for client output.
_CLAUDE_NAMES: dict[str, str] = {
    "pre_tool_use": "PreToolUse",
    "post_tool_use": "PostToolUse",
    "post_tool_use_failure": "PostToolUseFailure",
    "post_tool_use_cancelled": "PostToolUseCancelled",
    "permission_request": "PermissionRequest",
    "permission_denied": "PermissionDenied",
    "user_turn": "UserPromptSubmit",
    "stop": "Stop",
    "subagent_start": "SubagentStart",
    "subagent_stop": "SubagentStop",
    "subagent_cancel_complete": "SubagentCancelComplete",
    "session_start": "SessionStart",
    "session_end": "SessionEnd",
    "notification": "Notification",
    "pre_compact": "PreCompact",
    "post_compaction": "PostCompact",
    "approval_correction": "ApprovalCorrection",
}

_CUSTOM_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_.:-]{0,127}$")


def canonical_event(name: str) -> str:
    """Return the canonical snake_case name for ``name``.

    Canonical names and aliases map as in the contract; any other well-formed key
    (letters, digits, ``_ . : -``) is a custom event and is kept as written.
    """
    if name in _ALIASES:
        return _ALIASES[name]
    if name in CANONICAL_EVENTS:
        return name
    if not isinstance(name, str) or not _CUSTOM_KEY.match(name):
        raise ValueError(f"not an event name: {name!r}")
    return name


def client_event_name(event: str) -> str:
    """The PascalCase name Claude Code (and Devin, Codex) use for a canonical event."""
    return _CLAUDE_NAMES.get(event, event)


def suggest_event(name: str) -> str | None:
    """The known event ``name`` was probably meant as (equal ignoring case, or one typo away), else None.

    A custom event that close to a known one is almost always a typo that would
    switch a rule off silently (``PreTooluse`` never fires).
    """
    import difflib  # only config loading pays for it, never a hook call

    known = [*_ALIASES, *CANONICAL_EVENTS]
    if name in known:
        return None
    # the spelling in the user's style: PascalCase for PascalCase, snake_case otherwise
    styled = sorted(known, key=lambda c: (c.islower() == name.islower(), c[:1].isupper() == name[:1].isupper()))
    folded = {candidate.casefold().replace("_", ""): candidate for candidate in styled}
    key = name.casefold().replace("_", "").replace("-", "")
    if key in folded:
        return folded[key]
    close = difflib.get_close_matches(key, list(folded), n=1, cutoff=0.85)
    return folded[close[0]] if close else None
