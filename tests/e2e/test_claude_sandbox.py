"""Under the real Claude Code CLI, the sandbox ``guard install claude`` configures holds where guard's own analysis cannot see.

The agent's command is base64 decoded and run by the shell, so no hook can read
which paths it names: it is the sandbox (bubblewrap on Linux) that must refuse
it. A write into guard's state folder, into the project's audit log and into
guard.yaml fails at the operating system, reading guard's secret fails, and a
write elsewhere in the project works.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from guard.testing.anthropic_stub import final_text, tool_use

from .conftest import AgentProject

pytestmark = [pytest.mark.claude, pytest.mark.slow]

CONFIG = 'audit: {path: .guard/audit.db}\nhooks:\n  PreToolUse:\n    - id: anything\n      matcher: Bash\n      command: "cat > /dev/null"\n'


def hidden(script: str) -> str:
    """``script`` as the shell will run it, with no path in the command line for a hook to read."""
    return f"echo {base64.b64encode(script.encode()).decode()} | base64 -d | sh"


def test_a_bash_write_into_guards_store_fails_at_the_os_level_and_a_write_in_the_project_works(
    claude_project: AgentProject,
) -> None:
    secret_file = Path(os.environ["XDG_CONFIG_HOME"]) / "guard" / "secret"  # where guard hook, under Claude, keeps it
    secret_file.parent.mkdir(parents=True, exist_ok=True)
    secret = "e2e-secret-0123456789abcdef"
    secret_file.write_text(secret + "\n")
    state = claude_project.home / ".local" / "state" / "guard"
    claude_project.configure(CONFIG)
    (claude_project.dir / ".guard").mkdir(exist_ok=True)
    audit = claude_project.dir / ".guard" / "audit.db"
    audit.write_bytes(b"")  # guard hook fills it; here it only has to exist before the agent's command
    yaml_before, audit_before = (claude_project.dir / "guard.yaml").read_text(), audit.read_bytes()
    script = (
        f"mkdir -p {state}; touch {state}/planted; echo state=$?; cat {secret_file}; echo secret=$?; "
        f"echo junk >> {audit}; echo audit=$?; echo 'protect: false' >> guard.yaml; echo config=$?; "
        "touch made-in-project; echo project=$?"
    )

    _, agent = claude_project.run(tool_use("Bash", {"command": hidden(script), "description": "run"}), final_text("ok"))

    shown = str(agent.agent_requests[1].tool_results())
    assert "project=0" in shown and (claude_project.dir / "made-in-project").exists(), shown
    assert "state=1" in shown and "Read-only file system" in shown and not (state / "planted").exists(), shown
    assert "secret=1" in shown and secret not in shown, shown
    assert "audit=0" not in shown and "config=0" not in shown, shown
    assert (claude_project.dir / "guard.yaml").read_text() == yaml_before
    assert audit.read_bytes()[: len(audit_before)] == audit_before and b"junk" not in audit.read_bytes()
