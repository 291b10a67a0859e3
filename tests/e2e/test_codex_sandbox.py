"""Under the real Codex CLI, the permission profile ``guard install codex`` writes holds where guard's own analysis cannot see.

As for Claude Code (``test_claude_sandbox.py``): the command is decoded and run by
the shell, so only Codex's sandbox (its bubblewrap on Linux) can refuse it. A
write into guard's state folder and into guard.yaml fails, reading guard's secret
fails, a write elsewhere in the project works.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from guard.testing.agent_script import final_text, tool_use

from .conftest import AgentProject
from .test_claude_sandbox import hidden

pytestmark = [pytest.mark.codex, pytest.mark.slow]

CONFIG = 'hooks:\n  PreToolUse:\n    - id: anything\n      command: "cat > /dev/null"\n'


def test_a_shell_write_into_guards_store_fails_and_a_write_in_the_project_works(codex_project: AgentProject) -> None:
    project = codex_project
    secret_file = Path(os.environ["XDG_CONFIG_HOME"]) / "guard" / "secret"
    secret_file.parent.mkdir(parents=True, exist_ok=True)
    secret = "e2e-secret-fedcba9876543210"
    secret_file.write_text(secret + "\n")
    state = project.home / ".local" / "state" / "guard"
    project.configure(CONFIG)
    yaml_before = (project.dir / "guard.yaml").read_text()
    script = (
        f"touch {state}/planted; echo state=$?; cat {secret_file}; echo secret=$?; "
        "echo 'protect: false' >> guard.yaml; echo config=$?; touch made-in-project; echo project=$?"
    )

    _, agent = project.run(tool_use("exec_command", {"cmd": hidden(script)}), final_text("ok"))

    shown = str(agent.agent_requests[1].tool_outputs())
    assert "project=0" in shown and (project.dir / "made-in-project").exists(), shown
    assert "state=0" not in shown and not (state / "planted").exists(), shown
    assert "secret=0" not in shown and secret not in shown, shown
    assert "config=0" not in shown and (project.dir / "guard.yaml").read_text() == yaml_before, shown
