"""The smart rules that apply to one call are judged in one model request, a verdict per rule, each enforced and cached on its own.

Through real ``guard hook`` processes against the stub model, whose request log shows how many requests were made
and what each asked; and the strict reader of an answer holding several rules' verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.processes import run_guard

from guard.core.errors import JudgeBadResponse
from guard.judge.verdict import ModelVerdict, parse_verdicts
from guard.testing.openai_stub import Reply, StubServer, rule_ids

DESTRUCTIVE = "Deny shell commands that delete files outside the project."
LEAKS = "Deny commands that print credentials or API keys."


def _config(
    home: Path, *, depth: str = "quick", apart: bool = False, rules: tuple[str, ...] = ("no-destructive", "no-leaks")
) -> None:
    text = {"no-destructive": DESTRUCTIVE, "no-leaks": LEAKS}
    hooks = "".join(
        f"    - id: {rule}\n      matcher: Bash\n      rule: {text[rule]}\n      depth: {depth}\n      failure_mode: fail_closed\n      timeout: 60\n"
        + ("      judge_together: false\n" if apart and rule == "no-leaks" else "")
        for rule in rules
    )
    (home / "guard.yaml").write_text(
        f"models: {{quick: openai/stub-quick, thorough: openai/stub-thorough}}\n"
        f"cache: {{url: 'sqlite:///{home}/cache.db'}}\nhooks:\n  PreToolUse:\n{hooks}"
    )
    trust_config(home / "guard.yaml")


def _call(home: Path, stub: StubServer, command: str = "cat config/settings.py") -> tuple[str, dict[str, Any]]:
    """(the decision Claude Code reads, the audit row's hooks by id)."""
    event = {
        "session_id": "s",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "cwd": str(home),
    }
    out = run_guard(["hook"], home, env={"GUARD_API_BASE": stub.url}, stdin=json.dumps(event))
    assert out.returncode == 0, out.stderr
    decision = json.loads(out.stdout)["hookSpecificOutput"]["permissionDecision"] if out.stdout.strip() else "allow"
    row = json.loads(run_guard(["log", "--json", "-n", "1"], home).stdout.splitlines()[0])
    return decision, {h["id"]: h for h in row["hooks"]}


def _verdicts(
    body: dict[str, Any],
    quick: dict[str, tuple[str, str, float]],
    thorough: dict[str, tuple[str, str, float]] | None = None,
) -> Reply:
    """The scripted judge: each asked rule's verdict, by tier (the model's name), in one request's shape."""
    script = quick if body["model"].endswith("stub-quick") or thorough is None else thorough
    ids = rule_ids(body)
    if ids is None:  # one rule alone: its verdict, as one
        user = body["messages"][-1]["content"]
        [rule] = [r for r in script if (DESTRUCTIVE if r == "no-destructive" else LEAKS) in user]
        decision, reason, confidence = script[rule]
        return Reply.verdict(decision, reason, confidence=confidence)
    return Reply.verdicts({rule: script[rule] for rule in ids})


SPLIT = {
    "no-destructive": ("allow", "reads a project file", 0.95),
    "no-leaks": ("deny", "prints the database password", 0.9),
}


@pytest.mark.slow
def test_a_call_two_rules_apply_to_makes_one_request_and_each_verdict_is_enforced_and_cached_on_its_own(
    stub: StubServer, isolated_home: Path
) -> None:
    _config(isolated_home)
    stub.responder = lambda body: _verdicts(body, SPLIT)
    decision, hooks = _call(isolated_home, stub)
    assert stub.calls == 1 and rule_ids(stub.requests[0]) == ["no-destructive", "no-leaks"]
    assert decision == "deny"
    assert (hooks["no-destructive"]["decision"], hooks["no-leaks"]["decision"]) == ("allow", "deny")
    assert (
        hooks["no-leaks"]["reason"] == "prints the database password"
        and hooks["no-destructive"]["reason"] == "reads a project file"
    )
    assert hooks["no-leaks"]["details"]["judged_together"] == ["no-destructive", "no-leaks"]
    shared = [call for h in hooks.values() for call in h.get("details", {}).get("calls", [])]
    assert len([c for c in shared if "shared_with" not in c]) == 1  # one request, paid once

    assert _call(isolated_home, stub)[0] == "deny" and stub.calls == 1  # both verdicts from the cache
    checked = run_guard(
        ["check", "--tool", "Bash", "--input", json.dumps({"command": "cat config/other.py"})],
        isolated_home,
        env={"GUARD_API_BASE": stub.url, "COLUMNS": "200"},
    )
    assert (
        checked.returncode == 1
        and stub.calls == 2
        and checked.stdout.count("judged in one request with no-destructive, no-leaks") == 2
    )

    _config(isolated_home, rules=("no-destructive",))  # each rule's verdict stands alone in the cache
    decision, hooks = _call(isolated_home, stub)
    assert (decision, stub.calls, hooks["no-destructive"]["cached"]) == ("allow", 2, True)
    _config(isolated_home, rules=("no-leaks",))
    decision, hooks = _call(isolated_home, stub)
    assert (decision, stub.calls, hooks["no-leaks"]["cached"]) == ("deny", 2, True)


@pytest.mark.slow
def test_auto_escalates_only_the_rule_quick_was_unsure_of(stub: StubServer, isolated_home: Path) -> None:
    _config(isolated_home, depth="auto")
    quick = {"no-destructive": ("allow", "reads a file", 0.95), "no-leaks": ("allow", "may print a secret", 0.4)}
    thorough = {
        "no-destructive": ("deny", "should not be asked", 0.99),
        "no-leaks": ("deny", "prints the database password", 0.92),
    }
    stub.responder = lambda body: _verdicts(body, quick, thorough)
    decision, hooks = _call(isolated_home, stub)
    assert stub.calls == 2 and rule_ids(stub.requests[0]) == ["no-destructive", "no-leaks"]
    second = stub.requests[1]
    assert (
        second["model"].endswith("stub-thorough")
        and rule_ids(second) is None
        and LEAKS in second["messages"][-1]["content"]
    )
    assert DESTRUCTIVE not in second["messages"][-1]["content"]
    assert decision == "deny"
    assert (hooks["no-destructive"]["tier"], hooks["no-destructive"]["decision"]) == ("quick", "allow")
    assert (hooks["no-leaks"]["tier"], hooks["no-leaks"]["decision"]) == ("thorough", "deny") and "escalated" in hooks[
        "no-leaks"
    ]["details"]


@pytest.mark.slow
def test_a_hook_can_be_judged_apart(stub: StubServer, isolated_home: Path) -> None:
    _config(isolated_home, apart=True)
    stub.responder = lambda body: _verdicts(body, SPLIT)
    decision, hooks = _call(isolated_home, stub)
    assert decision == "deny" and stub.calls == 2 and all(rule_ids(body) is None for body in stub.requests)
    assert "judged_together" not in hooks["no-leaks"]["details"]


@pytest.mark.slow
def test_a_rule_the_answer_leaves_out_fails_alone_under_its_failure_mode(stub: StubServer, isolated_home: Path) -> None:
    _config(isolated_home)
    stub.default = Reply.verdicts({"no-destructive": ("allow", "reads a project file", 0.95)})
    decision, hooks = _call(isolated_home, stub)
    assert stub.calls == 1 and decision == "deny"
    assert hooks["no-destructive"]["decision"] == "allow" and hooks["no-destructive"]["error"] is None
    assert "no verdict for rule 'no-leaks'" in hooks["no-leaks"]["error"] and hooks["no-leaks"]["decision"] == "deny"


IDS = ["no-destructive", "no-leaks"]
GOOD = {"decision": "allow", "reason": "fine", "confidence": 0.9}


def test_an_answer_of_one_object_of_verdicts_by_rule_id_is_read_per_rule() -> None:
    read = parse_verdicts(
        "```json\n" + json.dumps({"no-destructive": GOOD, "no-leaks": {**GOOD, "decision": "deny"}}) + "\n```", IDS
    )
    assert all(isinstance(v, ModelVerdict) for v in read.values())
    assert [v.decision for v in read.values() if isinstance(v, ModelVerdict)] == ["allow", "deny"]


@pytest.mark.parametrize(
    "answer",
    [
        json.dumps({"no-destructive": GOOD, "no-leaks": GOOD})
        + " "
        + json.dumps({"no-destructive": GOOD, "no-leaks": GOOD}),  # two answers
        json.dumps({"no-destructive": GOOD, "no-leaks": GOOD})
        + ' {"decision": "allow"}',  # an echoed verdict beside them
        json.dumps({"no-destructive": GOOD, "no-leaks": GOOD, "no-other": GOOD}),  # a rule it was not asked about
        json.dumps({"no-destructive": GOOD, "no-leaks": GOOD}) + ' "decision": "deny"',  # a stray verdict key
        "I cannot judge this.",
        "",
    ],
)
def test_an_ambiguous_answer_is_a_bad_response_for_every_rule(answer: str) -> None:
    read = parse_verdicts(answer, IDS)
    assert all(isinstance(v, JudgeBadResponse) for v in read.values()), read


def test_a_malformed_verdict_fails_only_its_own_rule() -> None:
    nested = {**GOOD, "note": {"decision": "deny"}}
    read = parse_verdicts(json.dumps({"no-destructive": GOOD, "no-leaks": nested}), IDS)
    assert isinstance(read["no-destructive"], ModelVerdict) and isinstance(read["no-leaks"], JudgeBadResponse)
    read = parse_verdicts(json.dumps({"no-destructive": {"decision": "maybe", "reason": "?"}, "no-leaks": GOOD}), IDS)
    assert isinstance(read["no-destructive"], JudgeBadResponse) and isinstance(read["no-leaks"], ModelVerdict)
    assert all(
        isinstance(v, JudgeBadResponse)
        for v in parse_verdicts(json.dumps({"no-leaks": GOOD}), IDS, refusal="no").values()
    )
