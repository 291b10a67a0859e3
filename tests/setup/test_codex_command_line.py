"""A Codex session started with options that put another sandbox in place of guard's profile has its tool calls denied.

``codex -s workspace-write`` (or ``-c sandbox_mode=…``) left guard.yaml writable under the real CLI
(``tests/e2e/test_codex_sandbox.py``), and neither the config files nor the event show it. Codex starts each hook
itself, so the hook's parent is the session's ``codex``: here a process whose name is ``codex`` and whose arguments
are the session's starts the hook ``guard install codex`` wrote, as the real one does. ``codex exec`` shows no
SessionStart message, so the reason reaches the user as each tool call's denial.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.processes import SOURCE_ROOT
from test_other_checkout import _guard_args, _installed_repository

#: The stand-in for the session's ``codex``: it runs the hook's command (after ``--``) as its child.
_CODEX = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[sys.argv.index('--') + 1 :]).returncode)"
PUT_ASIDE = "which puts another sandbox in place of guard's profile"


def _answers(project: Path, *options: str, home: Path | None = None) -> tuple[dict, str]:
    """guard's PreToolUse answer (the JSON) and SessionStart output in a session ``codex OPTIONS`` started in ``project``."""
    said = []
    for event in (
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}},
        {"hook_event_name": "SessionStart", "source": "startup"},
    ):
        hook = [sys.executable, "-m", "guard.cli.main", *_guard_args(project / ".codex/hooks.json", "PreToolUse")]
        done = subprocess.run(
            ["bash", "-c", 'exec -a codex "$@"', "bash", sys.executable, "-c", _CODEX, *options, "--", *hook],
            input=json.dumps({"session_id": "s1", "cwd": str(project), **event}),
            capture_output=True,
            text=True,
            cwd=project,
            env={**os.environ, "PYTHONPATH": SOURCE_ROOT, **({"CODEX_HOME": str(home)} if home else {})},
            timeout=120,
        )
        assert done.returncode in (0, 2), done.stderr
        said.append(done.stdout + done.stderr)
    return json.loads(said[0] or "{}"), said[1]


def _denied(answer: dict) -> str | None:
    specific = answer.get("hookSpecificOutput", {})
    return specific.get("permissionDecisionReason") if specific.get("permissionDecision") == "deny" else None


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ((), None),
        (("exec", "--json", "-m", "o3", "-c", "model_reasoning_effort=high"), None),
        (("exec", "-s", "workspace-write"), "-s"),
        (("-c", 'sandbox_mode="danger-full-access"', "exec"), "-c sandbox_mode"),
        (('--config=default_permissions=":workspace"',), "--config default_permissions"),
        (("--dangerously-bypass-approvals-and-sandbox",), "--dangerously-bypass-approvals-and-sandbox"),
        (("exec", "-p", "loose"), "-p loose"),
        (("exec", "--profile=fast"), None),
        (("exec", "-p", "guarded"), None),
        (("-c", 'default_permissions="guard"', "exec"), None),
    ],
    ids=[
        "plain",
        "model",
        "sandbox",
        "sandbox_mode",
        "default_permissions",
        "bypass",
        "profile",
        "profile_model",
        "profile_guard",
        "guard_s_profile",
    ],
)
def test_a_session_started_with_another_sandbox_has_its_tool_calls_denied_naming_the_option(
    tmp_path: Path, options: tuple[str, ...], named: str | None
) -> None:
    project = _installed_repository(tmp_path)
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "loose.config.toml").write_text('sandbox_mode = "danger-full-access"\n')
    (home / "fast.config.toml").write_text('model = "o3"\n')  # a profile file that leaves the sandbox as it is
    (home / "guarded.config.toml").write_text('model = "o3"\ndefault_permissions = "guard"\n')

    answer, start = _answers(project, *options, home=home)

    if named is None:
        assert _denied(answer) is None and PUT_ASIDE not in start, (answer, start)
    else:
        reason = _denied(answer)
        assert reason and f"started with {named}, {PUT_ASIDE}" in reason, answer
        assert "guard install codex --no-sandbox" in reason, reason
        assert f"started with {named}" in start, start  # and as the session starts, where the client shows it


def test_a_session_of_a_project_installed_without_codex_s_sandbox_may_put_it_aside(tmp_path: Path) -> None:
    """``guard install codex --no-sandbox``: the user chose to run guard without Codex's sandbox."""
    project = _installed_repository(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "guard.cli.main", "install", "codex", "--scope", "project", "--no-sandbox"],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr

    answer, start = _answers(project, "exec", "--dangerously-bypass-approvals-and-sandbox")

    assert _denied(answer) is None and PUT_ASIDE not in start, (answer, start)
