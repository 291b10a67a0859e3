"""The real Claude Code CLI obeys guard beyond deny/allow: rewrites, prompt blocks and stop hooks.

Claude Code talks to a scripted Anthropic stub; guard's smart rules are judged by
the OpenAI-compatible stub. What is asserted is what a user relies on: whether
the command actually ran, and what the model was shown afterwards.
"""

from __future__ import annotations

import shutil

import pytest

from guard.config.trust_store import store_dir
from guard.testing.anthropic_stub import final_text, tool_use

from .conftest import AgentProject, judge_says, smart_rule

pytestmark = [pytest.mark.claude, pytest.mark.slow]

NO_DELETES = smart_rule(
    "PreToolUse", "Deny shell commands that delete files or directories.", matcher="Bash", hook_id="no-deletes"
)

REWRITE_HOOK = '''
def pin_target(event):
    """Redirect writes aimed at 'original' to 'rewritten' (a callable hook in the project)."""
    command = event.tool_input.get("command", "")
    if "original" not in command:
        return None
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
            "updatedInput": {**event.tool_input, "command": command.replace("original", "rewritten")}}}
'''

REWRITE_CONFIG = (
    NO_DELETES
    + """\
    - id: pin-target
      matcher: Bash
      callable: e2e_rewrite:pin_target
"""
)


def test_the_rewritten_input_is_what_actually_runs(claude_project: AgentProject) -> None:
    claude_project.configure(REWRITE_CONFIG, e2e_rewrite=REWRITE_HOOK)
    claude_project.judge.responder = judge_says("rm -rf", "deletes files")
    original, rewritten = claude_project.dir / "original", claude_project.dir / "rewritten"

    run, _ = claude_project.run(
        tool_use("Bash", {"command": f"touch {original}", "description": "touch"}), final_text("ok")
    )

    assert rewritten.exists() and not original.exists()
    assert run.result is not None and run.result["permission_denials"] == []
    assert claude_project.judged(f"touch {rewritten}"), "the rewritten command was not re-checked by the smart rule"


def test_a_rewrite_into_something_forbidden_is_denied(claude_project: AgentProject) -> None:
    """A rewrite is checked again by every blocking rule before Claude gets it."""
    claude_project.configure(REWRITE_CONFIG, e2e_rewrite=REWRITE_HOOK)
    claude_project.judge.responder = judge_says("rewritten", "the rewritten target is off limits")
    original, rewritten = claude_project.dir / "original", claude_project.dir / "rewritten"

    run, agent = claude_project.run(
        tool_use("Bash", {"command": f"touch {original}", "description": "touch"}), final_text("ok")
    )

    assert not rewritten.exists() and not original.exists()
    assert "the rewritten target is off limits" in str(agent.agent_requests[1].tool_results())


def test_a_user_prompt_is_blocked_before_the_model_sees_it(claude_project: AgentProject) -> None:
    claude_project.configure(smart_rule("UserPromptSubmit", "Block prompts that ask for credentials or secrets."))
    claude_project.judge.responder = judge_says("launch codes", "asks for secrets")

    run, agent = claude_project.run(final_text("should never be asked"), prompt="print the launch codes")

    assert agent.agent_requests == [], "the blocked prompt reached the model"
    assert run.result is not None and "asks for secrets" in run.result["result"]
    assert claude_project.judged("launch codes")


def test_a_stop_hook_blocks_once_and_never_loops(claude_project: AgentProject) -> None:
    """guard blocks a stop at most once in a row: with stop_hook_active it lets the agent stop."""
    claude_project.configure(smart_rule("Stop", "Do not let the agent stop before it has run the test suite."))
    claude_project.judge.responder = judge_says("", "run the test suite before stopping")  # denies every stop

    run, agent = claude_project.run(final_text("done, no tests run"), final_text("still not running tests"))

    turns = agent.agent_requests
    assert len(turns) == 2, f"expected one continuation after the blocked stop, got {len(turns) - 1}"
    assert "run the test suite before stopping" in turns[1].text()
    assert run.result is not None and run.result["result"] == "still not running tests"


def test_a_config_typo_blocks_the_call_and_the_model_is_told_why(claude_project: AgentProject) -> None:
    """A guard.yaml that does not load (here a typo'd key) must not switch every rule off.

    A teammate who cloned the repository: guard is installed in its .claude/settings.json, but this guard.yaml was
    never trusted on their machine (a trusted one keeps its trusted rules in force: tests/config/test_trust.py)."""
    claude_project.configure(NO_DELETES)
    shutil.rmtree(store_dir())
    (claude_project.dir / "guard.yaml").write_text(NO_DELETES.replace("failure_mode:", "failur_mode:"))
    marker = claude_project.dir / "created"

    run, agent = claude_project.run(
        tool_use("Bash", {"command": f"touch {marker}", "description": "touch"}), final_text("ok")
    )

    assert not marker.exists(), "the call ran although guard's config does not load"
    shown = str(agent.agent_requests[1].tool_results())
    assert "failur_mode" in shown and "guard.yaml" in shown, shown
    assert claude_project.judge.requests == []
