"""The real Codex CLI skips a project's ``.codex/`` (guard's hooks and profile) where it has no trust record, silently.

The record lives in ``$CODEX_HOME/config.toml``: a ``CODEX_HOME`` other than the one the project was trusted in (or a
project never trusted) has none, and ``codex exec`` (0.171) then runs every call with no guard hook and no profile,
saying nothing. guard cannot run there to tell; ``guard doctor``, run with that ``CODEX_HOME``, says so, and stops
once the project is trusted in it, when Codex runs guard's hook again.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from guard.testing.agent_script import final_text, tool_use

from .conftest import AgentProject

pytestmark = [pytest.mark.codex, pytest.mark.slow]

DENY_ALL = 'hooks:\n  PreToolUse:\n    - command: "echo refused by the project rule >&2; exit 2"\n'


def _doctor(project: AgentProject, codex_home: Path) -> str:
    return project.doctor(CODEX_HOME=str(codex_home))


def _told(project: AgentProject, codex_home: Path) -> str:
    """What the model was told of one ``echo`` it ran in a session under ``codex_home``, without ``--trust``."""
    untrusting = replace(project.cli, headless_args=tuple(a for a in project.cli.headless_args if a != "--trust"))
    with project.stub((tool_use("exec_command", {"cmd": "echo ran=$((40 + 2))"}), final_text("ok"))) as agent:
        run = untrusting.run(
            project.binary,
            "do the task",
            cwd=project.dir,
            base_url=agent.base_url,
            home=project.home,
            env={**project.env, "CODEX_HOME": str(codex_home)},
            timeout_s=600,
        )
    assert run.returncode == 0 and len(agent.agent_requests) == 2, run.describe()
    return str(agent.agent_requests[1].tool_outputs())


def test_another_codex_home_runs_calls_without_guard_and_doctor_says_so_until_the_project_is_trusted_there(
    codex_project: AgentProject,
) -> None:
    project = codex_project
    project.configure(DENY_ALL)
    codex_home = project.home / "another-codex-home"
    codex_home.mkdir()

    assert "ran=42" in _told(project, codex_home)  # no guard hook ran: Codex read no .codex/ here
    assert "codex trust" in _doctor(project, codex_home)

    (codex_home / "config.toml").write_text(f'[projects."{project.dir}"]\ntrust_level = "trusted"\n')
    told = _told(project, codex_home)
    assert "refused by the project rule" in told and "ran=42" not in told, told
    assert "codex trust" not in _doctor(project, codex_home)
