"""``guard hook --defer`` with the real Claude Code CLI: a fail_closed rule that cannot be judged pauses a headless session.

Claude Code's ``defer`` (headless ``-p`` only) ends the run with
``stop_reason: "tool_deferred"`` and the call pending, instead of denying it:
the agent does not go looking for another way, and ``claude -p --resume`` sends
the same PreToolUse again once the judge is back.
"""

from __future__ import annotations

import json

import pytest

from guard.testing.anthropic_stub import final_text, tool_use
from guard.testing.openai_stub import Reply as JudgeReply

from .conftest import AgentProject, smart_rule

pytestmark = [pytest.mark.claude, pytest.mark.slow]


def _with_defer(project: AgentProject) -> None:
    """``--defer`` on this machine's hook program (``GUARD_HOOK`` in the local settings), as docs/clients.md says to add it."""
    path = project.dir / ".claude" / "settings.local.json"
    settings = json.loads(path.read_text())
    settings["env"]["GUARD_HOOK"] += " --defer"
    path.write_text(json.dumps(settings))


@pytest.mark.parametrize("defer", [True, False])
def test_an_unjudgeable_call_is_deferred_not_denied(claude_project: AgentProject, defer: bool) -> None:
    claude_project.configure(
        smart_rule("PreToolUse", "Deny shell commands that delete files.", matcher="Bash", hook_id="no-deletes")
    )
    claude_project.judge.responder = lambda body: JudgeReply.error(503, "judge down")
    if defer:
        _with_defer(claude_project)
    marker = claude_project.dir / "ran"

    run, _ = claude_project.run(
        tool_use("Bash", {"command": f"touch {marker}", "description": "touch"}), final_text("ok")
    )

    assert not marker.exists(), run.describe()
    assert run.result is not None
    if defer:
        assert run.result.get("stop_reason") == "tool_deferred", run.describe()
        assert "touch" in json.dumps(run.result.get("deferred_tool_use")), run.describe()
    else:  # without --defer, the failure is fail_closed's deny
        assert run.result.get("stop_reason") != "tool_deferred" and run.result["permission_denials"], run.describe()
