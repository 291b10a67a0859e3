"""Devin CLI: top-level ``decision: "block"`` / ``"approve"``, rewrites via ``hookSpecificOutput.updatedInput``.

Devin has no "ask", so ask blocks with the reason (a person must look). Devin
sends no ``cwd``; ``DEVIN_PROJECT_DIR`` stands in for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from guard.adapters import Client, Rendered, event_of
from guard.adapters.claude import with_warnings
from guard.core.decision import STOPS, Decision
from guard.core.events.names import client_event_name
from guard.core.explanation import agent_message

__all__ = ["CLIENT", "normalize", "render"]


def normalize(payload: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    if "cwd" not in payload and env.get("DEVIN_PROJECT_DIR"):
        return {**payload, "cwd": env["DEVIN_PROJECT_DIR"]}
    return payload


def render(payload: dict[str, Any], decision: Decision) -> Rendered:
    event = event_of(payload)
    out: dict[str, Any] = {}
    if decision.decision in STOPS:
        out["decision"] = "block"
        out["reason"] = agent_message(decision) or f"guard: {decision.decision}"
    specific: dict[str, Any] = {}
    if decision.updated_input is not None and decision.decision == "allow":
        specific["updatedInput"] = decision.updated_input
    if decision.additional_context:
        specific["additionalContext"] = decision.additional_context
    if specific:
        out["hookSpecificOutput"] = {"hookEventName": client_event_name(event), **specific}
    out = with_warnings(out, decision, payload.get("tool_name"))
    return Rendered(stdout=json.dumps(out) if out else "")


CLIENT = Client(
    "devin",
    normalize,
    render,
    deadline=600.0,
    installer="guard.adapters.installers:DEVIN",
    project_var="DEVIN_PROJECT_DIR",
)
