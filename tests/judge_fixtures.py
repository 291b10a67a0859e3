"""Shared pieces for the judge and smart-hook tests: a running stub, settings pointing at it, events."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from guard.hooks.base import HookContext
from guard.hooks.spec import HookSpec
from guard.judge.model import RetryPolicy
from guard.settings import Settings
from guard.testing.openai_stub import StubServer

QUICK = "openai/stub-quick"
THOROUGH = "openai/stub-thorough"
#: Fast back-off so retry tests take milliseconds, not seconds.
FAST_RETRY = RetryPolicy(attempts=3, base=0.01, max_backoff=0.05, jitter=0.0, min_attempt=0.05)


@pytest.fixture(params=["openai", "litellm"])
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test on both routes to an ``openai/…`` model: the httpx transport, and LiteLLM forced."""
    if request.param == "litellm":
        monkeypatch.setenv("GUARD_TRANSPORT", "litellm")
    return str(request.param)


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def settings_for(stub: StubServer, *, cache_url: str = "off", **models: str) -> Settings:
    return Settings(models=models or {"quick": QUICK, "thorough": THOROUGH}, api_base=stub.url, cache_url=cache_url, audit_path=None)


def context(settings: Settings, policy: RetryPolicy = FAST_RETRY) -> HookContext:
    ctx = HookContext(settings)
    ctx.resources["judge_retry"] = policy
    return ctx


def smart_spec(rule: str | None = "Deny shell commands that delete files outside the project.", **changes: Any) -> HookSpec:
    base: dict[str, Any] = {"id": "no-delete", "kind": "smart", "event": "pre_tool_use", "matcher": "Bash", "rule": rule, "depth": "quick", "timeout": 10.0}
    return HookSpec(**(base | changes))


def bash_event(command: str = "rm -rf /home/u/victim", **extra: Any) -> dict[str, Any]:
    return {
        "session_id": "cabafbae-0000",
        "transcript_path": "/home/u/.claude/projects/p/cabafbae-0000.jsonl",
        "prompt_id": "16317f6d-0000",
        "tool_use_id": "toolu_0",
        "cwd": "/home/u/proj",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
        **extra,
    }
