"""The judge's transports are a seam: guard's two register by name, a fake replaces them in-process, a bad name is a clear error."""

from __future__ import annotations

import pytest
from fixtures.judge import FAST_RETRY, bash_event, context, smart_spec

from guard.core.errors import ConfigError, JudgeUnavailable
from guard.core.events.model import parse_event
from guard.core.settings import Settings
from guard.hooks.smart import SmartHook
from guard.judge.transport import TRANSPORTS, transport_for, transport_name
from guard.testing.fake_transport import FakeTransport, Reply

SETTINGS = Settings(
    models={"quick": "openai/quick", "thorough": "anthropic/thorough"}, cache_url="off", audit_path=None
)


async def judged(command: str) -> object:
    hook = SmartHook(smart_spec(), context(SETTINGS, FAST_RETRY))
    return await hook.run(parse_event(bash_event(command)))


async def test_a_fake_transport_answers_the_judge_in_process() -> None:
    """A smart hook's verdict comes from the fake's scripted reply, and the fake saw the rule and the model guard asked."""
    fake = FakeTransport(Reply.verdict("deny", "deletes a home folder", confidence=0.93))
    with fake.installed():
        result = await judged("rm -rf /home/u/victim")
    assert (result.decision, result.reason, result.model) == ("deny", "deletes a home folder", "openai/quick")  # type: ignore[attr-defined]
    [call] = fake.calls
    assert call.model == "openai/quick"
    assert "Rule: Deny shell commands that delete files outside the project." in call.messages[1]["content"]
    assert "GUARD_TRANSPORT" not in __import__("os").environ  # the block restored the environment


async def test_a_fake_transport_error_goes_through_the_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scripted 503 is retried like a provider's; once the retries run out the hook fails as unavailable."""
    fake = FakeTransport(*[Reply.error(503)] * 3)
    with fake.installed(), pytest.raises(JudgeUnavailable):
        await judged("rm -rf /home/u/victim")
    assert len(fake.calls) == FAST_RETRY.attempts


def test_auto_sends_openai_models_to_guards_wire_and_the_rest_to_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GUARD_TRANSPORT", raising=False)
    assert (transport_name("openai/gpt-4.1-mini"), transport_name("anthropic/claude-haiku-4-5")) == (
        "openai",
        "litellm",
    )
    monkeypatch.setenv("GUARD_TRANSPORT", "litellm")
    assert transport_name("openai/gpt-4.1-mini") == "litellm"
    assert transport_for("openai/gpt-4.1-mini").__name__ == "guard.judge.litellm_transport"  # type: ignore[attr-defined]


def test_an_unknown_transport_names_the_variable_the_choices_and_the_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUARD_TRANSPORT", "grpc")
    with pytest.raises(ConfigError) as caught:
        transport_name("openai/gpt-4.1-mini")
    assert str(caught.value).startswith("GUARD_TRANSPORT: unknown transport 'grpc'; use auto, openai, litellm")
    assert TRANSPORTS.group in str(caught.value)
