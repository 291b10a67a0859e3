"""The real Codex CLI in a git worktree of a project whose ``.codex/`` (guard's hooks and sandbox profile) is committed.

Codex (0.171) trusts a worktree as its main checkout (``--trust`` there records the main checkout's folder), runs the
*main checkout's* ``.codex/hooks.json`` there (guard's hook anchored to the main checkout, ``--project``) and reads
the worktree's own copy of ``.codex/config.toml``. The hook sees the session's
folder (the event's ``cwd``) is a worktree of the same repository and enforces the worktree's own trusted config, not
the main checkout's it was installed for. The profile names files by their absolute paths (relative ones broke sessions
started in a subfolder, ``guard.sandbox.codex``): once ``guard install codex`` ran in the worktree, a write into its
guard.yaml fails at the OS.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.git import commit, git

from guard.testing.agent_script import final_text, tool_use

from .conftest import AgentProject
from .test_claude_sandbox import hidden
from .test_codex_sandbox import CONFIG

pytestmark = [pytest.mark.codex, pytest.mark.slow]

#: the worktree's own rule, which the main checkout's config (``CONFIG``: every call allowed) does not have
FEATURE_RULE = 'hooks:\n  PreToolUse:\n    - command: "echo the feature branch runs no commands >&2; exit 2"\n'


def _session(project: AgentProject, checkout: Path) -> str:
    """One Codex session in ``checkout`` whose one command (hidden from any hook) appends to its guard.yaml: what the
    command's result told the model."""
    write = hidden(f"echo '# planted' >> {checkout / 'guard.yaml'}; echo wrote=$?")
    _, agent = project.run(tool_use("exec_command", {"cmd": write}), final_text("ok"), cwd=checkout)
    assert len(agent.agent_requests) == 2, agent.agent_requests
    return str(agent.agent_requests[1].tool_outputs())


def test_a_worktree_is_judged_by_its_own_config_and_sandboxed_once_guard_is_installed_there(
    codex_project: AgentProject,
) -> None:
    project = codex_project
    project.configure(CONFIG)
    commit(project.dir)  # .codex/ committed, as a team shares it
    worktree = project.dir.parent / "feature"
    git(project.dir, "worktree", "add", "-q", str(worktree))
    (worktree / "guard.yaml").write_text(FEATURE_RULE)
    trust_config(worktree / "guard.yaml")  # the user reviewed the branch's guard.yaml and trusted it

    told = _session(project, worktree)
    assert "the feature branch runs no commands" in told and "wrote=" not in told, told

    # the committed profile names the main checkout's files (the session's first message says so:
    # tests/setup/test_other_checkout.py); guard install codex in the worktree names its own
    (worktree / "guard.yaml").write_text(CONFIG)
    replace(project, dir=worktree).install()
    trust_config(worktree / "guard.yaml")
    told = _session(project, worktree)  # the main checkout's hook judges, the worktree's profile holds
    assert "wrote=0" not in told and "Read-only file system" in told, told
    assert "# planted" not in (worktree / "guard.yaml").read_text()
