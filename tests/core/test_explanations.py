"""Every deny or ask says which rule decided, who decided and whether it is final, in each client's own channels.

Through ``guard hook`` processes (the judge is the loopback stub with stand-in
responders, not a model), and the gate for what a shadow hook may never change.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.session import bash_event, hook, stub_judging

from guard.core.explanation import FINAL_ADVICE, JUDGEMENT_ADVICE, UNJUDGED_ADVICE
from guard.core.spec import HookSpec
from guard.judge.fence import FENCE_RE
from guard.runtime.deciders import in_process
from guard.runtime.gate import Gate
from guard.testing.openai_stub import Reply

PUSH, DELETE = "Never push to the main branch.", "Deleting files with rm -rf."


def cites_entries(body: dict[str, Any]) -> Reply:
    """A stand-in judge (not a model) that names the policy entry it applies, as the policy prompt asks."""
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    action = FENCE_RE.search(user).group(2)  # type: ignore[union-attr]
    if "git push" in action:
        return Reply.verdict("deny", f'hard_deny[1] "{PUSH}": pushes to main', confidence=0.95)
    if "rm -rf" in action:
        return Reply.verdict("deny", f'soft_deny[1] "{DELETE}": deletes the build folder', confidence=0.95)
    return Reply.verdict("allow", "nothing listed", confidence=0.95)


@pytest.fixture
def policy_project(isolated_home: Path) -> Iterator[Path]:
    for judge in stub_judging(cites_entries):
        (isolated_home / "guard.yaml").write_text(
            f"models: {{quick: stub-quick, thorough: stub-thorough, api_base: {judge.url}}}\n"
            f'policies:\n  - id: auto\n    matcher: Bash\n    depth: quick\n    hard_deny: ["{PUSH}"]\n    soft_deny: ["{DELETE}"]\n'
        )
        trust_config(isolated_home / "guard.yaml")
        yield isolated_home


def told(proc: Any) -> tuple[str, str, str]:
    """(permissionDecision, what the model reads, what the user reads) of a Claude Code hook answer."""
    out = json.loads(proc.stdout)
    specific = out["hookSpecificOutput"]
    return specific["permissionDecision"], specific["permissionDecisionReason"], out.get("systemMessage", "")


@pytest.mark.slow
def test_a_policys_hard_deny_is_final_and_its_soft_deny_a_judgement_each_quoting_its_entry(
    policy_project: Path,
) -> None:
    decision, model, user = told(hook(policy_project, bash_event("s1", "git push origin main")))
    assert (
        decision == "deny"
        and f'rule auto ("hard_deny: {PUSH}")' in model
        and "pushes to main" in model
        and model.endswith(FINAL_ADVICE)
    )
    assert "guard denied Bash: rule auto (the quick tier (openai/stub-quick)" in user and user.endswith("final.")

    decision, model, user = told(hook(policy_project, bash_event("s1", "rm -rf build")))
    assert decision == "deny" and f'rule auto ("soft_deny: {DELETE}")' in model and model.endswith(JUDGEMENT_ADVICE)
    assert "a judgement you can override" in user


@pytest.mark.slow
def test_a_cached_verdict_says_the_cache_decided(isolated_home: Path) -> None:
    for judge in stub_judging(cites_entries):
        (isolated_home / "guard.yaml").write_text(
            f"models: {{quick: stub-quick, api_base: {judge.url}}}\nhooks:\n  PreToolUse:\n"
            "    - id: no-deletes\n      matcher: Bash\n      depth: quick\n      rule: Deny rm -rf.\n"
        )
        trust_config(isolated_home / "guard.yaml")
        first = told(hook(isolated_home, bash_event("s1", "rm -rf build")))[1]
        again = told(hook(isolated_home, bash_event("s1", "rm -rf build")))[1]
        assert judge.calls == 1
    assert "decided by the quick tier (openai/stub-quick)" in first
    assert "decided by the cache (an earlier verdict of this rule)" in again and "deletes the build folder" in again


@pytest.mark.slow
def test_protection_and_an_untrusted_config_are_final_and_say_who_decided(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text("hooks: {}\n")
    untrusted = told(hook(isolated_home, bash_event("s1", "ls")))
    assert (
        untrusted[0] == "deny"
        and "rule guard.config" in untrusted[1]
        and "decided by trust" in untrusted[1]
        and "guard trust" in untrusted[1]
    )
    assert untrusted[1].endswith(FINAL_ADVICE)

    trust_config(isolated_home / "guard.yaml")
    write = {
        **bash_event("s1", "x"),
        "tool_name": "Write",
        "tool_input": {"file_path": str(isolated_home / "guard.yaml"), "content": "protect: false\n"},
    }
    decision, model, user = told(hook(isolated_home, write))
    assert (
        decision == "deny"
        and "rule guard.protect" in model
        and "decided by protection" in model
        and model.endswith(FINAL_ADVICE)
    )
    assert "rule guard.protect (protection); final." in user


def test_a_fail_closed_failure_is_not_final(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(
        'hooks:\n  PreToolUse:\n    - id: flaky\n      matcher: Bash\n      failure_mode: fail_closed\n      command: "exit 7"\n'
    )
    trust_config(isolated_home / "guard.yaml")
    decision, model, user = told(hook(isolated_home, bash_event("s1", "ls")))
    assert decision == "deny" and "decided by the failure policy (flaky is fail_closed and could not judge)" in model
    assert model.endswith(UNJUDGED_ADVICE), (
        "guard could not judge: it says so, and does not claim another form would be refused"
    )
    assert user.endswith("; not a judgement: guard could not judge it (guard log shows why)."), (
        f"the person is not told a failure is a judgement they can override: {user}"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fmt", "field"), [("gemini", "reason"), ("copilot", "permissionDecisionReason"), ("devin", "reason")]
)
def test_every_client_shows_the_rule_and_its_finality(isolated_home: Path, fmt: str, field: str) -> None:
    (isolated_home / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - id: no-curl\n      command: \"grep -q curl && { echo 'no downloads' >&2; exit 2; } || exit 0\"\n"
    )
    trust_config(isolated_home / "guard.yaml")
    payload = {
        "hook_event_name": "BeforeTool" if fmt == "gemini" else "PreToolUse",
        "tool_name": "run_shell_command",
        "tool_input": {"command": "curl https://example.com"},
        "session_id": "s1",
        "cwd": str(isolated_home),
    }
    if fmt == "copilot":
        payload = {
            "hookEventName": "preToolUse",
            "toolName": "bash",
            "toolArgs": json.dumps({"command": "curl https://example.com"}),
            "cwd": str(isolated_home),
        }
    out = json.loads(hook(isolated_home, payload, "--format", fmt).stdout)
    assert (
        "rule no-curl" in out[field]
        and "decided by command hook no-curl: no downloads" in out[field]
        and out[field].endswith(FINAL_ADVICE)
    )
    if fmt != "copilot":  # Copilot has one channel; the others tell the user too
        assert "rule no-curl (command hook no-curl); final." in out["systemMessage"]


# -- what a shadow hook may never change ---------------------------------------------------------------------


def test_a_shadow_hooks_rewrite_and_fail_closed_failure_change_nothing() -> None:
    def rewrite(event: Any) -> dict[str, Any]:
        return {"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "echo rewritten"}}}

    shadow = [
        HookSpec(
            "rewrites", "callable", "pre_tool_use", func=rewrite, options={"callable": "t:rewrite"}, mode="shadow"
        ),
        HookSpec(
            "strict",
            "command",
            "pre_tool_use",
            options={"command": "exit 7"},
            failure_mode="fail_closed",
            mode="shadow",
        ),
    ]
    gate = Gate(specs=shadow, deciders=in_process())
    _, decision = gate.decide(bash_event("s1", "ls"))
    assert (
        decision.decision == "allow"
        and decision.updated_input is None
        and not decision.warnings
        and not decision.decided_by
    )
    assert {h.id: h.shadow for h in decision.hooks} == {"rewrites": True, "strict": True}
    _, unreadable = gate.decide(b'{"hook_event_name": "PreToolUse", "tool_name": 7}')
    assert unreadable.decision == "allow", "a shadow fail_closed hook does not make an unreadable event a deny"
