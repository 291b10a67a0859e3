"""The real Claude Code CLI in a git worktree of a project guard is installed in.

Claude Code (2.1.332) gives a linked worktree the main checkout's ``.claude/settings.local.json``: its
``GUARD_HOOK`` and a sandbox that names the main checkout's files, so in a new worktree the worktree's own guard.yaml
is writable from a sandboxed Bash. guard's hook still enforces the worktree's trusted config, and as the session starts
it tells the user the checkout is not set up; ``guard install claude`` in the worktree adds the worktree's own paths
(Claude Code merges the two local files' sandbox lists), and the message stops.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.git import commit, git

from guard.testing.anthropic_stub import final_text, tool_use

from .conftest import AgentProject
from .test_claude_sandbox import CONFIG, hidden

pytestmark = [pytest.mark.claude, pytest.mark.slow]

NOT_SET_UP = "guard install claude was not run for you in this checkout"


def _installed_in_git(project: AgentProject, *files: str) -> None:
    """guard installed in the project (its sandbox too), a git repository with ``files`` committed."""
    project.configure(CONFIG, "--client", "guard")
    commit(project.dir, *files)


def _session(project: AgentProject, checkout: Path, write: str | None = None, *args: str) -> tuple[str, str]:
    """One session in ``checkout`` whose one Bash call runs ``write``, by default one (hidden from any hook) that appends
    to that checkout's guard.yaml, with Claude Code's ``args``: (what the SessionStart hooks said, what the call printed)."""
    streaming = replace(
        project.cli,
        headless_args=(
            "-p",
            "{prompt}",
            "--output-format",
            "stream-json",
            "--verbose",
            "--allowedTools",
            "Bash",
            *args,
        ),
    )
    write = write or hidden(f"echo '# planted' >> {checkout / 'guard.yaml'}; echo wrote=$?")
    with project.stub((tool_use("Bash", {"command": write, "description": "run"}), final_text("ok"))) as agent:
        run = streaming.run(
            project.binary,
            "do the task",
            cwd=checkout,
            base_url=agent.base_url,
            home=project.home,
            env=project.env,
            timeout_s=600,
        )
    assert run.returncode == 0 and len(agent.agent_requests) == 2, run.describe()
    events: list[dict[str, Any]] = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    said = " ".join(
        str(e.get("output"))
        for e in events
        if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"
    )
    return said, str(agent.agent_requests[1].tool_results())


def test_a_new_worktree_is_told_it_is_not_set_up_until_guard_install_claude_covers_its_files(
    claude_project: AgentProject,
) -> None:
    _installed_in_git(claude_project, "-A")
    worktree = claude_project.dir.parent / "feature"
    git(claude_project.dir, "worktree", "add", "-q", str(worktree))
    trust_config(worktree / "guard.yaml")  # the user reviewed the branch's guard.yaml and trusted it

    said, told = _session(claude_project, worktree)
    assert NOT_SET_UP in said and str(worktree) in said, said
    assert "wrote=0" in told, told  # what the message is about: main's sandbox does not name this checkout's files

    git(worktree, "checkout", "--", "guard.yaml")
    old, claude_project.dir = claude_project.dir, worktree
    try:
        claude_project.install("--client", "guard")
    finally:
        claude_project.dir = old
    said, told = _session(claude_project, worktree)
    assert NOT_SET_UP not in said, said
    assert "wrote=0" not in told and "Read-only file system" in told, told
    assert "# planted" not in (worktree / "guard.yaml").read_text()


def test_the_agent_cannot_take_guard_out_of_a_claude_worktree_s_settings_for_a_later_session_there(
    claude_project: AgentProject,
) -> None:
    """A session started in a worktree (``claude`` there, ``claude --worktree NAME``) reads the worktree's own
    .claude/settings.json: with guard's hooks taken out of it, it runs no hook at all (2.1.332). From the project, the
    agent's plain Bash write into it is refused by guard (the sandbox ignores glob denies, so guard cannot have it
    deny every worktree's), and the later session there runs guard's hooks."""
    _installed_in_git(claude_project, "-A")
    worktree = claude_project.dir / ".claude" / "worktrees" / "y"
    git(claude_project.dir, "worktree", "add", "-q", str(worktree))  # what EnterWorktree and claude --worktree y make
    trust_config(worktree / "guard.yaml")
    settings = worktree / ".claude" / "settings.json"
    launcher = settings.read_text()

    _, told = _session(claude_project, claude_project.dir, f"echo '{{}}' > {settings}; echo wrote=$?")
    assert "wrote=0" not in told and "guard self-protection" in told, told
    assert settings.read_text() == launcher

    said, told = _session(claude_project, worktree, "echo 'protect: false' >> guard.yaml; echo wrote=$?")
    assert NOT_SET_UP in said, said  # guard's SessionStart hook ran there
    assert "wrote=0" not in told and "guard self-protection" in told, told


def test_claude_worktree_runs_no_guard_where_the_shared_settings_are_not_committed_and_doctor_says_so(
    claude_project: AgentProject,
) -> None:
    _installed_in_git(claude_project, "guard.yaml")  # .claude/settings.json, guard's launcher, left out
    said, told = _session(
        claude_project, claude_project.dir, "echo 'protect: false' >> guard.yaml; echo wrote=$?", "--worktree", "x"
    )
    assert said == "" and "wrote=0" in told, told  # no guard hook ran in the new worktree: guard cannot act there

    doctor = claude_project.doctor()
    assert "claude worktree" in doctor and "not in the last commit" in doctor, doctor
