"""Long inputs are judged whole: a dangerous part in the middle reaches the judge and is denied.

The stub's keyword policy is a marker match on the fenced data it receives, so it
can only deny what it was shown: with the old trimming the middle of these inputs
never reached it and every one of them was allowed.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.judge import FAST_RETRY, bash_event, context, settings_for, smart_spec
from fixtures.processes import run_guard

from guard.core.decision import HookResult
from guard.core.errors import JudgeUnavailable
from guard.core.events.model import parse_event
from guard.core.settings import Settings
from guard.hooks.smart import SmartHook
from guard.judge.fence import FENCE_RE
from guard.judge.prompts import window_count
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry
from guard.testing.openai_stub import Reply, StubServer, keyword_policy

RULE = "Deny commands and writes that delete files or read secrets."


def padding(n: int, word: str = "harmless") -> str:
    return "".join(f"line {i}: {word} text about the build\n" for i in range(n))


def bash_input(marker: str) -> dict[str, Any]:
    return {"command": f"echo start && {padding(200, 'echo')} && {marker} && {padding(200, 'echo')} && echo done"}


def write_input(marker: str) -> dict[str, Any]:
    content = padding(140) + f"{marker}\n" + padding(140)
    assert len(content) > 10_000
    return {"file_path": "/home/u/proj/notes.md", "content": content}


def mcp_input(marker: str) -> dict[str, Any]:
    fields = {f"field_{i:03d}": f"value {i} " + "padding " * 10 for i in range(150)}
    fields["field_075"] = f"run {marker} now"
    return fields


CASES = {
    "bash": ("Bash", bash_input, "rm -rf ~/"),
    "write-10kb": ("Write", write_input, "cat ~/.ssh/id_rsa"),
    "mcp-150-fields": ("mcp__ops__run", mcp_input, "rm -rf /srv/data"),
}


def fenced(body: dict[str, Any]) -> str:
    return FENCE_RE.search(body["messages"][1]["content"]).group(2)  # type: ignore[union-attr]


def part_of(body: dict[str, Any]) -> int:
    """The window a request judges (1-based), from the part note guard writes before the fence."""
    user = body["messages"][1]["content"]
    return int(user.split("[Part ", 1)[1].split(" ", 1)[0]) if "[Part " in user else 1


def run_cli(
    args: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return run_guard(args, cwd, stdin=stdin, env=env, timeout=180)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_guard_check_denies_a_dangerous_middle(stub: StubServer, isolated_home: Path, case: str) -> None:
    tool, make, marker = CASES[case]
    stub.responder = keyword_policy
    env = {"GUARD_MODEL_QUICK": "openai/stub-quick", "GUARD_API_BASE": stub.url}
    args = ["check", "--rule", RULE, "--tool", tool, "--depth", "quick", "--json"]
    out = run_cli([*args, "--input", json.dumps(make(marker))], env, isolated_home)
    assert out.returncode == 1, out.stdout + out.stderr
    hook = json.loads(out.stdout)["hooks"][0]
    windows = hook["details"]["windows"]
    assert hook["decision"] == "deny" and windows == stub.calls >= 3
    parts = {part_of(body): marker in fenced(body) for body in stub.requests}
    assert sorted(parts) == list(range(1, windows + 1))
    assert any(parts.values()) and not parts[1] and not parts[windows], "the marker sat in a middle window only"
    assert hook["reason"].startswith("[part ")
    # the same input without the marker is allowed: the deny came from the part the judge was shown;
    # windows identical to the first input's come from the cache
    stub.requests.clear()
    clean = run_cli([*args, "--input", json.dumps(make("echo fine"))], env, isolated_home)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    details = json.loads(clean.stdout)["hooks"][0]["details"]
    cached = sum(1 for c in details["calls"] if c.get("cached"))
    assert details["windows"] == windows == stub.calls + cached and stub.calls >= 1


@pytest.mark.slow
def test_guard_hook_denies_a_dangerous_middle(stub: StubServer, isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(
        "models: {quick: openai/stub-quick}\n"
        "hooks:\n  PreToolUse:\n    - id: no-secrets\n      matcher: Write\n      depth: quick\n      timeout: 60\n"
        f"      rule: {RULE}\n"
    )
    trust_config(isolated_home / "guard.yaml")
    stub.responder = keyword_policy
    event = {**bash_event(), "tool_name": "Write", "tool_input": write_input("cat ~/.ssh/id_rsa")}
    out = run_cli(["hook"], {"GUARD_API_BASE": stub.url}, isolated_home, stdin=json.dumps(event))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert stub.calls >= 3


def engine(stub: StubServer, **spec: Any) -> Engine:
    eng = Engine(settings_for(stub), Registry([smart_spec(rule=RULE, **spec)]), audit=False)
    eng.ctx.resources["judge_retry"] = FAST_RETRY
    return eng


def long_bash(marker: str = "echo fine") -> dict[str, Any]:
    return bash_event(bash_input(marker)["command"])


WINDOWS = window_count("quick", long_bash())


def by_window(answers: dict[int, Reply]) -> Any:
    """A responder answering window N with answers[N], else a sure allow."""

    def respond(body: dict[str, Any]) -> Reply:
        return answers.get(part_of(body), Reply.verdict("allow", "fine", confidence=0.95))

    return respond


@pytest.mark.parametrize(
    ("answers", "decision"),
    [
        ({}, "allow"),
        ({2: Reply.verdict("deny", "deletes", confidence=0.9)}, "deny"),
        ({3: Reply.verdict("ask", "unsure", confidence=0.9)}, "ask"),
        ({1: Reply.verdict("ask", "unsure"), 2: Reply.verdict("deny", "deletes")}, "deny"),
    ],
    ids=["all-allow", "one-deny", "one-ask", "deny-beats-ask"],
)
def test_any_deny_wins_then_ask_then_allow(stub: StubServer, answers: dict[int, Reply], decision: str) -> None:
    stub.responder = by_window(answers)
    result = engine(stub, depth="quick").decide_sync(long_bash())
    [hook] = result.hooks
    assert (result.decision, hook.decision) == (decision, decision) and not hook.error
    assert hook.details["windows"] == stub.calls == len(hook.details["calls"]) >= 3
    assert hook.details["prompt_version"] == "quick.v1+window.v1", "the window note's words are versioned too"
    assert sorted(c["window"] for c in hook.details["calls"]) == [f"{i}/{stub.calls}" for i in range(1, stub.calls + 1)]


@pytest.mark.parametrize(("mode", "decision"), [("fail_open", "allow"), ("fail_closed", "deny")])
def test_a_failed_window_is_never_an_allow_on_a_partial_view(stub: StubServer, mode: str, decision: str) -> None:
    stub.responder = by_window({2: Reply(status=500)})
    result = engine(stub, depth="quick", failure_mode=mode).decide_sync(long_bash())
    [hook] = result.hooks
    assert result.decision == decision and hook.error and "window 2/" in hook.error
    assert hook.decision == (None if mode == "fail_open" else "deny")


def judge_once(settings: Settings) -> HookResult:
    return asyncio.run(SmartHook(smart_spec(rule=RULE), context(settings)).run(parse_event(long_bash())))


def test_a_deny_stands_when_another_window_fails_and_is_not_cached(stub: StubServer, tmp_path: Path) -> None:
    stub.responder = by_window({1: Reply.verdict("deny", "deletes", confidence=0.9), 2: Reply(status=500)})
    settings = settings_for(stub, cache_url=f"sqlite:///{tmp_path}/cache.db")
    result = judge_once(settings)
    assert result.decision == "deny" and result.reason == f"[part 1/{WINDOWS}] deletes"
    assert f"window 2/{WINDOWS}" in result.details["failed_calls"][0]
    calls = stub.calls
    again = judge_once(settings)
    assert again.decision == "deny" and not again.cached, "a judgement standing on a failure is not cached"
    assert stub.calls > calls


def test_windows_share_the_cache_so_a_retry_pays_only_what_failed(stub: StubServer, tmp_path: Path) -> None:
    settings = settings_for(stub, cache_url=f"sqlite:///{tmp_path}/cache.db")
    stub.responder = by_window({3: Reply(status=500)})
    with pytest.raises(JudgeUnavailable, match=f"window 3/{WINDOWS}"):
        judge_once(settings)
    assert stub.calls == WINDOWS - 1 + FAST_RETRY.attempts, (
        "the other windows answered once; window 3 was tried and retried"
    )
    stub.responder = by_window({})
    stub.requests.clear()
    result = judge_once(settings)
    assert result.decision == "allow" and stub.calls == 1, "only the failed window was judged again"
    assert sum(1 for c in result.details["calls"] if c.get("cached")) == WINDOWS - 1
    again = judge_once(settings)
    assert again.cached and stub.calls == 1, "the whole judgement is cached too"


@pytest.mark.parametrize("mode", ["fail_open", "fail_closed"])
def test_too_long_to_judge_whole_is_refused_whatever_the_failure_mode_without_a_call(
    stub: StubServer, mode: str
) -> None:
    """The agent chose its size: never allowed on a partial view, nor because it could not be judged (#22 item 6)."""
    event = bash_event("echo " + padding(3000))  # ~140 KB: more than 8 quick windows
    result = engine(stub, depth="quick", failure_mode=mode).decide_sync(event)
    [hook] = result.hooks
    assert (
        result.decision == "deny"
        and "too large to judge" in (hook.reason or "")
        and hook.error is None
        and stub.calls == 0
    )


@pytest.mark.slow
def test_guard_hook_refuses_a_write_too_large_to_judge_under_fail_open(stub: StubServer, isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(
        "models: {quick: openai/stub-quick, thorough: openai/stub-thorough}\n"
        "hooks:\n  PreToolUse:\n    - id: no-secrets\n      matcher: Write\n      failure_mode: fail_open\n      timeout: 60\n"
        f"      rule: {RULE}\n"
    )
    trust_config(isolated_home / "guard.yaml")
    event = {
        **bash_event(),
        "tool_name": "Write",
        "tool_input": {"file_path": "big.txt", "content": padding(12_000)},
    }  # ~550 KB
    out = run_cli(["hook"], {"GUARD_API_BASE": stub.url}, isolated_home, stdin=json.dumps(event))
    assert out.returncode == 0, out.stderr
    said = json.loads(out.stdout)["hookSpecificOutput"]
    assert said["permissionDecision"] == "deny" and "too large to judge" in said["permissionDecisionReason"]
    assert stub.calls == 0


def test_auto_sends_an_input_too_long_for_quick_straight_to_thorough(stub: StubServer) -> None:
    stub.responder = keyword_policy
    event = bash_event(
        "echo " + padding(600) + " ; rm -rf ~/ ; " + padding(600)
    )  # ~60 KB: 17 quick windows, 3 thorough
    result = engine(stub, depth="auto").decide_sync(event)
    [hook] = result.hooks
    assert (result.decision, hook.tier) == ("deny", "thorough") and "quick windows" in hook.details["escalated"]
    assert {r["model"] for r in stub.requests} == {"stub-thorough"} and hook.details["windows"] == stub.calls == 3
