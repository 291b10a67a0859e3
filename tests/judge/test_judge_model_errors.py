"""What a newcomer without a key, or with an OpenAI-compatible endpoint, gets from the model adapter.

A missing or refused key fails at once (never retried) and names the variable for the
model's provider; with an api_base every model speaks the OpenAI protocol to it and is
not priced as if it were the provider.
"""

from __future__ import annotations

import os
import time

import pytest
from fixtures.processes import run_guard

from guard.core.errors import JudgeError, JudgeUnavailable
from guard.judge.model import RetryPolicy, complete
from guard.testing.openai_stub import Reply, StubServer

SCHEMA = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": {"type": "object"}}}
#: Enough attempts and back-off that a retried auth error would show in both the call count and the time.
RETRYING = RetryPolicy(attempts=4, base=0.3, max_backoff=1.0, jitter=0.0, min_attempt=0.05)
#: Nothing listens here: should LiteLLM ever try the network, it is refused on loopback, never the internet.
CLOSED = "http://127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"):
        monkeypatch.setenv(name, CLOSED)


async def call(model: str, api_base: str | None = None) -> object:
    return await complete(
        model,
        [{"role": "user", "content": "judge"}],
        schema=SCHEMA,
        max_tokens=20,
        temperature=0.0,
        deadline=time.monotonic() + 20,
        api_base=api_base,
        policy=RETRYING,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "variable"),
    [("openai/gpt-4.1-mini", "OPENAI_API_KEY"), ("anthropic/claude-haiku-4-5", "ANTHROPIC_API_KEY")],
)
async def test_a_missing_key_fails_at_once_naming_the_providers_variable(
    model: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # LiteLLM raises OpenAI's missing key as a 500 "Missing credentials", Anthropic's as a 401
    from guard.judge.model import _litellm

    monkeypatch.setenv("GUARD_TRANSPORT", "litellm")  # the light OpenAI route is tested in test_judge_transport.py
    litellm = _litellm()

    calls: list[str] = []
    real = litellm.acompletion

    async def counting(**kwargs: object) -> object:
        calls.append(str(kwargs["model"]))
        return await real(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", counting)
    with pytest.raises(JudgeError) as failure:
        await call(model)
    assert not isinstance(failure.value, JudgeUnavailable), "a missing key is not an outage"
    message = str(failure.value)
    assert "authentication failed" in message and f"(set {variable})" in message
    other = "OPENAI_API_KEY" if variable == "ANTHROPIC_API_KEY" else "ANTHROPIC_API_KEY"
    assert other not in message, "the hint names the model's provider, not another one"
    assert calls == [model], "asked once: a missing key is not retried"


@pytest.mark.parametrize(
    "reply", [Reply.error(500, "Missing credentials. Please pass an `api_key`"), Reply.error(401, "invalid key")]
)
async def test_an_endpoint_refusing_the_key_is_asked_once(reply: Reply) -> None:
    with StubServer() as stub:
        stub.enqueue(reply, Reply.verdict("allow"))
        with pytest.raises(JudgeError, match="authentication failed.*set OPENAI_API_KEY"):
            await call("openai/stub-judge", stub.url)
        assert stub.calls == 1


async def test_a_real_500_is_still_retried() -> None:
    with StubServer() as stub:
        stub.enqueue(Reply.error(500, "upstream exploded"), Reply.verdict("deny", "ok"))
        reply = await call("openai/stub-judge", stub.url)
        assert (stub.calls, reply.attempts) == (2, 2)  # type: ignore[attr-defined]


async def test_an_api_base_gets_every_model_over_the_openai_protocol_unpriced() -> None:
    with StubServer() as stub:
        stub.default = Reply.verdict("deny", "stub")
        anthropic = await call("anthropic/claude-haiku-4-5", stub.url)
        priced = await call("openai/gpt-4.1-mini", stub.url)  # in LiteLLM's price map, but this is not OpenAI
    assert [body["model"] for body in stub.requests] == ["anthropic/claude-haiku-4-5", "gpt-4.1-mini"]
    assert anthropic.content and priced.content  # type: ignore[attr-defined]
    assert anthropic.cost_usd is None and priced.cost_usd is None  # type: ignore[attr-defined]
    assert anthropic.model == "anthropic/claude-haiku-4-5"  # type: ignore[attr-defined]


@pytest.mark.slow
def test_guard_check_sends_an_anthropic_model_to_the_api_base(tmp_path: os.PathLike[str]) -> None:
    """The README's promise, through the real entry point: no Anthropic key needed, the stub judges."""
    with StubServer() as stub:
        stub.default = Reply.verdict("deny", "deletes the home directory")
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | {"GUARD_API_BASE": stub.url}
        done = run_guard(
            [
                "check",
                "--rule",
                "Deny deleting files outside the project",
                "--model",
                "anthropic/claude-haiku-4-5",
                "--tool",
                "Bash",
                "--input",
                '{"command": "rm -rf ~/"}',
            ],
            tmp_path,
            env=env,
            inherit_env=False,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "decision: deny" in done.stdout
    assert [body["model"] for body in stub.requests] == ["anthropic/claude-haiku-4-5"]
