"""Smart hooks inside the engine and the CLI: failure modes, the decision cache, `guard check`, `guard hook`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.cli import GuardCli
from fixtures.judge import FAST_RETRY, bash_event, settings_for, smart_spec
from fixtures.processes import run_guard

from guard.core.settings import Settings
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry
from guard.testing.openai_stub import Reply, StubServer


def engine(settings: Settings, **spec_changes: object) -> Engine:
    eng = Engine(settings, Registry([smart_spec(**spec_changes)]), audit=False)  # type: ignore[arg-type]
    eng.ctx.resources["judge_retry"] = FAST_RETRY
    return eng


@pytest.mark.parametrize(("mode", "decision"), [("fail_closed", "deny"), ("fail_open", "allow")])
@pytest.mark.parametrize(
    "reply", [Reply(status=500), Reply.text("looks fine"), Reply.refusal()], ids=["exhausted", "prose", "refusal"]
)
def test_failures_follow_failure_mode_never_allow_by_the_judge(
    stub: StubServer, mode: str, decision: str, reply: Reply
) -> None:
    stub.default = reply
    result = engine(settings_for(stub), failure_mode=mode).decide_sync(bash_event())
    [hook] = result.hooks
    assert result.decision == decision and hook.error
    assert hook.decision == ("deny" if mode == "fail_closed" else None), "fail_open abstains, it does not allow"


def test_engine_timeout_holds(stub: StubServer) -> None:
    stub.default = Reply.verdict("allow", "too late", delay=10)
    result = engine(settings_for(stub), timeout=1.0, failure_mode="fail_closed").decide_sync(bash_event())
    assert result.decision == "deny" and (
        "timed out" in (result.hooks[0].error or "") or "did not answer" in (result.hooks[0].error or "")
    )
    assert result.details["latency_ms"] < 1600


def test_verdicts_are_cached_and_errors_are_not(stub: StubServer, tmp_path: Path) -> None:
    settings = settings_for(stub, cache_url=f"sqlite:///{tmp_path}/cache.db")
    stub.enqueue(Reply.text("no idea"), Reply.verdict("deny", "deletes a home folder", confidence=0.9))
    eng = engine(settings, failure_mode="fail_open")
    first = eng.decide_sync(bash_event())
    second = eng.decide_sync(bash_event())
    third = engine(settings).decide_sync({**bash_event(), "session_id": "another-session", "tool_use_id": "toolu_7"})
    assert first.hooks[0].error and second.decision == "deny" and not second.hooks[0].cached
    assert third.decision == "deny" and third.hooks[0].cached
    assert third.hooks[0].cost_usd is None, "the stub model has no price: a hit is as unknown as the miss, not $0"
    assert third.hooks[0].details["prompt_version"] == "quick.v1"
    assert stub.calls == 2, "the unreadable answer was not cached; the verdict was"
    engine(settings).decide_sync(bash_event("rm -rf /srv"))
    assert stub.calls == 3, "another input is another judgement"


@pytest.mark.slow
def test_guard_check_judges_a_rule_end_to_end(stub: StubServer, isolated_home: Path) -> None:
    stub.enqueue(Reply.verdict("deny", "deletes outside the project", confidence=0.91))
    env = {
        "GUARD_MODEL_QUICK": "openai/stub-quick",
        "GUARD_MODEL_THOROUGH": "openai/stub-thorough",
        "GUARD_API_BASE": stub.url,
    }
    args = [
        "check",
        "--rule",
        "Deny deleting files outside the project",
        "--tool",
        "Bash",
        "--depth",
        "quick",
        "--json",
    ]
    denied = run_guard([*args, "--input", '{"command": "rm -rf ~/"}'], isolated_home, env=env)
    assert denied.returncode == 1, denied.stderr
    hook = json.loads(denied.stdout)["hooks"][0]
    assert (hook["decision"], hook["tier"], hook["model"], hook["confidence"]) == (
        "deny",
        "quick",
        "openai/stub-quick",
        0.91,
    )
    assert "Deny deleting files outside the project" in stub.requests[0]["messages"][1]["content"]


def test_guard_check_without_a_model_names_the_variables(guard_cli: GuardCli) -> None:
    out = guard_cli(["check", "--rule", "no deletes", "--tool", "Bash", "--input", '{"command": "ls"}'])
    assert out.returncode == 3
    assert "GUARD_MODEL_QUICK" in out.stderr and "GUARD_API_BASE" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow
def test_guard_hook_judges_smart_rules_and_serves_repeats_from_the_cache(stub: StubServer, isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(
        "models: {quick: openai/stub-quick}\n"
        f"cache: {{url: 'sqlite:///{isolated_home}/cache.db'}}\n"
        # timeout 60: a cold process loads LiteLLM (seconds; far more on a loaded CI box) before judging
        "hooks:\n  PreToolUse:\n    - id: no-delete\n      matcher: Bash\n      depth: quick\n      timeout: 60\n"
        "      rule: Deny shell commands that delete files outside the project.\n"
    )
    trust_config(isolated_home / "guard.yaml")
    stub.default = Reply.verdict("deny", "deletes a home folder", confidence=0.9)
    event = json.dumps(bash_event())
    first = run_guard(["hook"], isolated_home, env={"GUARD_API_BASE": stub.url}, stdin=event)
    second = run_guard(["hook"], isolated_home, env={"GUARD_API_BASE": stub.url}, stdin=event)
    for out in (first, second):
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert stub.calls == 1


@pytest.mark.slow
def test_guard_check_model_flag_overrides_config_and_environment(stub: StubServer, isolated_home: Path) -> None:
    stub.default = Reply.verdict("allow", "a build folder", confidence=0.95)
    env = {
        "GUARD_MODEL_QUICK": "openai/env-quick",
        "GUARD_MODEL_THOROUGH": "openai/env-thorough",
        "GUARD_API_BASE": stub.url,
    }
    out = run_guard(
        [
            "check",
            "--rule",
            "no deletes outside the project",
            "--tool",
            "Bash",
            "--input",
            '{"command": "rm -rf ./build"}',
            "--model",
            "openai/flag-model",
            "--json",
        ],
        isolated_home,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["hooks"][0]["model"] == "openai/flag-model"
    assert all(r["model"] == "flag-model" for r in stub.requests)
