"""Through the real Claude Code CLI, a deny names its rule and says whether it is final, and a retried variant is denied by the same rule, named.

The scripted agent (the Anthropic stub) first deletes a folder with ``rm -rf``,
then, once denied, tries another form (``find … -delete``), as agents do when a
deny reads as a hook error (Claude Code itself prefixes one so: guard's words say it is a decision). The judge is the OpenAI-compatible stub with a
stand-in responder (not a model) that denies any deletion.
"""

from __future__ import annotations

from typing import Any

import pytest

from guard.core.explanation import FINAL_ADVICE, JUDGEMENT_ADVICE
from guard.testing.anthropic_stub import final_text, tool_use
from guard.testing.openai_stub import Reply

from .conftest import AgentProject, smart_rule

pytestmark = [pytest.mark.claude, pytest.mark.slow]

RULE = "Deny shell commands that delete files or directories."


def deletes(body: dict[str, Any]) -> Reply:
    """Deny ``rm -rf`` and ``find -delete`` alike: one rule, whatever form the deletion takes."""
    text = " ".join(str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user")
    if "rm -rf" in text or "-delete" in text:
        return Reply.verdict("deny", "the command deletes the victim folder", confidence=0.97)
    return Reply.verdict("allow", "harmless", confidence=0.97)


@pytest.mark.parametrize(
    ("final", "advice"), [("true", FINAL_ADVICE), (None, JUDGEMENT_ADVICE)], ids=["final", "judgement"]
)
def test_the_model_is_told_the_rule_and_its_finality_and_a_retried_variant_is_denied_by_the_same_rule(
    claude_project: AgentProject, final: str | None, advice: str
) -> None:
    config = smart_rule("PreToolUse", RULE, matcher="Bash", hook_id="no-deletes")
    claude_project.configure(config + (f"      final: {final}\n" if final else ""))
    claude_project.judge.responder = deletes
    victim = claude_project.dir / "victim"
    victim.mkdir()
    (victim / "data.txt").write_text("keep me")
    first, variant = f"rm -rf {victim}", f"find {victim} -delete"

    run, agent = claude_project.run(
        tool_use("Bash", {"command": first, "description": "clean up"}),
        tool_use("Bash", {"command": variant, "description": "clean up another way"}),
        final_text("I will ask the user."),
    )

    assert (victim / "data.txt").read_text() == "keep me", "neither form of the deletion ran"
    told = [str(agent.agent_requests[i].tool_results()) for i in (1, 2)]
    for text in told:
        assert f'rule no-deletes ("{RULE}")' in text, text
        assert "the command deletes the victim folder" in text and advice in text, text
        # Claude Code 2.1.220 and later prefix every hook deny with "PreToolUse:Bash hook error:" (anthropics/claude-code#85490,
        # open); what guard writes after it calls the deny a decision, never an error
        shown = text.lower()
        start = shown.index("guard denied this call")
        said = shown[start : shown.index(advice.lower(), start) + len(advice)]
        assert "error" not in said, "guard never frames a deny as an error"
    assert [d["tool_input"]["command"] for d in run.result["permission_denials"]] == [first, variant]
