"""One guard.yaml, unchanged, stops the same destructive effect in every real client, whichever tool reaches it.

The rule names canonical actions (``@shell|@write|@edit``), not one client's tool.
Each client (Claude Code with its Bash and its Write tool, Gemini CLI's
``run_shell_command``, Codex's shell, Copilot CLI's ``bash``) is driven by a
scripted stub of its own vendor API to destroy ``precious.txt``; the proof is
the file, still there with its content. The judge is the OpenAI-compatible stub,
denying exactly the calls whose input names the file's path; a control shows a
Write of another file runs, so only guard stood in the way.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import trust_config

import guard
from guard.setup.install import guard_program
from guard.testing.agent_script import Reply, final_text, tool_use
from guard.testing.anthropic_stub import AnthropicStub
from guard.testing.openai_stub import StubServer

from .agent_cli import CLAUDE, COPILOT
from .conftest import JUDGE_MODEL, AgentProject, _project, judge_says
from .test_copilot_cli import copilot_bin  # noqa: F401 (fixture)

pytestmark = pytest.mark.slow

#: The one config every client below runs, byte for byte.
CONFIG = """\
cache:
  url: "off"
hooks:
  PreToolUse:
    - id: keep-precious
      matcher: "@shell|@write|@edit"
      rule: Deny any call that deletes, empties or overwrites the file precious.txt.
      depth: quick
      failure_mode: fail_closed
      timeout: 120
"""
CONTENT = "keep me\n"
REASON = "this would destroy precious.txt"

#: Claude Code headless with Write allowed as well as Bash: without guard, both would run.
CLAUDE_WRITE = dataclasses.replace(
    CLAUDE, headless_args=tuple("Bash,Write" if a == "Bash" else a for a in CLAUDE.headless_args)
)


def prepared(project: AgentProject) -> Path:
    project.configure(CONFIG)
    precious = project.dir / "precious.txt"
    precious.write_text(CONTENT)
    project.judge.responder = judge_says(
        str(precious), REASON
    )  # the path, not the name: the rule's text names the file
    return precious


@pytest.fixture
def claude_project(claude_bin: Path, tmp_path: Path) -> Iterator[AgentProject]:
    yield from _project(CLAUDE_WRITE, claude_bin, AnthropicStub, tmp_path)


def claude_call(tool: str, path: Path) -> dict[str, str]:
    return (
        {"command": f"rm -f {path}", "description": "clean up"}
        if tool == "Bash"
        else {"file_path": str(path), "content": ""}
    )


@pytest.mark.claude
@pytest.mark.parametrize("tool", ["Bash", "Write"])
def test_claude_code_bash_and_write_cannot_destroy_the_file(tool: str, claude_project: AgentProject) -> None:
    precious = prepared(claude_project)

    # Claude Code writes over a file only after reading it: the Read comes first (a read is not @shell|@write|@edit)
    read = tool_use("Read", {"file_path": str(precious)})
    run, agent = claude_project.run(read, tool_use(tool, claude_call(tool, precious)), final_text("ok"))

    assert precious.read_text() == CONTENT, "the denied call destroyed the file"
    assert claude_project.judged(str(precious)) and len(claude_project.judge.requests) == 1  # the Read was not judged
    assert [d["tool_name"] for d in run.result["permission_denials"]] == [tool]
    assert REASON in str(agent.agent_requests[2].tool_results())


@pytest.mark.claude
def test_claude_codes_write_of_another_file_runs(claude_project: AgentProject) -> None:
    """The control: Write is allowed here, so only guard stood between the Write above and the file."""
    prepared(claude_project)
    other = claude_project.dir / "notes.txt"

    run, agent = claude_project.run(
        tool_use("Write", {"file_path": str(other), "content": "written\n"}), final_text("ok")
    )

    assert other.is_file() and other.read_text() == "written\n", (
        run.result,
        str(agent.agent_requests[1].tool_results()),
    )


@pytest.mark.gemini
def test_gemini_run_shell_command_cannot_destroy_the_file(gemini_project: AgentProject) -> None:
    precious = prepared(gemini_project)

    gemini_project.run(
        tool_use("run_shell_command", {"command": f"rm -f {precious}", "description": "clean up"}), final_text("ok")
    )

    assert precious.read_text() == CONTENT and gemini_project.judged(str(precious))


@pytest.mark.codex
def test_codex_shell_cannot_destroy_the_file(codex_project: AgentProject) -> None:
    precious = prepared(codex_project)

    codex_project.run(tool_use("exec_command", {"cmd": f"rm -f {precious}"}), final_text("ok"))

    assert precious.read_text() == CONTENT and codex_project.judged(str(precious))


@pytest.mark.copilot
def test_copilot_bash_cannot_destroy_the_file(copilot_bin: Path, tmp_path: Path) -> None:  # noqa: F811 (the fixture)
    """Copilot has no ``guard install`` target: its hook file is the one it documents, in the throwaway HOME."""
    home, project = tmp_path / "agent-home", tmp_path / "project"
    (home / ".copilot" / "hooks").mkdir(parents=True)
    project.mkdir()
    (project / "guard.yaml").write_text(CONFIG)
    trust_config(project / "guard.yaml")
    precious = project / "precious.txt"
    precious.write_text(CONTENT)
    command = shlex.join([*guard_program(), "hook", "--format", "copilot", "--deadline", "30"])
    # Copilot runs a hook in the folder it takes for the project (the nearest git root above, even /tmp's), and
    # guard hook finds guard.yaml from its working directory: the hook entry's cwd names the project
    hooks = {
        "version": 1,
        "hooks": {"preToolUse": [{"type": "command", "bash": command, "cwd": str(project), "timeoutSec": 30}]},
    }
    (home / ".copilot" / "hooks" / "guard.json").write_text(json.dumps(hooks))
    turns: list[Reply] = [
        tool_use("bash", {"command": f"rm -f {precious}", "description": "clean up"}),
        final_text("ok"),
    ]
    with StubServer() as judge:
        judge.responder = judge_says(str(precious), REASON)
        env = {
            "GUARD_API_BASE": judge.url,
            "GUARD_MODEL_QUICK": JUDGE_MODEL,
            "GUARD_MODEL_THOROUGH": JUDGE_MODEL,
            "OPENAI_API_KEY": "sk-test",
            "PYTHONPATH": str(Path(guard.__file__).resolve().parents[1]),
        }
        with AnthropicStub(turns) as agent:
            done = COPILOT.run(
                copilot_bin, "do the task", cwd=project, base_url=agent.base_url, home=home, env=env, timeout_s=300
            )
        assert done.returncode == 0, done.describe()
        asked = any(str(precious) in str(body.get("messages")) for body in judge.requests)

    assert precious.is_file() and precious.read_text() == CONTENT, (
        f"the denied command destroyed the file\n{done.describe()}"
    )
    assert asked, "the judge was never asked"
    assert REASON in str(agent.agent_requests[1].tool_results())
