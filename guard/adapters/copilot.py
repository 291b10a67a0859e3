"""GitHub Copilot CLI: camelCase input (``toolName``, ``toolArgs`` as a JSON string), flat output.

Only ``permissionDecision: "deny"`` is honoured by Copilot, so ask is sent as a
deny with the reason; rewrites are not supported by the client and are dropped.
Copilot shows one message, to the model: it names the rule and says whether the deny is final.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from guard.adapters import Client, Rendered
from guard.core.decision import STOPS, Decision
from guard.core.errors import EventError
from guard.core.explanation import agent_message
from guard.core.settings import EVENT_ENV, from_env

__all__ = ["CLIENT", "normalize", "render"]

_FIELDS = {
    "toolName": "tool_name",
    "sessionId": "session_id",
    "hookEventName": "hook_event_name",
    "cwd": "cwd",
    "prompt": "prompt",
}


def normalize(payload: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    out = {k: v for k, v in payload.items() if k not in _FIELDS and k != "toolArgs"}
    for src, dst in _FIELDS.items():
        if src in payload:
            out[dst] = payload[src]
    args = payload.get("toolArgs")
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            raise EventError(f"field 'toolArgs': not valid JSON ({exc.msg})") from exc
    if args is not None:
        out["tool_input"] = args if isinstance(args, dict) else {"value": args}
    out.setdefault("hook_event_name", from_env(EVENT_ENV, env) or "preToolUse")
    return out


def render(payload: dict[str, Any], decision: Decision) -> Rendered:
    if decision.decision in STOPS:
        out = {
            "permissionDecision": "deny",
            "permissionDecisionReason": agent_message(decision) or f"guard: {decision.decision}",
        }
        return Rendered(stdout=json.dumps(out))
    return Rendered()


CLIENT = Client(
    "copilot",
    normalize,
    render,
    deadline=30.0,
    installer="guard.adapters.installers:COPILOT",
    starts_elsewhere=True,
    session_folder="cwd",  # 1.0.102: the session's folder in every event; the agent's ``cd`` does not outlive its call
)
