"""A Codex session started with options that put another sandbox in place of guard's profile is told so as it starts.

``codex -s workspace-write`` (or ``-c sandbox_mode=…``) left guard.yaml writable under the real CLI
(``tests/e2e/test_codex_sandbox.py``), and neither the config files nor the event show it. Codex starts each hook
itself, so the hook's parent is the session's ``codex``: here a process whose name is ``codex`` and whose arguments
are the session's starts the hook ``guard install codex`` wrote, as the real one does.
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


def _session_start(project: Path, *options: str) -> str:
    """What guard's SessionStart hook says in a session ``codex OPTIONS`` started in ``project``."""
    hook = [sys.executable, "-m", "guard.cli.main", *_guard_args(project / ".codex/hooks.json", "SessionStart")]
    event = {"hook_event_name": "SessionStart", "session_id": "s1", "cwd": str(project), "source": "startup"}
    done = subprocess.run(
        ["bash", "-c", 'exec -a codex "$@"', "bash", sys.executable, "-c", _CODEX, *options, "--", *hook],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ((), None),
        (("exec", "--json", "-m", "o3", "-c", "model_reasoning_effort=high"), None),
        (("exec", "-s", "workspace-write"), "-s"),
        (("-c", 'sandbox_mode="danger-full-access"', "exec"), "-c sandbox_mode"),
        (('--config=default_permissions=":workspace"',), "--config default_permissions"),
        (("--dangerously-bypass-approvals-and-sandbox",), "--dangerously-bypass-approvals-and-sandbox"),
        (("exec", "-p", "loose"), "-p"),
    ],
    ids=["plain", "model", "sandbox", "sandbox_mode", "default_permissions", "bypass", "profile"],
)
def test_a_session_started_with_another_sandbox_is_told_which_option_puts_guard_s_profile_aside(
    tmp_path: Path, options: tuple[str, ...], named: str | None
) -> None:
    project = _installed_repository(tmp_path)

    said = _session_start(project, *options)

    if named is None:
        assert "in place of guard's profile" not in said, said
    else:
        assert f"started with {named}, which puts another sandbox in place of guard's profile" in said, said
