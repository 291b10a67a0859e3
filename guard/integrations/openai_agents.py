"""OpenAI Agents SDK: guard as a tool-input guardrail, the SDK's own check before a function tool runs.

``guard_agent_tools(agent)`` attaches one guardrail to every function tool of an
agent; ``guard_tool_guardrail()`` makes the guardrail for ``@function_tool(tool_input_guardrails=[...])``.
A call guard denies is rejected: the tool does not run and the model gets
guard's reason as the tool's result. ``ask`` has no person to ask and is
rejected with the reason. A tool input guardrail cannot change the arguments,
so a rewrite is rejected too, telling the model the input guard would run.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from guard.core.extras import missing_extra
from guard.integrations.tool_calls import ToolCallGate

try:
    from agents import Agent, FunctionTool, ToolGuardrailFunctionOutput, ToolInputGuardrail, ToolInputGuardrailData
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
        judged = await gate.judge(tool.tool_name, arguments if isinstance(arguments, dict) else {"arguments": arguments})
        if not judged.allowed:
            return ToolGuardrailFunctionOutput.reject_content(judged.message or "guard denied this call", output_info=judged)
        if judged.rewritten:
            message = f"guard allows this {tool.tool_name} call only with these arguments; call it again with them: {json.dumps(judged.tool_input)}"
            return ToolGuardrailFunctionOutput.reject_content(message, output_info=judged)
        return ToolGuardrailFunctionOutput.allow(output_info=judged)

    return ToolInputGuardrail(guardrail_function=guard, name="guard")


def guard_agent_tools(agent: Agent[Any], config: str | None = None, **options: Any) -> Agent[Any]:
    """Attach one guard guardrail to every function tool of ``agent`` (in place; returns the agent).

    Hosted tools (web search, code interpreter…) run at OpenAI and take no
    tool guardrails: they are logged as unguarded, never silently skipped.
    """
    guardrail = guard_tool_guardrail(config, **options)
    for tool in agent.tools:
        if isinstance(tool, FunctionTool):
            kept = [g for g in tool.tool_input_guardrails or [] if g.get_name() != guardrail.get_name()]  # attaching twice replaces
            tool.tool_input_guardrails = [*kept, guardrail]
        else:
            log.warning("guard: the %s tool %r is not a function tool and cannot be guarded", type(tool).__name__, getattr(tool, "name", tool))
    return agent
