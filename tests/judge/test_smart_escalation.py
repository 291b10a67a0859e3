"""auto keeps the strictest verdict it saw: a failed thorough call never throws quick's deny or ask away."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fixtures.judge import FAST_RETRY, bash_event, context, settings_for, smart_spec

from guard.core.errors import JudgeTimeout
from guard.core.events.model import parse_event
from guard.hooks.smart import SmartHook
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry
from guard.testing.openai_stub import Reply, StubServer


def decide(stub: StubServer, quick: Reply, thorough: Reply, mode: str, cache_url: str = "off"):  # type: ignore[no-untyped-def]
    stub.responder = lambda body: quick if body["model"] == "stub-quick" else thorough
    eng = Engine(
        settings_for(stub, cache_url=cache_url), Registry([smart_spec(depth="auto", failure_mode=mode)]), audit=False
    )
    eng.ctx.resources["judge_retry"] = FAST_RETRY
    return eng.decide_sync(bash_event())


DOWN = Reply(status=500)


@pytest.mark.parametrize(
    ("quick", "mode", "decision", "standing"),
    [
        (Reply.verdict("deny", "maybe deletes", confidence=0.5), "fail_open", "deny", True),
        (Reply.verdict("deny", "maybe deletes", confidence=0.5), "fail_closed", "deny", True),
        (Reply.verdict("ask", "unsure", confidence=0.9), "fail_open", "ask", True),
        (
            Reply.verdict("ask", "unsure", confidence=0.9),
            "fail_closed",
            "deny",
            False,
        ),  # the failure's deny is stricter
        (
            Reply.verdict("allow", "probably fine", confidence=0.5),
            "fail_open",
            "allow",
            False,
        ),  # abstains: not quick's allow
        (Reply.verdict("allow", "probably fine", confidence=0.5), "fail_closed", "deny", False),
        (Reply.text("no idea"), "fail_open", "allow", False),
    ],
    ids=[
        "deny-open",
        "deny-closed",
        "ask-open",
        "ask-closed",
        "unsure-allow-open",
        "unsure-allow-closed",
        "unreadable-open",
    ],
)
def test_failed_thorough_leaves_the_strictest_verdict_standing(
    stub: StubServer, quick: Reply, mode: str, decision: str, standing: bool
) -> None:
    result = decide(stub, quick, DOWN, mode)
    [hook] = result.hooks
    assert result.decision == decision
    assert [r["model"] for r in stub.requests][:2] == ["stub-quick", "stub-thorough"], "quick escalated"
    if standing:
        assert (hook.decision, hook.tier, hook.error) == (decision, "quick", None)
        assert hook.reason == json.loads(quick.content or "")["reason"], "quick's own verdict, not a failure message"
        assert "unavailable" in hook.details["failed_calls"][0] and hook.details["escalated"]
    else:
        assert hook.error and "unavailable" in hook.error
        assert hook.decision == ("deny" if mode == "fail_closed" else None)


def test_a_standing_verdict_is_not_cached(stub: StubServer, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/cache.db"
    first = decide(stub, Reply.verdict("deny", "maybe", confidence=0.5), DOWN, "fail_open", url)
    assert first.decision == "deny"
    second = decide(
        stub,
        Reply.verdict("deny", "maybe", confidence=0.5),
        Reply.verdict("allow", "fine", confidence=0.99),
        "fail_open",
        url,
    )
    [hook] = second.hooks
    assert not hook.cached and (second.decision, hook.tier) == ("allow", "thorough"), (
        "thorough answered this time and decided"
    )


@pytest.mark.slow
def test_a_timed_out_thorough_leaves_quick_deny_standing(stub: StubServer) -> None:
    stub.responder = lambda body: (
        Reply.verdict("deny", "maybe", confidence=0.4)
        if body["model"] == "stub-quick"
        else Reply.verdict("allow", "late", delay=5)
    )
    hook = SmartHook(smart_spec(depth="auto", timeout=1.5), context(settings_for(stub)))
    result = asyncio.run(hook.run(parse_event(bash_event())))
    assert (result.decision, result.tier) == ("deny", "quick") and "did not answer" in result.details["failed_calls"][0]


@pytest.mark.slow
def test_a_timed_out_thorough_after_an_unsure_allow_is_a_failure(stub: StubServer) -> None:
    stub.responder = lambda body: (
        Reply.verdict("allow", "maybe", confidence=0.4)
        if body["model"] == "stub-quick"
        else Reply.verdict("allow", "late", delay=5)
    )
    hook = SmartHook(smart_spec(depth="auto", timeout=1.5), context(settings_for(stub)))
    with pytest.raises(JudgeTimeout):
        asyncio.run(hook.run(parse_event(bash_event())))


@pytest.mark.parametrize(
    "quick",
    [Reply.text('{"decision": "allow", "reason": "fine"}'), Reply.json({"ok": True})],
    ids=["no-confidence", "ok-shape"],
)
def test_a_quick_verdict_without_confidence_escalates(stub: StubServer, quick: Reply) -> None:
    result = decide(stub, quick, Reply.verdict("deny", "thorough says no", confidence=0.95, reasoning="…"), "fail_open")
    [hook] = result.hooks
    assert (result.decision, hook.tier) == ("deny", "thorough") and "no usable confidence" in hook.details["escalated"]


def test_a_sure_quick_verdict_does_not_escalate(stub: StubServer) -> None:
    result = decide(stub, Reply.verdict("allow", "read-only", confidence=0.95), DOWN, "fail_closed")
    assert result.decision == "allow" and stub.calls == 1
