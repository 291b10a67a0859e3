"""GitHub Copilot CLI, headless against the scripted Anthropic stub (its BYOK provider), with guard as its preToolUse hook.

Copilot CLI 1.0.102 does not load a repository's ``.github/hooks/*.json`` in
``-p`` mode (github/copilot-cli#3345), so the hook goes in the throwaway HOME's
``~/.copilot/hooks/``, which it loads in every mode: ``guard install copilot --scope user``
writes it there (``~/.copilot/hooks/guard.json``).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import trust_config

import guard
from guard.setup.install import guard_program
from guard.testing.anthropic_stub import AnthropicStub, final_text, tool_use

from .agent_cli import COPILOT, AgentRun
from .conftest import _binary

pytestmark = [pytest.mark.slow, pytest.mark.copilot]

POLICY = """
import guard

def no_deletes(event):
    if "rm -rf" in event.tool_input.get("command", ""):
        return guard.deny("deleting folders is not allowed in this project")
"""


@pytest.fixture(scope="session")
def copilot_bin() -> Path:
    return _binary(COPILOT)  # session-scoped: found before each test's environment drops GUARD_* variables


@pytest.fixture
def copilot_project(copilot_bin: Path, tmp_path: Path) -> Iterator[tuple[Path, Path, Path]]:
    binary = copilot_bin
    home, project = tmp_path / "agent-home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    # the project is its own repository: Copilot looks for the repository root above the cwd, and must not find a stray one
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "policy.py").write_text(POLICY)
    (project / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: bash\n      callable: policy:no_deletes\n"
    )
    trust_config(project / "guard.yaml")
    done = subprocess.run(
        [*guard_program(), "install", "copilot", "--scope", "user"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(home)},
    )
    assert done.returncode == 0, done.stderr
    hook = json.loads((home / ".copilot" / "hooks" / "guard.json").read_text())["hooks"]["preToolUse"][0]
    assert hook["type"] == "command" and hook["timeoutSec"] == 30 and "--format copilot" in hook["bash"]
    yield binary, home, project


def run(binary: Path, home: Path, project: Path, command: str) -> tuple[AgentRun, AnthropicStub]:
    env = {"PYTHONPATH": os.pathsep.join([str(project), str(Path(guard.__file__).resolve().parents[1])])}
    with AnthropicStub([tool_use("bash", {"command": command, "description": "run"}), final_text("ok")]) as agent:
        done = COPILOT.run(
            binary, "do the task", cwd=project, base_url=agent.base_url, home=home, env=env, timeout_s=300
        )
    assert done.returncode == 0, done.describe()
    return done, agent


def assert_a_delete_is_denied(binary: Path, home: Path, project: Path) -> None:
    """The agent's `touch … && rm -rf …` never runs, and the model is told the policy's reason."""
    victim, marker = project / "victim", project / "ran"
    victim.mkdir()

    _, agent = run(binary, home, project, f"touch {marker} && rm -rf {victim}")

    assert not marker.exists() and victim.is_dir(), "the denied command ran"
    assert "deleting folders is not allowed in this project" in str(agent.agent_requests[1].tool_results())


def test_a_denied_shell_call_never_runs_and_the_model_is_told_why(copilot_project: tuple[Path, Path, Path]) -> None:
    assert_a_delete_is_denied(*copilot_project)


def test_an_allowed_shell_call_runs(copilot_project: tuple[Path, Path, Path]) -> None:
    binary, home, project = copilot_project
    marker = project / "ran"

    _, agent = run(binary, home, project, f"touch {marker} && echo hello-from-the-shell")

    assert marker.exists()
    assert "hello-from-the-shell" in str(agent.agent_requests[1].tool_results())
