"""The OpenAI Agents SDK's ``Runner`` with guard's tool input guardrail: the SDK's real agent loop, a scripted model.

The model is a minimal implementation of the SDK's ``Model`` interface that
replays function calls and records what it was sent, so the test sees what the
model was told; the tool appends to a list, so "did it run, with what" is observable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
from agents.models.interface import Model
from fixtures.integration import guard_yaml, write_trusted
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from guard.integrations.openai_agents import guard_agent_tools

set_tracing_disabled(True)  # the SDK would otherwise export traces to OpenAI


class ScriptedModel(Model):
    """Replays one shell call per turn, then a final answer; keeps every input it was sent."""

    def __init__(self, *commands: str) -> None:
        self.turns = [
            [
                ResponseFunctionToolCall(
                    type="function_call", call_id=f"call_{i}", name="shell", arguments=json.dumps({"command": c})
                )
            ]
            for i, c in enumerate(commands)
        ]
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:  # noqa: A002 - the SDK's name
        self.inputs.append(input)
        if self.turns:
            return ModelResponse(output=list(self.turns.pop(0)), usage=Usage(), response_id=None)
        done = ResponseOutputMessage(
            id="msg",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text="done", annotations=[])],
        )
        return ModelResponse(output=[done], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the tests run the agent without streaming")


def tool_outputs(model: ScriptedModel) -> list[str]:
    """The tool results the model was sent, in order."""
    last = model.inputs[-1]
    return [item["output"] for item in last if isinstance(item, dict) and item.get("type") == "function_call_output"]


def agent_for(model: ScriptedModel, ran: list[str]) -> Agent[Any]:
    @function_tool
    def shell(command: str) -> str:
        """Run a shell command."""
        ran.append(command)
        return f"ran: {command}"

    return Agent(name="worker", model=model, tools=[shell])


async def test_a_denied_call_never_runs_and_the_model_is_told_why(isolated_home: Path, policy: Any) -> None:
    write_trusted(isolated_home / "guard.yaml", guard_yaml("shell"))
    ran: list[str] = []
    model = ScriptedModel("rm -rf /srv", "ls")
    agent = guard_agent_tools(agent_for(model, ran), str(isolated_home / "guard.yaml"))

    result = await Runner.run(agent, "clean up")

    assert ran == ["ls"]
    denied, allowed = tool_outputs(model)
    assert "deleting folders is not allowed in this project" in denied
    assert allowed == "ran: ls"
    assert result.final_output == "done"


async def test_a_rewrite_is_offered_to_the_model_and_its_retry_runs(isolated_home: Path, policy: Any) -> None:
    write_trusted(isolated_home / "guard.yaml", guard_yaml("shell"))
    ran: list[str] = []
    model = ScriptedModel("echo REWRITE-ME", "echo rewritten-by-guard")  # the model takes the offered arguments
    agent = guard_agent_tools(
        guard_agent_tools(agent_for(model, ran), str(isolated_home / "guard.yaml")), str(isolated_home / "guard.yaml")
    )

    await Runner.run(agent, "go")

    assert ran == ["echo rewritten-by-guard"]  # the original input never ran
    assert '"command": "echo rewritten-by-guard"' in tool_outputs(model)[0]
    assert len(agent.tools[0].tool_input_guardrails) == 1  # attaching twice did not judge twice


@pytest.mark.parametrize("mode", ["fail_open", "fail_closed"])
async def test_a_failing_hook_follows_its_failure_mode(
    isolated_home: Path, policy: Any, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    write_trusted(isolated_home / "guard.yaml", guard_yaml("shell", failure_mode=mode, callable_name="broken"))
    ran: list[str] = []
    model = ScriptedModel("ls")

    await Runner.run(guard_agent_tools(agent_for(model, ran), str(isolated_home / "guard.yaml")), "go")

    if mode == "fail_closed":
        assert ran == [] and "the policy service is down" in tool_outputs(model)[0]
    else:
        assert ran == ["ls"] and "the policy service is down" in caplog.text  # allowed, but not silently


async def test_ask_is_rejected_because_no_person_is_in_the_loop(isolated_home: Path, policy: Any) -> None:
    write_trusted(isolated_home / "guard.yaml", guard_yaml("shell"))
    ran: list[str] = []
    model = ScriptedModel("release APPROVE-ME")

    await Runner.run(guard_agent_tools(agent_for(model, ran), str(isolated_home / "guard.yaml")), "go")

    assert ran == [] and "a person signs off on releases" in tool_outputs(model)[0]


def calls(*turns: tuple[str, dict[str, Any]]) -> ScriptedModel:
    """A scripted model whose turns are one named function call each."""
    model = ScriptedModel()
    model.turns = [
        [
            ResponseFunctionToolCall(
                type="function_call", call_id=f"call_{name}_{i}", name=name, arguments=json.dumps(args)
            )
        ]
        for i, (name, args) in enumerate(turns)
    ]
    return model


def test_tools_behind_handoffs_and_agents_used_as_tools_are_guarded_and_named(
    isolated_home: Path, policy: Any, caplog: pytest.LogCaptureFixture
) -> None:
    ran: list[str] = []
    ops = agent_for(calls(), ran)
    ops.name = "ops"
    helper = agent_for(calls(), ran)
    helper.name = "helper"
    triage = Agent(
        name="triage",
        model=calls(),
        handoffs=[ops],
        tools=[helper.as_tool(tool_name="ask_helper", tool_description="helps")],
    )
    ops.handoffs = [triage]  # a cycle: each agent is visited once

    with caplog.at_level("INFO", logger="guard.integrations"):
        guard_agent_tools(triage, str(isolated_home / "guard.yaml"))

    assert "guarding 3 function tools: triage.ask_helper, helper.shell, ops.shell" in caplog.text


async def test_a_handoff_agents_shell_call_is_judged(isolated_home: Path, policy: Any) -> None:
    write_trusted(isolated_home / "guard.yaml", guard_yaml("'@shell'"))
    ran: list[str] = []
    ops_model = calls(("shell", {"command": "rm -rf /srv/data"}))
    ops = agent_for(ops_model, ran)
    ops.name = "ops"
    triage = Agent(name="triage", model=calls(("transfer_to_ops", {})), handoffs=[ops])
    guard_agent_tools(triage, str(isolated_home / "guard.yaml"))

    await Runner.run(triage, "clean up")

    assert ran == []
    assert any("deleting folders is not allowed in this project" in out for out in tool_outputs(ops_model))


async def test_an_agent_used_as_a_tool_has_its_shell_call_judged(isolated_home: Path, policy: Any) -> None:
    write_trusted(isolated_home / "guard.yaml", guard_yaml("'@shell'"))
    ran: list[str] = []
    helper_model = calls(("shell", {"command": "rm -rf /srv/data"}))
    helper = agent_for(helper_model, ran)
    helper.name = "helper"
    triage = Agent(
        name="triage",
        model=calls(("ask_helper", {"input": "clean /srv"})),
        tools=[helper.as_tool(tool_name="ask_helper", tool_description="helps")],
    )
    guard_agent_tools(triage, str(isolated_home / "guard.yaml"))

    await Runner.run(triage, "clean up")

    assert ran == []
    assert any("deleting folders is not allowed in this project" in out for out in tool_outputs(helper_model))
