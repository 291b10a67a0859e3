"""The real Claude Code CLI: the installed hook keeps judging after the agent's `cd`.

Claude Code runs hook commands in the session's current folder, and its Bash tool keeps a
`cd`. Searched from there, guard would find no config (or one the agent wrote) and
enforce nothing for the rest of the session. What ``guard install`` writes anchors the
hook to the project, for ``guard hook`` itself and for the curl client's fallback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.testing.anthropic_stub import final_text, tool_use

from .conftest import AgentProject

pytestmark = [pytest.mark.claude, pytest.mark.slow]

DENY_SCRIPT = "grep -q 'rm -rf' && { echo 'guard-e2e: deletes a directory' >&2; exit 2; }; exit 0\n"
CONFIG = 'hooks:\n  PreToolUse:\n    - id: no-deletes\n      matcher: Bash\n      command: "sh deny.sh"\n'


@pytest.mark.parametrize("client", ["guard", "curl"])
def test_after_a_cd_into_a_subfolder_a_denied_call_stays_denied(
    claude_project: AgentProject, client: str, short_state: Path
) -> None:
    """With ``--client curl`` no service runs (a command rule starts none): its fallback ``guard hook`` decides."""
    (claude_project.dir / "deny.sh").write_text(DENY_SCRIPT)
    (claude_project.dir / "src").mkdir()
    # what the agent may have written there: a config of its own, which must not shadow the trusted one
    (claude_project.dir / "src" / "guard.yaml").write_text("protect: false\nhooks: {}\n")
    claude_project.configure(CONFIG, "--client", client, timeout="60")
    victim = claude_project.dir / "victim"
    victim.mkdir()

    run, agent = claude_project.run(
        tool_use("Bash", {"command": "cd src && pwd", "description": "cd"}),
        tool_use("Bash", {"command": f"rm -rf {victim}", "description": "rm"}),
        final_text("ok"),
    )

    told = str(agent.agent_requests[2].tool_results())
    assert str(claude_project.dir / "src") in told, f"the first call did not move the session into src: {told}"
    assert victim.exists(), f"after the cd, the denied call ran: {told} {run.describe()}"
    assert "deletes a directory" in told, f"not denied by the project's rule: {told}"
