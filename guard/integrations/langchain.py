"""LangChain 1.x: guard as an agent middleware that judges each tool call before it runs.

``create_agent(model, tools, middleware=[GuardMiddleware()])``: a call guard
denies never reaches its tool; the model gets a ToolMessage (status ``error``)
with guard's reason instead. A rewrite runs the rewritten arguments. ``ask``
has no person to ask inside an agent loop and is refused with the reason.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from guard.core.extras import missing_extra
from guard.integrations.tool_calls import ToolCallGate, ToolVerdict

try:
    from langchain.agents.middleware import AgentMiddleware
    from langchain.agents.middleware.types import ToolCallRequest
    from langchain_core.messages import ToolMessage
except ModuleNotFoundError as exc:
    raise missing_extra("langchain", "guard.integrations.langchain", exc) from exc

__all__ = ["GuardMiddleware"]


class GuardMiddleware(AgentMiddleware):
    """Judge every tool call with guard (one gate per middleware: its config, cache and audit log).

    Arguments are those of :class:`~guard.integrations.tool_calls.ToolCallGate`:
    ``config`` (a guard.yaml path), ``session_id``, ``cwd``, ``deadline``, and
    Gate options (``server``, ``fail_closed``, ``fail_open_config``).
    """

    def __init__(self, config: str | None = None, **options: Any) -> None:
        super().__init__()
        self.guard = ToolCallGate(config, **options)

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        call = request.tool_call
        judged = self.guard.judge_sync(call["name"], dict(call.get("args") or {}), session_id=_thread_id())
        return handler(_rewritten(request, judged)) if judged.allowed else _refusal(request, judged)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        call = request.tool_call
        judged = await self.guard.judge(call["name"], dict(call.get("args") or {}), session_id=_thread_id())
        return await handler(_rewritten(request, judged)) if judged.allowed else _refusal(request, judged)


def _rewritten(request: ToolCallRequest, judged: ToolVerdict) -> ToolCallRequest:
    return request.override(tool_call={**request.tool_call, "args": judged.tool_input}) if judged.rewritten else request


def _refusal(request: ToolCallRequest, judged: ToolVerdict) -> ToolMessage:
    """What the model sees instead of the tool's output."""
    return ToolMessage(
        content=judged.message or "guard denied this call",
        tool_call_id=request.tool_call["id"],
        name=request.tool_call["name"],
        status="error",
    )


def _thread_id() -> str | None:
    """The LangGraph thread the agent runs in (guard's session), when there is one."""
    try:
        # lazy: langgraph is an optional dependency
        from langgraph.config import get_config

        thread = get_config().get("configurable", {}).get("thread_id")
    except RuntimeError:  # called outside a runnable context
        return None
    return str(thread) if thread is not None else None
