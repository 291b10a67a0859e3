"""The real Claude Code CLI: a second Claude Code session the agent starts from Bash runs under guard's hooks, and one
started with settings that switch them off is refused before it starts.

The agent's first call runs ``claude -p …``; that second session asks the same Anthropic stub, whose next scripted turn
is a Bash ``touch`` the project's rule denies. Plainly started, the second session's hooks are the project's, and guard
denies its ``touch``. Started with ``--settings '{"disableAllHooks": true}'`` it ran the ``touch`` with no hook at all,
until self-protection refused such a start (``guard/protection/nested_agent.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from guard.testing.anthropic_stub import final_text, tool_use

from .conftest import AgentProject

pytestmark = [pytest.mark.claude, pytest.mark.slow]

NO_TOUCH = (
    "hooks:\n  PreToolUse:\n    - id: no-touch\n      matcher: Bash\n"
    '      command: "if grep -q touch; then echo no touching >&2; exit 2; fi"\n'
)


@pytest.mark.parametrize(
    ("options", "refused"), [("", False), ("--settings '{\"disableAllHooks\": true}'", True)], ids=["plain", "unhooked"]
)
def test_a_second_claude_session_is_guarded_or_refused(
    claude_project: AgentProject, options: str, refused: bool
) -> None:
    claude_project.configure(
        NO_TOUCH, "--client", "guard", "--no-sandbox"
    )  # a second Claude Code under the first one's sandbox is another question
    marker = claude_project.dir / "ran-nested"
    second = f"claude -p 'help me' {options} --allowedTools Bash --output-format text".replace("  ", " ")
    claude_project.env["PATH"] = os.pathsep.join([str(Path(claude_project.binary).parent), os.environ["PATH"]])
    run, agent = claude_project.run(
        tool_use("Bash", {"command": second, "description": "ask a second agent"}),
        tool_use("Bash", {"command": f"touch {marker}", "description": "touch"}),  # the second session's call
        final_text("second done"),
        final_text("ok"),
    )
    told = str(agent.agent_requests[1].tool_results())
    assert not marker.exists(), f"the second session ran a call the rule denies: {told} {run.describe()}"
    if refused:
        assert "guard self-protection" in told and "--settings" in told, told
    else:
        assert "no touching" in str(agent.agent_requests[2].tool_results()), run.describe()  # its own hook denied it
