"""``linewise``: a client that sends ``{"tool": …, "args": …, "session": …}`` and reads one line back, ALLOW or DENY.

It waits 5 seconds for a hook (guard answers before that) and reads its hooks from ``.linewise/hooks.json``
in the project (``guard install linewise`` writes guard's entry there).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from guard.adapters import Client, Rendered
from guard.core.decision import Decision


def normalize(payload: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "tool_name": payload.get("tool"),
        "tool_input": payload.get("args") or {},
        "session_id": payload.get("session") or "linewise",
        "cwd": env.get("PWD", "/"),
    }


def render(payload: dict[str, Any], decision: Decision) -> Rendered:
    if decision.decision == "allow":
        return Rendered("ALLOW")
    return Rendered(f"DENY {decision.reason or ''}", exit_code=2)


CLIENT = Client(
    "linewise",
    normalize,
    render,
    deadline=5.0,
    installer="guard_example_plugin.install:LINEWISE",
    project_var="LINEWISE_PROJECT",
)
