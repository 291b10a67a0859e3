"""Claude Agent SDK: guard as the ``hooks=`` of ``ClaudeAgentOptions``, deciding in-process.

The SDK hands each hook callback the same event Claude Code gives a command
hook and accepts the same JSON back, so the callbacks answer exactly what
``guard hook --format claude`` would print (deny with the reason the model
sees, ask, ``updatedInput``, ``systemMessage`` for what was not judged),
without starting a process per call.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from guard.adapters import event_of
from guard.adapters.claude import hook_output, with_warnings
from guard.core.events.names import canonical_event
from guard.core.extras import require
from guard.integrations.gate import Gate
from guard.integrations.tool_calls import trusted_only
from guard.runtime.gate import CONFIG_BLOCKED_EVENTS, answer_by

require("claude-agent-sdk", "guard.integrations.claude_agent_sdk")  # on import, not at the first guard_hooks() call

if TYPE_CHECKING:
    from claude_agent_sdk import HookMatcher

__all__ = ["SDK_EVENTS", "guard_hooks"]

#: The hook events the Python SDK can register (its ``HookEvent``).
SDK_EVENTS: tuple[str, ...] = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SubagentStart",
    "PreCompact",
    "Notification",
    "PermissionRequest",
)
_DEFAULT_TIMEOUT = 60.0  # the SDK's own default per matcher


def guard_hooks(config: str | None = None, **settings: Any) -> dict[str, list[HookMatcher]]:
    """The ``hooks=`` mapping for ``ClaudeAgentOptions``: one callback per event guard has hooks for.

    ``config`` is a guard.yaml path (default: guard's usual search); ``settings``
    go to :class:`~guard.integrations.gate.Gate` (``server``, ``fail_closed``,
    ``fail_open_config``). A config that does not load still registers the
    tool-call events, so every tool call is denied with the error until it is fixed.
    """
    # lazy: claude_agent_sdk is an optional dependency
    from claude_agent_sdk import HookMatcher

    gate = Gate(config, **trusted_only(settings))
    guarded = {spec.event for spec in gate.registry.specs()}
    if gate.config_error is not None:
        guarded |= CONFIG_BLOCKED_EVENTS
    hooks: dict[str, list[HookMatcher]] = {}
    for name in SDK_EVENTS:
        event = canonical_event(name)
        if event in guarded:
            timeout = max((s.timeout for s in gate.registry.specs() if s.event == event), default=_DEFAULT_TIMEOUT) + 5
            # a callback that fails (raises, or answers what the SDK cannot read) blocks the call, as guard hook's entry does
            hooks[name] = [
                HookMatcher(matcher=None, hooks=[_callback(gate, timeout)], timeout=timeout, on_failure="block")
            ]
    return hooks


def _callback(gate: Gate, timeout: float) -> Any:
    async def guard_decide(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        """guard's answer to one SDK hook event, in Claude Code's hook output format."""
        payload, decision = await gate.adecide(dict(input_data), answer_by=answer_by(timeout, time.monotonic()))
        return with_warnings(hook_output(event_of(payload), decision), decision, payload.get("tool_name"))

    return guard_decide
