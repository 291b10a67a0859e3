"""The real Claude Code CLI: what ``guard install claude`` writes holds when guard cannot run, and in a teammate's clone.

A hook program that is gone (a removed venv), hangs or is missing on a teammate's machine
must block the call, never let it through: ``onFailure: "block"`` on every hook, and the
shared launcher's own message for a teammate who has not installed guard. The project is
committed and cloned with git, so the clone has exactly what a team shares.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.git import commit, git

from guard.testing.anthropic_stub import final_text, tool_use

from .conftest import AgentProject
from .test_claude_anchored import CONFIG, DENY_SCRIPT

pytestmark = [pytest.mark.claude, pytest.mark.slow]


def _touch(project: AgentProject, cwd: Path | None = None) -> tuple[Path, str]:
    """One Bash call that creates a file: whether it ran, and what Claude Code told the model."""
    marker = (cwd or project.dir) / "ran"
    old, project.dir = project.dir, cwd or project.dir
    try:
        run, agent = project.run(
            tool_use("Bash", {"command": f"touch {marker}", "description": "touch"}), final_text("ok")
        )
    finally:
        project.dir = old
    assert len(agent.agent_requests) == 2, run.describe()
    return marker, f"{agent.agent_requests[1].tool_results()} {run.describe()}"


def _set_personal(project: AgentProject, value: str) -> None:
    local = project.dir / ".claude/settings.local.json"
    settings = json.loads(local.read_text())
    settings["env"]["GUARD_HOOK"] = value
    local.write_text(json.dumps(settings))


def test_a_hook_program_that_is_gone_or_hangs_blocks_the_call(claude_project: AgentProject) -> None:
    (claude_project.dir / "deny.sh").write_text(DENY_SCRIPT)
    claude_project.configure(CONFIG, "--client", "guard", "--events", "PreToolUse", timeout="60")
    _set_personal(
        claude_project, "/gone/venv/bin/guard hook --deadline 60"
    )  # the venv guard was installed from was removed
    marker, told = _touch(claude_project)
    assert not marker.exists(), f"the call ran although guard's hook program is gone: {told}"
    assert "ended with status 127; the call is blocked" in told, told

    claude_project.install(
        "--client", "guard", "--events", "PreToolUse", timeout="3"
    )  # a 3 s client timeout, and a program that never answers
    _set_personal(claude_project, "sleep 60; #")
    marker, told = _touch(claude_project)
    assert not marker.exists(), f"the call ran although Claude Code killed guard's hook: {told}"
    assert 'onFailure is \\"block\\"' in told or 'onFailure is "block"' in told, told


def test_a_user_scope_hook_whose_program_is_gone_blocks_the_call(claude_project: AgentProject) -> None:
    """The user-scope entry runs guard directly (no launcher): only onFailure stands between a missing program and the call."""
    (claude_project.dir / "deny.sh").write_text(DENY_SCRIPT)
    claude_project.configure(CONFIG, "--scope", "user", "--client", "guard", "--events", "PreToolUse", timeout="60")
    user = claude_project.home / ".claude/settings.json"
    settings = json.loads(user.read_text())
    for groups in settings["hooks"].values():
        for handler in groups[0]["hooks"]:
            words = shlex.split(handler["command"])
            handler["command"] = shlex.join(["/gone/venv/bin/guard", *words[1:]])
    user.write_text(json.dumps(settings))
    marker, told = _touch(claude_project)
    assert not marker.exists(), f"the call ran although guard's hook program is gone: {told}"
    assert "onFailure" in told, told


def test_a_teammate_without_guard_is_blocked_and_told_what_to_run_then_guarded_once_they_install_it(
    claude_project: AgentProject,
) -> None:
    (claude_project.dir / "deny.sh").write_text(DENY_SCRIPT)
    claude_project.configure(CONFIG, "--client", "guard", timeout="60")
    commit(claude_project.dir)
    committed = git(claude_project.dir, "ls-files").split()
    assert ".claude/settings.json" in committed and ".claude/settings.local.json" not in committed, committed
    clone = claude_project.dir.parent / "teammate"
    git(claude_project.dir.parent, "clone", "-q", str(claude_project.dir), str(clone))

    claude_project.env["PATH"] = "/usr/bin:/bin"  # the teammate's machine: no guard on PATH, none installed here
    old, claude_project.dir = claude_project.dir, clone
    try:
        with claude_project.stub(
            (tool_use("Bash", {"command": f"touch {clone / 'ran'}", "description": "touch"}), final_text("ok"))
        ) as agent:
            run = claude_project.cli.run(
                claude_project.binary,
                "do the task",
                cwd=clone,
                base_url=agent.base_url,
                home=claude_project.home,
                env=claude_project.env,
            )
    finally:
        claude_project.dir = old
    said = run.result["result"] if run.result else run.describe()
    assert agent.agent_requests == [] and not (clone / "ran").exists(), (
        f"the teammate's session ran unguarded: {run.describe()}"
    )
    assert "guard is not installed for you here" in said and "guard install claude" in said, (
        said
    )  # their first prompt says what to run

    old, claude_project.dir = claude_project.dir, clone
    try:
        claude_project.install(
            "--client", "guard", timeout="60"
        )  # the teammate installs guard and trusts the project's config
        trust_config(clone / "guard.yaml")
        assert git(clone, "status", "--porcelain") == "", "installing rewrote what the team shares"
        victim = clone / "victim"
        victim.mkdir()
        run, agent = claude_project.run(
            tool_use("Bash", {"command": f"rm -rf {victim}", "description": "rm"}), final_text("ok")
        )
    finally:
        claude_project.dir = old
    told = str(agent.agent_requests[1].tool_results())
    assert victim.exists() and "deletes a directory" in told, f"{told} {run.describe()}"
