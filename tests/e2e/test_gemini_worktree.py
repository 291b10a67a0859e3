"""The real Gemini CLI in a git worktree of a project whose ``.gemini/settings.json`` (guard's hook) is committed.

The hook ``guard install gemini`` writes names the project's absolute path (``--project``), which a worktree's
committed copy keeps: the hook sees Gemini's project folder (``GEMINI_PROJECT_DIR``, set by Gemini, not by the agent) is a worktree of the same repository and
enforces the worktree's config, so the worktree's own trusted rule applies there, not the main checkout's.
"""

from __future__ import annotations

import pytest
from conftest import trust_config
from fixtures.git import commit, git

from guard.testing.agent_script import final_text, tool_use

from .conftest import AgentProject
from .test_codex_sandbox import CONFIG
from .test_codex_worktree import FEATURE_RULE

pytestmark = [pytest.mark.gemini, pytest.mark.slow]


def test_a_worktree_is_judged_by_its_own_config(gemini_project: AgentProject) -> None:
    project = gemini_project
    project.configure(CONFIG)  # the main checkout's config lets every call run
    commit(project.dir)
    worktree = project.dir.parent / "feature"
    git(project.dir, "worktree", "add", "-q", str(worktree))
    (worktree / "guard.yaml").write_text(FEATURE_RULE)
    trust_config(worktree / "guard.yaml")

    call = tool_use("run_shell_command", {"command": "echo ran=42", "description": "run"})
    _, agent = project.run(call, final_text("ok"), cwd=worktree)

    told = str(agent.agent_requests[1].function_responses())
    assert "the feature branch runs no commands" in told and "ran=42" not in told.replace("echo ran=42", ""), told
