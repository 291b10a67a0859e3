"""The ``litellm`` transport: every provider LiteLLM speaks, through ``litellm.acompletion``, answered as guard's ``ChatReply``.

LiteLLM is imported here, lazily, the first time a model needs it (seconds in a
fresh process). Before the import its price map is pinned to the bundled copy
(no network fetch) and its async client to httpx (so vcrpy cassettes can record
and replay it).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from guard.judge import wire_clock
from guard.judge.chat import ChatReply, ChatRequest
from guard.judge.reply_limit import cap_litellm

__all__ = ["complete", "load", "response_mode", "warm"]


@contextmanager
def _no_dotenv() -> Iterator[None]:
    """LiteLLM's import loads the first ``.env`` above its own folder (or, in a ``-c`` process such as the warm service,
    above the working directory) unless ``LITELLM_MODE`` says otherwise: a file the agent can write (the project's
    ``.env`` beside a virtualenv inside it, ``~/.env``) would set ``OPENAI_BASE_URL`` and send the judge, with the
    user's key, to an endpoint of the agent's choosing. guard's endpoints come from its config and the environment
    the client started it in, never from such a file."""
    before = os.environ.get("LITELLM_MODE")
    os.environ["LITELLM_MODE"] = "PRODUCTION"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("LITELLM_MODE", None)
        else:
            os.environ["LITELLM_MODE"] = before


def load() -> Any:
    """LiteLLM, imported and configured once (later calls return it)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault(
        "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True"
    )  # no fetch from GitHub on the first anthropic/ call
    os.environ.setdefault("DISABLE_AIOHTTP_TRANSPORT", "True")
    # Pydantic notes about LiteLLM's own TypedDicts surface mid-call (schemas are built lazily);
    # they are not the user's business. Re-applied on every call: filterwarnings is idempotent,
    # and a caller's catch_warnings() (pytest's "error" filter) would otherwise shadow it.
    warnings.filterwarnings("ignore", message=r".*`ReadOnly` qualifier", category=UserWarning)
    with warnings.catch_warnings(), _no_dotenv():
        warnings.simplefilter("ignore")  # import-time notes, same reason
        import litellm

    litellm.suppress_debug_info = True
    cap_litellm()
    return litellm


def _cost(litellm: Any, response: Any) -> float | None:
    """The call's cost in USD, as LiteLLM priced it while logging the call (None: not in its price map)."""
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:
        cost = hidden["response_cost"]
        return float(cost) if cost is not None else None
    try:
        cost = litellm.completion_cost(completion_response=response)
    except Exception:  # not in the price map
        return None
    return float(cost) if cost is not None else None


async def warm(model: str) -> None:
    """Run LiteLLM's call path once with a mocked answer (no request leaves): the lazy imports, logging workers and
    provider set-up its first call does, done before anything is timed, instead of inside a judge's first calls."""
    try:
        await load().acompletion(
            model=model, messages=[{"role": "user", "content": "warm-up"}], mock_response="{}", max_tokens=1
        )
    except Exception:  # a model LiteLLM cannot route (no provider): its calls say so, case by case, in guard's words
        return


async def complete(request: ChatRequest) -> ChatReply:
    """One chat completion through ``litellm.acompletion``, answered as guard's :class:`~guard.judge.chat.ChatReply`."""
    litellm = load()
    optional = {
        name: value
        for name, value in (
            ("response_format", request.response_format),
            ("api_base", request.api_base),
            ("api_key", request.api_key),
        )
        if value is not None
    }
    with wire_clock.measuring() as spent:
        response = await litellm.acompletion(
            model=request.model,
            messages=request.messages,
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            timeout=request.timeout,
            stream=False,
            num_retries=0,
            max_retries=0,
            drop_params=True,
            **optional,  # guard retries itself
        )
    choice = response.choices[0]
    usage = getattr(response, "usage", None)
    served = getattr(response, "model", None)
    fingerprint = getattr(response, "system_fingerprint", None)
    return ChatReply(
        content=choice.message.content,
        refusal=getattr(choice.message, "refusal", None),
        finish_reason=getattr(choice, "finish_reason", None),
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        cost_usd=_cost(litellm, response),
        served_model=served if isinstance(served, str) else None,
        fingerprint=fingerprint if isinstance(fingerprint, str) else None,
        wire_ms=round(spent[-1] * 1000, 3) if spent else None,
    )


def response_mode(model: str) -> str:
    """json_schema where LiteLLM knows the model supports it, else json_object where allowed, else prompt."""
    litellm = load()
    try:
        if litellm.supports_response_schema(model=model):
            return "json_schema"
        if "response_format" in (litellm.get_supported_openai_params(model=model) or ()):
            return "json_object"
    except Exception:  # unknown provider or model: ask in the prompt only
        pass
    return "prompt"
