"""OpenAI Agents SDK: guard as a tool-input guardrail, the SDK's own check before a function tool runs.

``guard_agent_tools(agent)`` attaches one guardrail to every function tool reachable
from an agent (its handoffs and agents used as tools too); ``guard_tool_guardrail()`` makes the guardrail for ``@function_tool(tool_input_guardrails=[...])``.
A call guard denies is rejected: the tool does not run and the model gets
guard's reason as the tool's result. ``ask`` has no person to ask and is
rejected with the reason. A tool input guardrail cannot change the arguments,
so a rewrite is rejected too, telling the model the input guard would run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

from guard.core.extras import missing_extra
from guard.integrations.tool_calls import ToolCallGate

try:
    from agents import (
        Agent,
        FunctionTool,
        Handoff,
        ToolGuardrailFunctionOutput,
        ToolInputGuardrail,
        ToolInputGuardrailData,
    )
except ModuleNotFoundError as exc:  # the install line, not "No module named 'agents'"
    raise missing_extra("openai-agents", "guard.integrations.openai_agents", exc) from exc

__all__ = ["guard_agent_tools", "guard_tool_guardrail"]

log = logging.getLogger("guard.integrations")


def guard_tool_guardrail(config: str | None = None, **options: Any) -> ToolInputGuardrail[Any]:
    """A tool input guardrail judging each call with guard (one gate: its config, cache and audit log).

    Arguments are those of :class:`~guard.integrations.tool_calls.ToolCallGate`:
    ``config`` (a guard.yaml path), ``session_id``, ``cwd``, ``deadline``, and
    Gate options (``server``, ``fail_closed``, ``fail_open_config``).
    """
    gate = ToolCallGate(config, **options)

    async def guard(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        tool = data.context
        try:
            arguments = json.loads(tool.tool_arguments or "{}")
        except json.JSONDecodeError as exc:
            arguments = {"unparsed_arguments": tool.tool_arguments, "parse_error": str(exc)}
        judged = await gate.judge(
            tool.tool_name, arguments if isinstance(arguments, dict) else {"arguments": arguments}
        )
        if not judged.allowed:
            return ToolGuardrailFunctionOutput.reject_content(
                judged.message or "guard denied this call", output_info=judged
            )
        if judged.rewritten:
            message = f"guard allows this {tool.tool_name} call only with these arguments; call it again with them: {json.dumps(judged.tool_input)}"
            return ToolGuardrailFunctionOutput.reject_content(message, output_info=judged)
        return ToolGuardrailFunctionOutput.allow(output_info=judged)

    return ToolInputGuardrail(guardrail_function=guard, name="guard")


def guard_agent_tools(agent: Agent[Any], config: str | None = None, **options: Any) -> Agent[Any]:
    """Attach one guard guardrail to every function tool reachable from ``agent`` (in place; returns the agent).

    Reachable: the agent's tools, the tools of agents it hands off to and of agents
    used as tools (``Agent.as_tool``), recursively. The guarded tools are logged by
    name (INFO); hosted tools (web search, code interpreter…) run at OpenAI and take
    no tool guardrails, and MCP servers' tools are listed only at run time: both are
    logged as unguarded (WARNING), never silently skipped.
    """
    guardrail = guard_tool_guardrail(config, **options)
    guarded: list[str] = []
    for owner, tool in _reachable_tools(agent):
        if isinstance(tool, FunctionTool):
            kept = [
                g for g in tool.tool_input_guardrails or [] if g.get_name() != guardrail.get_name()
            ]  # attaching twice replaces
            tool.tool_input_guardrails = [*kept, guardrail]
            guarded.append(f"{owner.name}.{tool.name}")
        else:
            log.warning(
                "guard: the %s tool %r of agent %r is not a function tool and cannot be guarded",
                type(tool).__name__,
                getattr(tool, "name", tool),
                owner.name,
            )
    log.info(
        "guard: guarding %d function tool%s: %s",
        len(guarded),
        "" if len(guarded) == 1 else "s",
        ", ".join(guarded) or "none",
    )
    return agent


def _reachable_tools(root: Agent[Any]) -> Iterator[tuple[Agent[Any], Any]]:
    """(agent, tool) for every tool of ``root`` and of each agent reachable by a handoff or as a tool, each agent once."""
    seen: set[int] = set()
    pending = [root]
    while pending:
        agent = pending.pop(0)
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        if getattr(agent, "mcp_servers", None):
            log.warning("guard: agent %r has MCP servers; their tools are not guarded by guard_agent_tools", agent.name)
        for tool in agent.tools:
            yield agent, tool
            inner = getattr(tool, "_agent_instance", None)  # Agent.as_tool keeps the agent it runs
            if isinstance(inner, Agent):
                pending.append(inner)
        for target in agent.handoffs:
            reached = target if isinstance(target, Agent) else _handoff_agent(target)
            if reached is None:
                log.warning(
                    "guard: the handoff %r of agent %r does not say which agent it runs; that agent's tools are not guarded",
                    getattr(target, "tool_name", target),
                    agent.name,
                )
            else:
                pending.append(reached)


def _handoff_agent(target: Handoff[Any, Any]) -> Agent[Any] | None:
    """The agent a ``handoff(...)`` object runs (the SDK keeps a weak reference to it), or None."""
    ref = getattr(target, "_agent_ref", None)
    agent = ref() if callable(ref) else None
    return agent if isinstance(agent, Agent) else None
