"""``linewise``: a client that sends ``{"tool": …, "args": …, "session": …}`` and reads one line back, ALLOW or DENY."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from guard.adapters import Rendered
from guard.core.decision import Decision


def normalize(payload: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": payload.get("tool"), "tool_input": payload.get("args") or {},
            "session_id": payload.get("session") or "linewise", "cwd": env.get("PWD", "/")}


def render(payload: dict[str, Any], decision: Decision) -> Rendered:
    if decision.decision == "allow":
        return Rendered("ALLOW")
    return Rendered(f"DENY {decision.reason or ''}", exit_code=2)
