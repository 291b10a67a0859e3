"""Claude Code: ``hookSpecificOutput`` for tool events, top-level ``decision: "block"`` elsewhere.

guard's "allow" means "no objection", so a plain allow prints nothing and
Claude's own permission rules still apply; only a rewrite is returned as an
explicit allow (the rewritten input has already passed every blocking hook).
``updatedInput`` is the whole input: Claude replaces, it does not merge.
A deny or ask tells the model which rule decided and whether it is final
(``permissionDecisionReason``, the block ``reason``) and tells the user in one
line (``systemMessage``), never as an error (:mod:`guard.core.explanation`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from guard.adapters import Client, Rendered, event_of
from guard.core.decision import STOPS, Decision
from guard.core.events.names import client_event_name
from guard.core.explanation import agent_message, user_message

__all__ = [
    "CLIENT",
    "NOT_SET_UP_HERE",
    "SANDBOX_ELSEWHERE",
    "hook_output",
    "missing_setup",
    "normalize",
    "render",
    "with_warnings",
]

#: Told as a session starts in a checkout whose own local settings hold no ``GUARD_HOOK`` of this user's.
NOT_SET_UP_HERE = (
    "guard install claude was not run for you in this checkout, {project} (a clone or git worktree gets the shared "
    ".claude/settings.json, not your .claude/settings.local.json): guard enforces the rules you trusted here, but "
    "Claude Code's sandbox is not set up for this checkout, so guard's files in it are within the agent's reach. Run "
    "guard install claude there (guard doctor shows the protection level)"
)
#: Told as a session starts where this user's settings switch the sandbox on for another folder's files.
SANDBOX_ELSEWHERE = (
    "the sandbox settings in {settings} do not protect {config} (they were written for another folder: was the project "
    "moved or copied?), so guard's files here are within the agent's reach. Run guard install claude in {project}"
)

#: Events where a top-level ``{"decision": "block", "reason"}`` is honoured.
_BLOCK_EVENTS = frozenset(
    {"user_turn", "post_tool_use", "post_tool_use_failure", "stop", "subagent_stop", "pre_compact"}
)
_CONTEXT_EVENTS = frozenset(
    {"user_turn", "session_start", "post_tool_use", "post_tool_use_failure", "pre_tool_use", "subagent_start"}
)
_MAX = 10_000  # Claude caps hook strings at 10,000 characters


def _cap(text: str | None) -> str | None:
    return text if text is None or len(text) <= _MAX else text[: _MAX - 1] + "…"


def with_warnings(out: dict[str, Any], decision: Decision, tool: str | None = None) -> dict[str, Any]:
    """Show the user which rule stopped ``tool`` and what guard did not judge (``systemMessage``: Claude Code, Codex, Devin, Gemini CLI)."""
    lines = [line for line in (user_message(decision, tool),) if line]
    if decision.warnings:
        lines.append("guard: " + "; ".join(decision.warnings))
    if lines:
        out["systemMessage"] = _cap(" ".join(lines))
    return out


def normalize(payload: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    return payload


def hook_output(event: str, decision: Decision) -> dict[str, Any]:
    """The JSON object for ``decision`` (empty when there is nothing to say)."""
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {}
    reason = _cap(agent_message(decision))
    if event == "pre_tool_use":
        if decision.decision in STOPS:
            # defer: guard could not judge and `guard hook --defer` asked to pause a headless session rather than deny
            specific["permissionDecision"] = "defer" if decision.details.get("defer") else decision.decision
            specific["permissionDecisionReason"] = reason or f"guard: {decision.decision}"
        elif decision.updated_input is not None:
            specific["permissionDecision"] = "allow"
            specific["permissionDecisionReason"] = reason or "guard: input rewritten and re-checked"
        if decision.updated_input is not None and decision.decision != "deny":
            specific["updatedInput"] = decision.updated_input
    elif event == "permission_request":
        if decision.decision == "deny":
            specific["decision"] = {"behavior": "deny", "message": reason or "guard: denied"}
        elif decision.updated_input is not None:
            specific["decision"] = {"behavior": "allow", "updatedInput": decision.updated_input}
    elif event in _BLOCK_EVENTS and decision.decision != "allow":
        # ask has no meaning here; blocking is the safe reading of "a person should look"
        out["decision"] = "block"
        out["reason"] = reason or f"guard: {decision.decision}"
    if decision.additional_context and event in _CONTEXT_EVENTS:
        specific["additionalContext"] = _cap(decision.additional_context)
    if specific:
        out["hookSpecificOutput"] = {"hookEventName": client_event_name(event), **specific}
    return out


def render(payload: dict[str, Any], decision: Decision) -> Rendered:
    try:
        event = event_of(payload)
    except ValueError:
        event = ""
    if not event and decision.decision != "allow":
        # an event guard could not read has no JSON channel to deny through: exit 2 blocks any event that can block
        return Rendered(exit_code=2, stderr=agent_message(decision) or f"guard: {decision.decision}")
    out = with_warnings(hook_output(event, decision), decision, payload.get("tool_name"))
    return Rendered(stdout=json.dumps(out) if out else "")


def missing_setup(project: str | None, env: Mapping[str, str]) -> str | None:
    """What a hook the shared launcher started says as a session starts, when this user's install is missing here.

    The launcher in ``.claude/settings.json`` (the only hook guard anchors with ``--project``) runs ``$GUARD_HOOK``,
    which ``guard install claude`` sets in this user's ``.claude/settings.local.json`` beside the sandbox settings
    with this checkout's paths. A checkout without its own (a teammate's clone: the launcher falls back to a ``guard``
    on PATH; a new git worktree: Claude Code hands it the main checkout's local settings, whose sandbox names the main
    checkout's files) still has its trusted rules enforced, but not the protection level the user chose: the session's
    first message is the one place guard can say so before the agent acts.
    """
    if project is None:
        return None
    from guard.adapters.checkout import config_in  # only as a session starts
    from guard.adapters.claude_local import personal, sandbox_misses

    found = personal(project_dir=Path(project), home=Path(env.get("HOME") or Path.home()))
    if found is None:
        return NOT_SET_UP_HERE.format(project=project)
    config = config_in(project)
    if config is not None and sandbox_misses(found[0], config):
        return SANDBOX_ELSEWHERE.format(settings=found[0], config=config, project=project)
    return None


CLIENT = Client(
    "claude",
    normalize,
    render,
    deadline=600.0,
    installer="guard.adapters.installers:CLAUDE",
    project_var="CLAUDE_PROJECT_DIR",
    defers=True,
    missing_setup=missing_setup,
)
