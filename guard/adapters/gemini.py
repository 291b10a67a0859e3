"""Gemini CLI: top-level ``decision: "deny"`` + ``reason``; ``hookSpecificOutput.tool_input`` merges a rewrite.

Event names arrive as BeforeTool / AfterTool / BeforeAgent / AfterAgent (aliases
of the canonical names). Gemini has no "ask": ask denies with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from guard.adapters import Client, Rendered, event_of
from guard.adapters.claude import with_warnings
from guard.core.decision import STOPS, Decision
from guard.core.explanation import agent_message

__all__ = ["CLIENT", "normalize", "render"]


def normalize(payload: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    return payload


def render(payload: dict[str, Any], decision: Decision) -> Rendered:
    event = event_of(payload)
    out: dict[str, Any] = {}
    if decision.decision in STOPS:
        out["decision"] = "deny"
        out["reason"] = agent_message(decision) or f"guard: {decision.decision}"
    specific: dict[str, Any] = {}
    if decision.updated_input is not None and decision.decision == "allow" and event == "pre_tool_use":
        specific["tool_input"] = decision.updated_input
    if decision.additional_context and event in ("user_turn", "session_start", "post_tool_use"):
        specific["additionalContext"] = decision.additional_context
    if specific:
        out["hookSpecificOutput"] = specific
    out = with_warnings(out, decision, payload.get("tool_name"))
    return Rendered(stdout=json.dumps(out) if out else "")


CLIENT = Client(
    "gemini",
    normalize,
    render,
    deadline=60.0,
    installer="guard.adapters.installers:GEMINI",
    project_var="GEMINI_PROJECT_DIR",
    session_folder="GEMINI_PROJECT_DIR",
)
