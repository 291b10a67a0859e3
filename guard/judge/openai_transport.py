"""The fast route to ``openai/…`` models: OpenAI's chat API over one shared httpx client, no LiteLLM.

``openai/<name>`` with an ``api_base`` is how guard reaches any server that
speaks OpenAI's chat API (OpenAI, a LiteLLM proxy, vLLM, Ollama, OpenRouter,
Groq…). For those, importing LiteLLM costs seconds per fresh process and its
per-call client cache (keyed on the timeout) opens a new connection per call;
this route reuses kept-alive connections per event loop, posting over asyncio's
own streams (:mod:`guard.judge.http11`), or over httpx when a proxy variable is set.
``GUARD_TRANSPORT=litellm`` sends every model through LiteLLM instead.

:func:`acompletion` takes LiteLLM's arguments and answers with the parts of
LiteLLM's response that :mod:`guard.judge.model` reads, raising exceptions that
carry ``status_code`` / ``response`` as LiteLLM's do, so retries, error messages
and the response-format fallback work the same on both routes. Prices and
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
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from guard.judge import endpoint, http11
from guard.judge.reply_limit import read_capped

__all__ = ["acompletion", "litellm_data", "load", "price_map", "response_mode", "serves"]

PREFIX = "openai/"
#: LiteLLM's local price map, beside its package (read, never imported).
PRICE_MAP = "model_prices_and_context_window_backup.json"


def serves(model: str) -> bool:
    """Whether ``model`` takes this route: ``openai/…`` unless ``GUARD_TRANSPORT`` names another transport."""
    from guard.judge.transport import transport_name

    return transport_name(model) == "openai"


class ProviderError(Exception):
    """An HTTP error answer from the provider (``status_code``, and the ``response`` for Retry-After)."""

    def __init__(self, message: str, *, status_code: int, response: Any = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.response = response


class BadRequestError(ProviderError):
    pass


class ContextWindowExceededError(BadRequestError):
    pass


class ContentPolicyViolationError(BadRequestError):
    pass


class AuthenticationError(ProviderError):
    pass


class RateLimitError(ProviderError):
    pass


class ServiceUnavailableError(ProviderError):
    pass


class APIConnectionError(ConnectionError):
    """The provider could not be reached, or dropped the connection (retried like LiteLLM's)."""

    unreachable = False


class EndpointUnreachable(APIConnectionError):
    """No connection could be opened at all (refused, no such host, TLS handshake): waiting will not help soon."""

    unreachable = True


@dataclass
class Message:
    content: str | None
    refusal: str | None = None


@dataclass
class Choice:
    message: Message
    finish_reason: str | None = None


@dataclass
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass
class ChatCompletion:
    """The fields of a chat completion guard reads, in LiteLLM's shape."""

    choices: list[Choice]
    usage: Usage | None
    _hidden_params: dict[str, Any] = field(default_factory=dict)


#: Seconds an idle connection is kept for reuse.
KEEPALIVE_S = 60.0
#: One pool per event loop and URL scheme (an httpx connection belongs to the loop that opened it), and what closes it.
_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, tuple[_Pool, AsyncIterator[None]]]] = weakref.WeakKeyDictionary()


def load() -> None:
    """Import httpx, the connection library its clients load on first use, and read the price map (once per process)."""
    import httpcore  # noqa: F401
    import httpx  # noqa: F401

    price_map()


class _Pool:
    """The connections of one event loop and URL scheme: :mod:`guard.judge.http11`'s, or httpx clients when proxied.

    Proxied calls go through httpx clients, one call (so one connection) in flight on each:
    httpcore scans every connection of a client, and polls each idle one's socket,
    on every request and response, so the CPU per call grows with the connections a
    client holds (at 64 calls in flight, 8 per client cost 4.0 ms of CPU per call on
    the 2-core bench box, one per client 2.2 ms). A call takes an idle client (its
    connection kept alive), else a new one; so the connections opened never exceed
    the peak of calls in flight. Plain-HTTP pools (a local server, a proxy on
    loopback) never build a TLS context: loading the CA bundle costs a fresh process ~0.2 s.
    """

    def __init__(self, tls: bool) -> None:
        import httpx

        self._httpx = httpx
        context = httpx.create_ssl_context() if tls else None  # one CA bundle load for every connection
        self._verify: Any = False if context is None else context
        self._idle: list[Any] = []  # clients with no call in flight, the most recently used last
        self._clients: list[Any] = []
        self.wire = http11.Connections(context, KEEPALIVE_S)

    @asynccontextmanager
    async def client(self) -> AsyncIterator[Any]:
        if self._idle:
            client = self._idle.pop()  # the warmest connection: the least likely to have been closed by the server
        else:
            limits = self._httpx.Limits(max_connections=None, max_keepalive_connections=None, keepalive_expiry=KEEPALIVE_S)
            client = self._httpx.AsyncClient(limits=limits, timeout=None, verify=self._verify)
            self._clients.append(client)
        try:
            yield client
        finally:
            self._idle.append(client)

    async def aclose(self) -> None:
        await self.wire.aclose()
        for client in self._clients:
            await client.aclose()


async def _closed_at_shutdown(pool: _Pool) -> AsyncIterator[None]:
    """Closes ``pool`` when the loop shuts down (``asyncio.run`` finalizes open async generators)."""
    try:
        yield
    finally:
        await pool.aclose()


async def _pool(url: str) -> _Pool:
    """The running loop's pool for ``url``'s scheme, made (and set to close with the loop) on first use."""
    scheme = "http" if url.startswith("http://") else "https"
    pools = _pools.setdefault(asyncio.get_running_loop(), {})
    if scheme not in pools:
        pool = _Pool(tls=scheme == "https")
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


def _cost(model: str, usage: Usage | None) -> float | None:
    info = _model_info(model)
    inp, out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if usage is None or None in (usage.prompt_tokens, usage.completion_tokens) or inp is None or out is None:
        return None
    return float(usage.prompt_tokens * inp + usage.completion_tokens * out)


def _text(content: bytes) -> str:
    return content.decode("utf-8", errors="replace")


def _error(response: Any, content: bytes) -> ProviderError:
    """The provider's error answer (``content``, its body) as the exception type LiteLLM would raise for it."""
    try:
        parsed = json.loads(content)
        detail = (parsed.get("error") if isinstance(parsed, dict) else None) or {}
    except ValueError:
        detail = {}
    if not isinstance(detail, dict):
        detail = {"message": str(detail)}
    code = str(detail.get("code") or detail.get("type") or "")
    message = str(detail.get("message") or _text(content)[:240] or response.reason_phrase)
    status = response.status_code
    kind: type[ProviderError] = ProviderError
    if status == 400:
        kind = {"context_length_exceeded": ContextWindowExceededError, "content_filter": ContentPolicyViolationError, "content_policy_violation": ContentPolicyViolationError}.get(code, BadRequestError)
    elif status in (401, 403):
        kind = AuthenticationError
    elif status == 429:
        kind = RateLimitError
    elif status >= 500:
        kind = ServiceUnavailableError
    return kind(message, status_code=status, response=response)


def _completion(model: str, data: Any, response: Any) -> ChatCompletion:
    try:
        raw = data["choices"][0]
        message = raw["message"]
        choice = Choice(Message(message.get("content"), message.get("refusal")), raw.get("finish_reason"))
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ProviderError(f"the answer is not a chat completion ({type(exc).__name__}: {exc})", status_code=response.status_code, response=response) from exc
    counts = data.get("usage") if isinstance(data.get("usage"), dict) else None
    usage = Usage(counts.get("prompt_tokens"), counts.get("completion_tokens")) if counts else None
    return ChatCompletion([choice], usage, {"response_cost": _cost(model, usage)})


def _through_httpx(httpx: Any) -> bool:
    """Whether this call goes over httpx: a proxy variable is set (httpx reads them), or httpx's transport is
    patched right now (vcrpy cassettes, ``guard eval --record/--replay``, pytest-recording: they must see the call)."""
    return http11.proxied() or hasattr(httpx.AsyncHTTPTransport.handle_async_request, "__wrapped__")


async def acompletion(
    *,
    model: str,
    messages: list[dict[str, str]],
    max_tokens: int,
    temperature: float,
    timeout: float,
    stream: bool = False,
    api_base: str | None = None,
    api_key: str | None = None,
    response_format: dict[str, Any] | None = None,
    **litellm_only: Any,  # num_retries, max_retries, drop_params: guard retries itself and sends only what is set
) -> ChatCompletion:
    """One chat completion; the arguments are LiteLLM's, so both routes share one call site."""
    import httpx

    if stream:
        raise ValueError("the OpenAI transport does not stream")
    base = endpoint.resolve(model, api_base)
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        raise AuthenticationError("no API key: set OPENAI_API_KEY (or GUARD_API_BASE for a server that needs none)", status_code=401)
    headers = {"Authorization": f"Bearer {key}"}
    if organization := os.environ.get("OPENAI_ORGANIZATION"):
        headers["OpenAI-Organization"] = organization
    body: dict[str, Any] = {"model": model.removeprefix(PREFIX), "messages": messages, "temperature": temperature, "max_tokens": max_tokens}
    if response_format is not None:
        body["response_format"] = response_format
    url = f"{base.rstrip('/')}/chat/completions"
    pool = await _pool(url)
    response: Any
    if _through_httpx(httpx):
        try:
            async with pool.client() as client, client.stream("POST", url, json=body, headers=headers, timeout=timeout) as response:
                content = await read_capped(response)  # a verdict is small: a huge answer is refused, never held
        except httpx.TimeoutException as exc:
            raise TimeoutError(f"no answer within {timeout:.3g}s") from exc
        except httpx.ConnectError as exc:
            raise EndpointUnreachable(f"{type(exc).__name__}: {exc}") from exc
        except httpx.TransportError as exc:
            raise APIConnectionError(f"{type(exc).__name__}: {exc}") from exc
    else:
        try:
            response, content = await pool.wire.post(url, json.dumps(body).encode(), headers, timeout)  # capped as above
        except TimeoutError as exc:
            raise TimeoutError(f"no answer within {timeout:.3g}s") from exc
        except http11.Unreachable as exc:
            raise EndpointUnreachable(str(exc)) from exc
        except http11.BrokenAnswer as exc:
            raise APIConnectionError(str(exc)) from exc
    if response.status_code >= 400:
        raise _error(response, content)
    try:
        data = json.loads(content)
    except ValueError as exc:
        raise ProviderError(f"the answer is not JSON: {_text(content)[:120]!r}", status_code=response.status_code, response=response) from exc
    return _completion(model, data, response)
