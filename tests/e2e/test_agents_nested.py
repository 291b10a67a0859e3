"""The real Claude Code, Codex, Gemini and Copilot CLIs: a second session the agent starts from a shell call keeps
guard's hooks when its line is allowed, and one guard refuses would have run without them.

Each case is a line the agent would run (``codex exec --disable hooks 'fix the tests'``), asked of a real ``guard hook``
process as that client's shell call, and the same options (and variables) given to the real CLI, started in the project
as that line would start it. Its session asks the client's stub model, whose scripted turn is a shell ``echo`` the
project's rule denies: the hooks loaded when the model is told the rule's refusal, and were dropped when the ``echo``
ran. The plumbing every run needs (the stub as the model provider, Codex's stand-in for the one-time hook review, the
workspace trust Gemini reads from its environment) is the harness's (``tests/e2e/agent_cli.py``), the same for both.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from fixtures.processes import run_guard

from guard.testing.agent_script import final_text, tool_use
from guard.testing.anthropic_stub import AnthropicStub

from .agent_cli import COPILOT
from .conftest import AgentProject, _binary, _project

pytestmark = [pytest.mark.slow]

RULE = (
    'hooks:\n  PreToolUse:\n    - command: "if grep -q ran=; then echo refused by the project rule >&2; exit 2; fi"\n'
)
ECHO = "echo ran=4''2"  # prints ran=42, which its text does not hold


@dataclass(frozen=True)
class Client:
    """How one client's shell call looks to ``guard hook`` and to its stub model, and what the model is told back."""

    name: str
    event: str  # the hook's event for a tool call (Copilot's payload names none)
    hook_tool: str  # the shell tool's name in the hook's event
    stub_tool: str  # and in the model's reply
    results: str  # the stub request's method listing what the tool calls returned
    insert_at: int = 0  # where the options go in the harness's arguments

    def payload(self, cwd: str, command: str) -> dict[str, Any]:
        if self.name == "copilot":  # its arguments as a JSON string
            return {
                "toolName": self.hook_tool,
                "toolArgs": json.dumps({"command": command}),
                "cwd": cwd,
                "timestamp": 1,
            }
        return {"hook_event_name": self.event, "session_id": "s", "cwd": cwd, "tool_name": self.hook_tool} | {
            "tool_input": {"command": command}
        }

    def call(self, command: str) -> Any:
        arguments = {"cmd": command} if self.name == "codex" else {"command": command, "description": "run"}
        return tool_use(self.stub_tool, arguments)

    def told(self, request: Any) -> str:
        return str(getattr(request, self.results)())


CLAUDE = Client("claude", "PreToolUse", "Bash", "Bash", "tool_results")
CODEX = Client("codex", "PreToolUse", "Bash", "exec_command", "tool_outputs", insert_at=1)  # after `exec`
GEMINI = Client("gemini", "BeforeTool", "run_shell_command", "run_shell_command", "function_responses")
COPILOT_CLIENT = Client("copilot", "", "bash", "bash", "tool_results")


@pytest.fixture
def copilot_agent(tmp_path: Path) -> Iterator[AgentProject]:
    """A Copilot CLI project in a repository of its own (Copilot looks for one above the folder)."""
    binary = _binary(COPILOT)
    for project in _project(COPILOT, binary, AnthropicStub, tmp_path):
        subprocess.run(["git", "init", "-q", str(project.dir)], check=True)
        yield project


def _refusal(client: Client, project: AgentProject, line: str) -> str | None:
    """What a real ``guard hook`` says of ``line`` as the client's shell call in the project, when it refuses it."""
    done = run_guard(
        ["hook", "--format", client.name], project.dir, stdin=json.dumps(client.payload(str(project.dir), line))
    )
    said = done.stdout + done.stderr
    assert "Traceback" not in said, said
    return said if done.returncode == 2 or '"deny"' in done.stdout else None


def _told(client: Client, project: AgentProject, options: tuple[str, ...], env: dict[str, str]) -> str:
    """What the model of a real session started with ``options`` and ``env`` was told of its one ``echo``."""
    args = list(project.cli.headless_args)
    cli = replace(project.cli, headless_args=(*args[: client.insert_at], *options, *args[client.insert_at :]))
    _, agent = replace(project, cli=cli, env={**project.env, **env}).run(client.call(ECHO), final_text("ok"))
    return client.told(agent.agent_requests[1])


def _check(
    client: Client, project: AgentProject, line: str, options: tuple[str, ...], env: dict[str, str], named: str | None
) -> None:
    """guard refuses ``line`` (naming ``named``), and the session its options and variables start runs without the
    hooks; or guard allows it, and the session runs under them."""
    refused = _refusal(client, project, line)
    options = tuple(option.format(home=project.home) for option in options)
    told = _told(client, project, options, {k: v.format(home=project.home) for k, v in env.items()})
    hooked = "refused by the project rule" in told and "ran=42" not in told
    if named is None:
        assert refused is None and hooked, f"guard: {refused or 'allowed'}\nthe session was told: {told}"
    else:
        assert refused and "guard self-protection" in refused and named in refused, refused
        assert not hooked and "ran=42" in told, f"the refused options kept the hooks: {told}"


def _gemini(project: AgentProject) -> None:
    for home in (project.home, project.home / "other"):  # the API key as the sign-in, no hook
        for relative, content in project.cli.home_files:
            (home / relative).parent.mkdir(parents=True, exist_ok=True)
            (home / relative).write_text(content)
    project.configure(RULE, "--scope", "user")  # guard's hooks in ~/.gemini, which GEMINI_CLI_HOME moves


def _copilot(project: AgentProject) -> None:
    project.configure(RULE, "--scope", "user")  # in -p mode Copilot loads a project's hooks only when trusted
    (project.home / "other").mkdir()


def _codex_trusted(project: AgentProject) -> None:
    """A project the user trusted in Codex (the record in ``~/.codex/config.toml``), not trusted again by the run."""
    project.configure(RULE)
    (project.home / ".codex").mkdir(exist_ok=True)
    (project.home / ".codex" / "config.toml").write_text(f'[projects."{project.dir}"]\ntrust_level = "trusted"\n')
    project.cli = replace(project.cli, headless_args=tuple(a for a in project.cli.headless_args if a != "--trust"))


#: client: (its project fixture, how the test sets it up)
SETUP: dict[str, tuple[str, Callable[[AgentProject], object]]] = {
    "claude": ("claude_project", lambda project: project.configure(RULE, "--no-sandbox")),
    "codex": ("codex_project", lambda project: project.configure(RULE)),
    "codex, trusted before": ("codex_project", _codex_trusted),
    "gemini": ("gemini_project", _gemini),
    "copilot": ("copilot_agent", _copilot),
}
CLIENTS = {
    "claude": CLAUDE,
    "codex": CODEX,
    "codex, trusted before": CODEX,
    "gemini": GEMINI,
    "copilot": COPILOT_CLIENT,
}


def _case(client: str, line: str, options: tuple[str, ...], env: dict[str, str], named: str | None) -> Any:
    marks = [getattr(pytest.mark, CLIENTS[client].name)]
    return pytest.param(client, line, options, env, named, marks=marks, id=line.split("'")[0].strip())


#: (client, line the agent runs, the options it gives the CLI, the variables it sets, what guard's refusal names)
CASES = [
    _case("claude", "claude --max-turns 5 -p 'fix the tests'", ("--max-turns", "5"), {}, None),
    _case("claude", "CLAUDE_CODE_SIMPLE=1 claude -p 'fix'", (), {"CLAUDE_CODE_SIMPLE": "1"}, "CLAUDE_CODE_SIMPLE"),
    _case("codex", "codex exec --ephemeral 'fix the tests'", ("--ephemeral",), {}, None),
    _case("codex", "codex exec --disable hooks 'fix the tests'", ("--disable", "hooks"), {}, "--disable"),
    _case("codex", "codex exec -c features.hooks=false 'fix'", ("-c", "features.hooks=false"), {}, "features.hooks"),
    _case("codex, trusted before", "codex exec --ignore-user-config 'fix'", ("--ignore-user-config",), {}, "--ignore"),
    _case("gemini", "gemini -m gemini-2.5-pro -p 'fix the tests'", ("-m", "gemini-2.5-pro"), {}, None),
    _case(
        "gemini", "GEMINI_CLI_HOME=~/other gemini -p 'fix'", (), {"GEMINI_CLI_HOME": "{home}/other"}, "GEMINI_CLI_HOME"
    ),
    _case("copilot", "copilot --no-ask-user -p 'fix' --allow-all-tools", ("--no-ask-user",), {}, None),
    _case("copilot", "COPILOT_HOME=~/other copilot -p 'fix'", (), {"COPILOT_HOME": "{home}/other"}, "COPILOT_HOME"),
    _case("copilot", "copilot --config-dir ~/other -p 'fix'", ("--config-dir", "{home}/other"), {}, "--config-dir"),
]


@pytest.mark.parametrize(("client", "line", "options", "env", "named"), CASES)
def test_a_second_session_keeps_guard_s_hooks_or_is_refused(
    request: pytest.FixtureRequest,
    client: str,
    line: str,
    options: tuple[str, ...],
    env: dict[str, str],
    named: str | None,
) -> None:
    fixture, setup = SETUP[client]
    project: AgentProject = request.getfixturevalue(fixture)
    setup(project)
    _check(CLIENTS[client], project, line, options, env, named)
