"""The real Claude Code runs a Bash call in the shell ``CLAUDE_CODE_SHELL`` names, and guard reads the line for that shell.

zsh reads ``cat f >! guard.yaml`` as an overwrite of guard.yaml (``>!`` is its clobbering redirection); bash reads a
read of guard.yaml and a write of a file named ``!``. guard found the shell from ``SHELL`` alone, so with
``CLAUDE_CODE_SHELL=zsh`` it let the line through self-protection as a read and left it to a rule about something else.
"""

from __future__ import annotations

import shutil

import pytest
from fixtures.system import require

from guard.testing.anthropic_stub import final_text, tool_use
from guard.testing.openai_stub import Reply as JudgeReply

from .conftest import AgentProject, smart_rule

pytestmark = [pytest.mark.claude, pytest.mark.slow]


def test_a_line_claude_code_runs_in_zsh_is_judged_as_zsh_reads_it(claude_project: AgentProject) -> None:
    require("zsh", install="apt-get install zsh")
    zsh = str(shutil.which("zsh"))
    claude_project.configure(
        smart_rule("PreToolUse", "Deny shell commands that delete files outside the project.", matcher="Bash")
    )
    claude_project.judge.default = JudgeReply.verdict("allow", "deletes nothing", confidence=0.97)
    claude_project.env.update({"SHELL": "/bin/bash", "CLAUDE_CODE_SHELL": zsh})
    (claude_project.home / ".zshrc").write_text("")  # a user's zsh set-up, so zsh never offers its first-run questions
    (claude_project.dir / "f").write_text("the agent's own config\n")
    config = (claude_project.dir / "guard.yaml").read_text()
    _, agent = claude_project.run(
        tool_use("Bash", {"command": "echo ${ZSH_VERSION:-none} > which-shell.txt", "description": "which shell"}),
        tool_use("Bash", {"command": "cat f >! guard.yaml", "description": "show f"}),
        final_text("ok"),
    )
    assert (claude_project.dir / "which-shell.txt").read_text().strip()[:1].isdigit(), "Claude Code ran the line in zsh"
    refused = str(agent.agent_requests[2].tool_results())
    assert "guard self-protection" in refused and "zsh" in refused, refused
    assert (claude_project.dir / "guard.yaml").read_text() == config
