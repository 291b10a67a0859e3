"""In every real client guard can drive here, a smart rule's deny stops the command and the model is told why.

Claude Code, Gemini CLI and Codex CLI each run against a scripted stub of their
own vendor API, with guard installed by ``guard install <client>``; the judge is
the OpenAI-compatible stub. What is asserted is what a user relies on: whether
the command ran, and what the model saw in the next request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from guard.testing.agent_script import Reply, final_text, tool_use

from .conftest import AgentProject, judge_says, smart_rule

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Client:
    """How one client names its shell tool and hands tool results back to the model."""

    fixture: str
    shell_tool: str  # the tool_name guard's matcher sees
    call: Callable[[str], Reply]  # the model turn that runs a command
    results: Callable[[Any], str]  # the tool results in the next request, as text


CLIENTS = [
    pytest.param(
        Client(
            "claude_project",
            "Bash",
            lambda c: tool_use("Bash", {"command": c, "description": "run"}),
            lambda r: str(r.tool_results()),
        ),
        id="claude",
        marks=pytest.mark.claude,
    ),
    pytest.param(
        Client(
            "gemini_project",
            "run_shell_command",
            lambda c: tool_use("run_shell_command", {"command": c, "description": "run"}),
            lambda r: str(r.function_responses()),
        ),
        id="gemini",
        marks=pytest.mark.gemini,
    ),
    pytest.param(
        Client(
            "codex_project", "Bash", lambda c: tool_use("exec_command", {"cmd": c}), lambda r: str(r.tool_outputs())
        ),
        id="codex",
        marks=pytest.mark.codex,
    ),
]


def no_deletes(matcher: str) -> str:
    return smart_rule("PreToolUse", "Deny shell commands that delete files or directories.", matcher=matcher)


@pytest.mark.parametrize("client", CLIENTS)
def test_a_smart_rule_denies_a_shell_call_and_the_model_is_told_why(
    client: Client, request: pytest.FixtureRequest
) -> None:
    project: AgentProject = request.getfixturevalue(client.fixture)
    project.configure(no_deletes(client.shell_tool))
    victim = project.dir / "victim"
    victim.mkdir()
    marker = project.dir / "ran"
    command = f"touch {marker} && rm -rf {victim}"
    project.judge.responder = judge_says("rm -rf", "deletes the victim directory")

    run, agent = project.run(client.call(command), final_text("ok"))

    assert not marker.exists() and victim.is_dir(), "the denied command ran"
    assert project.judged(command)
    assert "deletes the victim directory" in client.results(agent.agent_requests[1])
    if client.fixture == "claude_project":  # Claude Code also lists the denial in its JSON result
        assert [d["tool_input"]["command"] for d in run.result["permission_denials"]] == [command]


@pytest.mark.parametrize("client", CLIENTS)
def test_an_allowed_shell_call_runs_and_its_output_reaches_the_model(
    client: Client, request: pytest.FixtureRequest
) -> None:
    project: AgentProject = request.getfixturevalue(client.fixture)
    project.configure(no_deletes(client.shell_tool))
    marker = project.dir / "ran"
    command = f"touch {marker} && echo hello-from-the-shell"
    project.judge.responder = judge_says("rm -rf", "deletes files")

    _, agent = project.run(client.call(command), final_text("ok"))

    assert marker.exists()
    assert project.judged(command), "the smart rule was never consulted"
    assert "hello-from-the-shell" in client.results(agent.agent_requests[1])
