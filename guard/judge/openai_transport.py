"""The fast route to ``openai/…`` models: OpenAI's chat API over guard's own HTTP/1.1 wire, no LiteLLM.

``openai/<name>`` with an ``api_base`` is how guard reaches any server that
speaks OpenAI's chat API (OpenAI, a LiteLLM proxy, vLLM, Ollama, OpenRouter,
Groq…). For those, importing LiteLLM costs seconds per fresh process and its
per-call client cache (keyed on the timeout) opens a new connection per call;
this route reuses kept-alive connections per event loop, posting over asyncio's
own streams (:mod:`guard.judge.http11`), through the HTTP proxy the environment
names if any (:mod:`guard.judge.proxy`).
``GUARD_TRANSPORT=litellm`` sends every model through LiteLLM instead.

:func:`complete` answers a :class:`~guard.judge.chat.ChatRequest` with a
:class:`~guard.judge.chat.ChatReply` (:func:`parse_reply` reads live and recorded
answers alike), raising :mod:`guard.judge.chat`'s errors, so retries, error messages
and the response-format fallback work the same on every route. While a cassette is
in use (:mod:`guard.judge.cassette`) it answers in place of the network. Prices and
structured-output support come from the price map LiteLLM ships, read as JSON
(never by importing LiteLLM); a model not in it costs ``None``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import weakref
from collections.abc import AsyncIterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from guard.judge import cassette, endpoint, http11
from guard.judge.chat import (
    APIConnectionError,
    AuthenticationError,
    BadRequestError,
    ChatReply,
    ChatRequest,
    ContentPolicyViolationError,
    ContextWindowExceededError,
    EndpointUnreachable,
    ProviderError,
    ProxyFailed,
    RateLimitError,
    ServiceUnavailableError,
)

__all__ = ["complete", "litellm_data", "load", "parse_reply", "price_map", "response_mode", "serves"]

PREFIX = "openai/"
#: LiteLLM's local price map, beside its package (read, never imported).
PRICE_MAP = "model_prices_and_context_window_backup.json"


def serves(model: str) -> bool:
    """Whether ``model`` takes this route: ``openai/…`` unless ``GUARD_TRANSPORT`` names another transport."""
    from guard.judge.transport import transport_name

    return transport_name(model) == "openai"


#: Seconds an idle connection is kept for reuse.
KEEPALIVE_S = 60.0
#: One pool per event loop and URL scheme (a connection belongs to the loop that opened it), and what closes it.
_pools: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[str, tuple[http11.Connections, AsyncIterator[None]]]
] = weakref.WeakKeyDictionary()


def load() -> None:
    """Read the price map (once per process): what this route loads before its first call."""
    price_map()


def loaded() -> bool:
    """Whether :func:`load` has run in this process."""
    return price_map.cache_info().currsize > 0


async def _closed_at_shutdown(pool: http11.Connections) -> AsyncIterator[None]:
    """Closes ``pool`` when the loop shuts down (``asyncio.run`` finalizes open async generators)."""
    try:
        yield
    finally:
        await pool.aclose()


async def _pool(url: str) -> http11.Connections:
    """The running loop's connections for ``url``'s scheme, made (and set to close with the loop) on first use.

    Plain-HTTP pools (a local server, or one reached through a proxy in absolute form) never
    build a TLS context: loading the CA bundle costs a fresh process ~0.2 s.
    """
    scheme = "http" if url.startswith("http://") else "https"
    pools = _pools.setdefault(asyncio.get_running_loop(), {})
    if scheme not in pools:
        pool = http11.Connections(http11.tls_context() if scheme == "https" else None, KEEPALIVE_S)
        closer = _closed_at_shutdown(pool)
        pools[scheme] = (pool, closer)
        await closer.__anext__()
    return pools[scheme][0]


def litellm_data(name: str) -> dict[str, Any]:
    """One of the JSON files LiteLLM ships beside its package, read without importing LiteLLM ({} when absent)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return {}
    try:
        data = json.loads((Path(spec.origin).parent / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@lru_cache(maxsize=1)
def price_map() -> dict[str, Any]:
    """LiteLLM's bundled model map: prices, providers, structured-output support."""
    return litellm_data(PRICE_MAP)


def _model_info(model: str) -> dict[str, Any]:
    name = model.removeprefix(PREFIX)
    prices = price_map()
    for key in (model, name):
        info = prices.get(key)
        if isinstance(info, dict) and info.get("litellm_provider") == "openai":
            return info
    return {}


def response_mode(model: str) -> str:
    """json_schema where the price map says the model supports it, else JSON mode (as LiteLLM answers)."""
    return "json_schema" if _model_info(model).get("supports_response_schema") else "json_object"


def _cost(model: str, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
    info = _model_info(model)
    inp, out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if prompt_tokens is None or completion_tokens is None or inp is None or out is None:
        return None
    return float(prompt_tokens * inp + completion_tokens * out)


def _text(content: bytes) -> str:
    return content.decode("utf-8", errors="replace")


def _error(status: int, reason: str, headers: Any, content: bytes) -> ProviderError:
    """The provider's error answer (``content``, its body) as the :class:`ProviderError` its status and code mean."""
    try:
        parsed = json.loads(content)
        detail = (parsed.get("error") if isinstance(parsed, dict) else None) or {}
    except ValueError:
        detail = {}
    if not isinstance(detail, dict):
        detail = {"message": str(detail)}
    code = str(detail.get("code") or detail.get("type") or "")
    message = str(detail.get("message") or _text(content)[:240] or reason)
    kind: type[ProviderError] = ProviderError
    if status == 400:
        kind = {
            "context_length_exceeded": ContextWindowExceededError,
            "content_filter": ContentPolicyViolationError,
            "content_policy_violation": ContentPolicyViolationError,
        }.get(code, BadRequestError)
    elif status in (401, 403):
        kind = AuthenticationError
    elif status == 429:
        kind = RateLimitError
    elif status >= 500:
        kind = ServiceUnavailableError
    return kind(message, status_code=status, headers=headers)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_reply(model: str, status: int, reason: str, headers: Any, content: bytes) -> ChatReply:
    """An endpoint's answer (live or recorded: the same code reads both) as a :class:`ChatReply`, or the :class:`ProviderError` it means."""
    if status >= 400:
        raise _error(status, reason, headers, content)
    try:
        data = json.loads(content)
    except ValueError as exc:
        raise ProviderError(
            f"the answer is not JSON: {_text(content)[:120]!r}", status_code=status, headers=headers
        ) from exc
    try:
        raw = data["choices"][0]
        message = raw["message"]
        content_part, refusal, finish = message.get("content"), message.get("refusal"), raw.get("finish_reason")
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ProviderError(
            f"the answer is not a chat completion ({type(exc).__name__}: {exc})", status_code=status, headers=headers
        ) from exc
    counts = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    prompt_tokens, completion_tokens = _count(counts.get("prompt_tokens")), _count(counts.get("completion_tokens"))
    served, fingerprint = data.get("model"), data.get("system_fingerprint")
    return ChatReply(
        content=content_part,
        refusal=refusal,
        finish_reason=finish if isinstance(finish, str) else None,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=_cost(model, prompt_tokens, completion_tokens),
        served_model=served if isinstance(served, str) else None,
        fingerprint=fingerprint if isinstance(fingerprint, str) else None,
    )


async def _post(
    pool: http11.Connections, url: str, body: bytes, headers: dict[str, str], timeout: float
) -> tuple[http11.Answer, bytes]:
    try:
        if cassette.active() is not None:
            return await cassette.post(pool, url, body, headers, timeout)
        return await pool.post(url, body, headers, timeout)  # a verdict is small: a huge answer is refused, never held
    except TimeoutError as exc:
        raise TimeoutError(f"no answer within {timeout:.3g}s") from exc
    except http11.ProxyRefused as exc:
        raise ProxyFailed(str(exc)) from exc
    except http11.Unreachable as exc:
        raise EndpointUnreachable(str(exc)) from exc
    except http11.BrokenAnswer as exc:
        raise APIConnectionError(str(exc)) from exc


async def complete(request: ChatRequest) -> ChatReply:
    """One chat completion over guard's wire (a cassette's, when one is in use)."""
    base = endpoint.resolve(request.model, request.api_base)
    key = request.api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        raise AuthenticationError(
            "no API key: set OPENAI_API_KEY (or GUARD_API_BASE for a server that needs none)", status_code=401
        )
    headers = {"Authorization": f"Bearer {key}"}
    if organization := os.environ.get("OPENAI_ORGANIZATION"):
        headers["OpenAI-Organization"] = organization
    body: dict[str, Any] = {
        "model": request.model.removeprefix(PREFIX),
        "messages": request.messages,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
    }
    if request.response_format is not None:
        body["response_format"] = request.response_format
    url = f"{base.rstrip('/')}/chat/completions"
    answer, content = await _post(await _pool(url), url, json.dumps(body).encode(), headers, request.timeout)
    reply = parse_reply(request.model, answer.status_code, answer.reason_phrase, answer.headers, content)
    reply.wire_ms = (
        answer.exchange_ms
    )  # the exchange alone: a new connection's opening is the client's cost, not the provider's
    return reply
