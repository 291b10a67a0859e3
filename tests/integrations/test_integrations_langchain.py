"""LangChain 1.x ``create_agent`` with ``GuardMiddleware``: the real agent loop, a scripted chat model, guard in-process.

The chat model is langchain_core's own fake (it replays AIMessages with tool
calls); the tool appends to a list, so "did it run, with what" is observable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from fixtures.integration import guard_yaml, write_trusted
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from guard.integrations.langchain import GuardMiddleware


class ScriptedModel(GenericFakeChatModel):
    """langchain_core's fake chat model, accepting the tools the agent binds (it replays its script regardless)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def calls(*commands: str) -> list[AIMessage]:
    """The model's script: one shell call per turn, then a final answer."""
    turns = [
        AIMessage(content="", tool_calls=[{"name": "shell", "args": {"command": c}, "id": f"call_{i}"}])
        for i, c in enumerate(commands)
    ]
    return [*turns, AIMessage(content="done")]


def agent_with(middleware: GuardMiddleware, script: list[AIMessage], ran: list[str]) -> Any:
    @tool
    def shell(command: str) -> str:
        """Run a shell command."""
        ran.append(command)
        return f"ran: {command}"

    return create_agent(ScriptedModel(messages=iter(script)), tools=[shell], middleware=[middleware])


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_denied_call_never_runs_and_its_reason_reaches_the_model(
    isolated_home: Path, policy: Any, mode: str
) -> None:
    write_trusted(isolated_home / "guard.yaml", guard_yaml("shell"))
    ran: list[str] = []
    agent = agent_with(
        GuardMiddleware(str(isolated_home / "guard.yaml")), calls("rm -rf /srv", "ls", "echo REWRITE-ME"), ran
    )
    request = {"messages": [{"role": "user", "content": "clean up"}]}

    result = agent.invoke(request) if mode == "sync" else await agent.ainvoke(request)

    assert ran == ["ls", "echo rewritten-by-guard"]  # the denied call never ran; the rewrite ran as rewritten
    denied, allowed, _ = tool_messages(result)
    assert denied.status == "error" and "deleting folders is not allowed in this project" in denied.content
    assert allowed.content == "ran: ls"
    # guard judged each call (and re-checked the rewritten input against every hook)
    assert [c["command"] for c in policy.judged] == ["rm -rf /srv", "ls", "echo REWRITE-ME", "echo rewritten-by-guard"]


async def test_ask_is_refused_because_no_person_is_in_the_loop(isolated_home: Path, policy: Any) -> None:
    write_trusted(isolated_home / "guard.yaml", guard_yaml("shell"))
    ran: list[str] = []

    result = await agent_with(
        GuardMiddleware(str(isolated_home / "guard.yaml")), calls("release APPROVE-ME"), ran
    ).ainvoke({"messages": [{"role": "user", "content": "go"}]})

    assert ran == []
    assert "a person signs off on releases" in tool_messages(result)[0].content


@pytest.mark.parametrize("mode", ["fail_open", "fail_closed"])
async def test_a_failing_hook_follows_its_failure_mode(
    isolated_home: Path, policy: Any, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    write_trusted(isolated_home / "guard.yaml", guard_yaml("shell", failure_mode=mode, callable_name="broken"))
    ran: list[str] = []

    result = await agent_with(GuardMiddleware(str(isolated_home / "guard.yaml")), calls("ls"), ran).ainvoke(
        {"messages": [{"role": "user", "content": "go"}]}
    )

    if mode == "fail_closed":
        assert ran == [] and "the policy service is down" in tool_messages(result)[0].content
    else:
        assert ran == ["ls"]
        assert "the policy service is down" in caplog.text  # allowed, but not silently


async def test_a_config_that_does_not_load_blocks_every_tool(isolated_home: Path) -> None:
    write_trusted(
        isolated_home / "guard.yaml", "hooks:\n  PreToolUse:\n    - matcher: shell\n      rule: [not, a, rule]\n"
    )
    ran: list[str] = []

    result = await agent_with(GuardMiddleware(str(isolated_home / "guard.yaml")), calls("ls"), ran).ainvoke(
        {"messages": [{"role": "user", "content": "go"}]}
    )

    assert ran == [] and "guard.yaml" in tool_messages(result)[0].content


async def test_a_smart_rule_judges_through_the_model_once_and_the_cache_answers_the_next_agent(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from guard.testing.openai_stub import Reply, StubServer

    write_trusted(
        isolated_home / "guard.yaml",
        "models: {quick: openai/stub-quick}\nhooks:\n  PreToolUse:\n    - id: no-delete\n      matcher: shell\n      depth: quick\n"
        "      rule: Deny shell commands that delete files.\n",
    )
    with StubServer() as stub:
        stub.default = Reply.verdict("deny", "deletes the user's files", confidence=0.95)
        monkeypatch.setenv("GUARD_API_BASE", stub.url)
        results, ran = [], []
        for _ in range(2):  # two agents, each with its own middleware: one config, one cache
            agent = agent_with(GuardMiddleware(str(isolated_home / "guard.yaml")), calls("rm -rf ~/photos"), ran)
            results.append(await agent.ainvoke({"messages": [{"role": "user", "content": "go"}]}))
        assert stub.calls == 1
    assert ran == []
    assert all("deletes the user's files" in tool_messages(r)[0].content for r in results)
