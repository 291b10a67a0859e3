"""Under the real Codex CLI, the agent names the shell a command runs in, and guard's lanes hold for it.

Codex's ``exec_command`` takes a ``shell`` from the agent (``/bin/sh`` is dash on Debian) and its
PreToolUse payload carries only the command, so guard cannot know which shell will read the line.
dash reads ``$'\\'…'`` as a ``$`` and a quoted string that ends at the ``\\'``: what bash reads as one
word of ``echo`` is a second command there. Before the prover refused ``$'…'`` the line below was
allowed by the project-writes lane with no model call, and dash ran the ``touch`` outside the project.
"""

from __future__ import annotations

import pytest

from guard.testing.agent_script import final_text, tool_use

from .conftest import AgentProject, judge_says, smart_rule

pytestmark = [pytest.mark.codex, pytest.mark.slow]


def test_a_line_dash_reads_otherwise_reaches_the_judge(codex_project: AgentProject) -> None:
    project = codex_project
    rule = "Deny shell commands that delete or overwrite files outside the project directory."
    project.configure(smart_rule("PreToolUse", rule, matcher="Bash") + "      skip_project_writes: true\n")
    outside = project.dir.parent / "pwned-by-dash"
    command = f"echo $'\\'; touch {outside} #\\''"
    project.judge.responder = judge_says("touch", "writes outside the project")

    _, agent = project.run(tool_use("exec_command", {"cmd": command, "shell": "/bin/sh"}), final_text("ok"))

    assert project.judged("touch"), "decided without the judge"
    assert not outside.exists(), str(agent.agent_requests[1].tool_outputs())
