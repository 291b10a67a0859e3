"""One tool call judged in-process, for SDKs whose hook sees only a tool name and its input.

The OpenAI Agents SDK and LangChain have no allow/deny/ask/rewrite protocol of
their own: a tool either runs or the model gets a message instead. This module
turns guard's decision into that: ``ask`` has no person to ask and is refused
(the model is told a person must approve), a rewrite runs the rewritten input
where the SDK can, and warnings (allowed but not judged) are logged.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from guard.core.decision import Decision
from guard.integrations.gate import Gate
from guard.runtime.gate import answer_by

__all__ = ["ToolCallGate", "ToolVerdict", "trusted_only", "verdict"]

log = logging.getLogger("guard.integrations")


@dataclass(frozen=True, slots=True)
class ToolVerdict:
    """Whether the call may run, the input to run it with, and what the model is told when it may not."""

    allowed: bool
    tool_input: dict[str, Any]
    message: str | None = None
    rewritten: bool = False
    warnings: list[str] = field(default_factory=list)


def trusted_only(options: dict[str, Any]) -> dict[str, Any]:
    """An SDK's gate enforces the config the user trusted, as ``guard hook`` does, unless ``pinned=False`` is asked for.

    The agent an SDK runs can write files, the config among them, and a cloned
    repository's guard.yaml may name command hooks: an untrusted config denies every
    tool call, saying to run ``guard trust``. ``pinned=False`` is for a program with no
    person to trust it (CI), whose config is part of its own code.
    """
    return {"pinned": True, **options}


class ToolCallGate:
    """A gate for one agent's tool calls (one per integration object: it keeps the warm model clients).

    ``config`` is a guard.yaml path (default: guard's usual search); ``session_id``
    names the agent run for session-aware rules and the audit log (default: a
    fresh id per object); ``deadline`` bounds each decision in seconds (hooks
    still running fail under their ``failure_mode``); other keywords go to
    :class:`~guard.integrations.gate.Gate` (``server``, ``fail_closed``, ``fail_open_config``; ``pinned=False``
    enforces the file as it is on disk, :func:`trusted_only`).
    """

    def __init__(
        self,
        config: str | None = None,
        *,
        session_id: str | None = None,
        cwd: str | None = None,
        deadline: float | None = None,
        **options: Any,
    ) -> None:
        self.gate = Gate(config, **trusted_only(options))
        self.session_id = session_id or f"guard-{uuid.uuid4()}"
        self.cwd = cwd
        self.deadline = deadline

    def event(self, tool_name: str, tool_input: dict[str, Any], session_id: str | None = None) -> dict[str, Any]:
        """The PreToolUse event guard judges (Claude Code's field names)."""
        event: dict[str, Any] = {
            "hook_event_name": "PreToolUse",
            "tool_name": tool_name,
            "tool_input": tool_input,
            "session_id": session_id or self.session_id,
        }
        if self.cwd:
            event["cwd"] = self.cwd
        return event

    async def judge(self, tool_name: str, tool_input: dict[str, Any], *, session_id: str | None = None) -> ToolVerdict:
        """guard's decision on one call, as the SDK can act on it (on the running event loop)."""
        by = answer_by(self.deadline, time.monotonic())
        _, decision = await self.gate.adecide(self.event(tool_name, tool_input, session_id), answer_by=by)
        return verdict(tool_name, tool_input, decision)

    def judge_sync(self, tool_name: str, tool_input: dict[str, Any], *, session_id: str | None = None) -> ToolVerdict:
        """:meth:`judge` for synchronous agents (a cache hit takes the fast path: no event loop)."""
        by = answer_by(self.deadline, time.monotonic())
        _, decision = self.gate.decide(self.event(tool_name, tool_input, session_id), answer_by=by)
        return verdict(tool_name, tool_input, decision)


def verdict(tool_name: str, tool_input: dict[str, Any], decision: Decision) -> ToolVerdict:
    """What the SDK does with ``decision``; its warnings are logged (the SDK has no channel to show them)."""
    for warning in decision.warnings:
        log.warning("guard: %s", warning)
    if decision.decision == "deny":
        return ToolVerdict(
            False,
            tool_input,
            f"guard denied this {tool_name} call: {decision.reason or 'denied'}",
            warnings=decision.warnings,
        )
    if decision.decision == "ask":
        message = f"guard: a person must approve this {tool_name} call and none is available here: {decision.reason or 'approval required'}"
        return ToolVerdict(False, tool_input, message, warnings=decision.warnings)
    if decision.updated_input is not None:
        return ToolVerdict(True, decision.updated_input, decision.reason, rewritten=True, warnings=decision.warnings)
    return ToolVerdict(True, tool_input, warnings=decision.warnings)
