"""The one place guard talks to a model: ``complete`` of a transport, with retries inside a deadline.

Which transport calls a model is :mod:`guard.judge.transport`'s answer: ``openai/…``
models go through :mod:`guard.judge.openai_transport` (guard's own HTTP/1.1 wire, pooled connections
per event loop); every other provider, or all of them under
``GUARD_TRANSPORT=litellm``, through :mod:`guard.judge.litellm_transport`; a
plugin's under ``GUARD_TRANSPORT=NAME``. LiteLLM is imported lazily, the first
time it is needed (it costs seconds and hundreds of MB, so nothing on the
``guard hook`` fast path may touch it).

Rate limits, 5xx, timeouts and connection errors are retried with exponential
back-off and jitter, honouring ``Retry-After``, but never past the hook's
deadline; auth errors (including LiteLLM's "Missing credentials" 500) and
bad-request errors are not retried. Errors leave as :class:`~guard.core.errors.JudgeError`
subclasses.

With an ``api_base`` every model is spoken to through the OpenAI protocol (see
:func:`route`): the endpoint is documented as OpenAI-compatible, whatever the
model id's provider prefix.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import re
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

from guard.core.errors import PROVIDER_NOTE, JudgeBadResponse, JudgeError, JudgeTimeout, JudgeUnavailable
from guard.judge import cassette, endpoint
from guard.judge.chat import STUB_FINGERPRINT, ChatReply, ChatRequest, ProxyFailed
from guard.judge.key_redaction import redact_keys
from guard.judge.litellm_transport import load as _litellm
from guard.judge.reply_limit import ReplyTooLarge, too_large
from guard.judge.transport import TRANSPORTS, Transport, transport_for, transport_name

__all__ = [
    "ModelReply",
    "RetryPolicy",
    "client_status",
    "complete",
    "load_client",
    "preload",
    "response_mode",
    "route",
    "warm_client",
]

_RETRY_STATUS = frozenset({408, 409, 429})
#: How a connection that never opened reads, from LiteLLM (over httpx) (which may raise it as a 500).
_UNREACHABLE = re.compile(
    r"connection refused|errno 111|name or service not known|nodename nor servname|temporary failure in name resolution"
    r"|no address associated with hostname|getaddrinfo failed|network is unreachable|no route to host|all connection attempts failed",
    re.IGNORECASE,
)
#: How LiteLLM words a missing key when it raises it as something other than a 401 (e.g. a 500).
_MISSING_KEY = re.compile(
    r"missing credentials|missing [\w ]*api[ _]key|api[ _]key (?:is )?(?:not set|missing|required)", re.IGNORECASE
)
RESPONSE_MODES = ("json_schema", "json_object", "prompt")


@dataclass(frozen=True)
class RetryPolicy:
    """Back-off parameters (injectable so tests need not sleep for seconds)."""

    attempts: int = 4
    connect_attempts: int = 2  # an endpoint nothing answers at (refused, no such host): one quick retry, then say so
    base: float = 0.5  # first back-off, doubled each retry
    max_backoff: float = 8.0
    jitter: float = 0.25  # up to this many seconds added at random
    min_attempt: float = 0.25  # an attempt with less time left than this is not started

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        exponential = min(self.max_backoff, self.base * 2.0 ** (attempt - 1)) + random.uniform(0, self.jitter)
        return max(exponential, retry_after or 0.0)


@dataclass
class ModelReply:
    """What one judge call returned and what it cost (cost None = not priced, or not the provider's endpoint)."""

    model: str
    content: str | None
    refusal: str | None
    latency_ms: float
    attempts: int
    response_mode: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    notes: list[str] = field(default_factory=list)
    finish_reason: str | None = None  # "length" / "content_filter": the content is not the whole answer
    endpoint: str | None = None  # the URL the call went to (guard.judge.endpoint)
    served_model: str | None = None  # the model id the endpoint says answered (a dated snapshot, a local file)
    stub: bool = False  # guard's own stub answered (it says so in its system_fingerprint)
    wire_ms: float | None = (
        None  # the answer's HTTP exchange, request sent → answer read: the provider's part of latency_ms
    )

    def record(self) -> dict[str, Any]:
        """The per-call entry kept in ``HookResult.details["calls"]``."""
        data = {
            "model": self.model,
            "latency_ms": self.latency_ms,
            "attempts": self.attempts,
            "response_mode": self.response_mode,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "endpoint": self.endpoint,
        }
        if self.served_model:
            data["served_model"] = self.served_model
        if self.wire_ms is not None:
            data["wire_ms"] = self.wire_ms
        if self.stub:
            data["stub"] = True
        if self.notes:
            data["notes"] = self.notes
        return data


async def load_client(models: Iterable[str], api_base: str | None = None) -> None:
    """Import the transports ``models`` need in a worker thread (once per process) without blocking the event loop.

    Smart hooks await this before their deadline starts: loading the client
    library (seconds for LiteLLM) is a one-time cost of the process, not the model's latency.
    """
    from guard.judge import openai_transport

    needed = {transport_name(route(model, api_base)) for model in models}
    if "litellm" in needed and "litellm" not in sys.modules:
        await asyncio.to_thread(_litellm)
    if "openai" in needed and not openai_transport.loaded():
        await asyncio.to_thread(openai_transport.load)
    for name in needed - TRANSPORTS.builtins:  # a plugin's transport says itself what loading means
        await asyncio.to_thread(transport_for_name(name).load)


async def warm_client(models: Iterable[str], api_base: str | None = None) -> None:
    """:func:`load_client`, then each transport's own warm-up for ``models`` where it has one (LiteLLM's first call
    does seconds of set-up on a busy machine): what a comparison does before its clock starts, so no model is charged for it."""
    await load_client(models, api_base)
    for routed in sorted({route(model, api_base) for model in models}):
        warm = getattr(transport_for(routed), "warm", None)
        if warm is not None:
            await warm(routed)


#: The thread importing LiteLLM for :func:`preload`, while it runs.
_loading: threading.Thread | None = None


def preload(models: Iterable[str], api_base: str | None = None) -> list[str]:
    """Ready the clients ``models`` will be called through, for a service about to listen; returns their routed ids.

    The OpenAI transport (a fraction of a second) is loaded here. LiteLLM (seconds)
    is imported by a background thread instead: a service that waited for it would
    keep every call waiting, the quick tier's included, while only the calls routed
    through LiteLLM need it, and those wait for it in :func:`load_client` off the event loop.
    """
    global _loading
    routed = sorted({route(model, api_base) for model in models})
    slow = [model for model in routed if transport_name(model) == "litellm"]
    for model in routed:
        if model not in slow:
            transport_for(model).load()
            response_mode(model)
    if slow and "litellm" not in sys.modules and _loading is None:
        _loading = threading.Thread(
            target=lambda: [response_mode(model) for model in slow], name="guard-load-litellm", daemon=True
        )
        _loading.start()
    else:
        for model in slow:
            response_mode(model)
    return routed


def client_status() -> dict[str, str]:
    """Which model client libraries this process has ready: ``ready``, ``loading`` or ``not loaded`` (``guard serve``'s /healthz)."""
    litellm = (
        "loading"
        if _loading is not None and _loading.is_alive()
        else "ready"
        if "litellm" in sys.modules
        else "not loaded"
    )
    openai = "ready" if "guard.judge.openai_transport" in sys.modules else "not loaded"  # guard's own wire: no library
    return {"openai": openai, "litellm": litellm}


def response_mode(model: str) -> str:
    """How ``model`` is asked for the verdict's shape: json_schema, json_object or prompt (its transport knows)."""
    name = transport_name(model)
    if name not in TRANSPORTS.builtins:  # a plugin's answer is its own to cache
        return transport_for_name(name).response_mode(model)
    return _response_mode(name, model)


@lru_cache(maxsize=256)
def _response_mode(transport: str, model: str) -> str:
    """Cached: LiteLLM's model-info lookups cost about a millisecond each, on every call."""
    return transport_for_name(transport).response_mode(model)


def transport_for_name(name: str) -> Transport:
    return cast(Transport, TRANSPORTS.load(name))


def _status(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def _auth_failure(exc: BaseException) -> bool:
    """A rejected or missing credential: retrying cannot help, whatever status LiteLLM gave it."""
    if _status(exc) in (401, 403) or type(exc).__name__ in ("AuthenticationError", "PermissionDeniedError"):
        return True
    return bool(_MISSING_KEY.search(str(exc)))


def _unreachable(exc: BaseException) -> bool:
    """Nothing answers at the endpoint: refused, no such host, no route. Not a timeout or a dropped connection."""
    if isinstance(exc, TimeoutError):
        return False
    if getattr(exc, "unreachable", None) is not None:  # the OpenAI transport knows which connections never opened
        return bool(exc.unreachable)  # type: ignore[attr-defined]
    connection = isinstance(exc, OSError) or type(exc).__name__ in ("APIConnectionError", "InternalServerError")
    return connection and _status(exc) in (None, 500) and bool(_UNREACHABLE.search(str(exc)))


def _retryable(exc: BaseException) -> bool:
    if _auth_failure(exc) or too_large(exc):  # the same key, or the same endpoint, answers the same way again
        return False
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError, ConnectionError)):
        return True
    status = _status(exc)
    return status is not None and (status in _RETRY_STATUS or status >= 500)


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from a ``Retry-After`` (seconds or HTTP date) or ``retry-after-ms`` header, if any."""
    headers = (
        getattr(exc, "headers", None)
        or getattr(getattr(exc, "response", None), "headers", None)
        or getattr(exc, "litellm_response_headers", None)
        or {}
    )
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, AttributeError):
        return None


def _short(exc: BaseException) -> str:
    """The provider's error in one line, its keys redacted (providers echo the key they were sent)."""
    status = _status(exc)
    text = redact_keys(" ".join(str(exc).split()))[:240] or type(exc).__name__
    return f"{type(exc).__name__}{f' {status}' if status else ''}: {text}"


def _failed(kind: type[JudgeError], summary: str, exc: BaseException) -> JudgeError:
    """A failure saying ``summary`` to the agent and, to the user and the audit log, the provider's own words too."""
    return kind(f"{summary}: {_short(exc)}", summary=summary + PROVIDER_NOTE)


def _key_hint(routed: str, api_base: str | None) -> str:
    """Which variable to set for ``routed`` (the model as the transport is asked for it), without loading LiteLLM for it."""
    from guard.judge import openai_transport
    from guard.judge.providers import api_base_origin

    if api_base:
        sent = "OPENAI_API_KEY" if os.environ.get("OPENAI_API_KEY") else "a request without a key"
        return f"{api_base} ({api_base_origin(api_base)}) refused {sent}: set OPENAI_API_KEY to the key it expects"
    if openai_transport.serves(routed) or "litellm" not in sys.modules:
        missing = [] if os.environ.get("OPENAI_API_KEY") or not routed.startswith("openai/") else ["OPENAI_API_KEY"]
    else:  # the call went through LiteLLM, so asking it costs nothing more
        try:
            missing = _litellm().validate_environment(model=routed).get("missing_keys") or []
        except Exception:  # an unknown provider: LiteLLM cannot say
            missing = []
    if missing:
        return f"set {' or '.join(missing)}"
    return "the key in the environment was refused"


def _unreachable_hint(api_base: str | None) -> str:
    from guard.judge.providers import api_base_origin

    if api_base:
        return f"nothing answers at {api_base}: start that server or fix {api_base_origin(api_base)}"
    return "the provider cannot be reached from here: check the network, or set GUARD_API_BASE to an OpenAI-compatible server"


def _translate(
    exc: BaseException, model: str, attempts: int, budget: float, routed: str | None = None, api_base: str | None = None
) -> JudgeError:
    """A foreign exception as the JudgeError the engine's failure_mode understands."""
    status = _status(exc)
    if isinstance(exc, cassette.NotRecorded):
        return JudgeError(f"model {model}: {exc}")
    if _auth_failure(exc):
        return _failed(
            JudgeError, f"model {model}: authentication failed ({_key_hint(routed or model, api_base)})", exc
        )
    if isinstance(exc, ProxyFailed):
        return _failed(
            JudgeUnavailable, f"model {model}: the HTTP proxy would not connect ({attempts} attempt(s))", exc
        )
    if _unreachable(exc):
        return _failed(JudgeUnavailable, f"model {model}: {_unreachable_hint(api_base)} ({attempts} attempt(s))", exc)
    if too_large(exc):
        return JudgeBadResponse(f"model {model}: {ReplyTooLarge().args[0]}")
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) or status == 408:
        return JudgeTimeout(f"model {model} did not answer within the {budget:.3g}s budget ({attempts} attempt(s))")
    if _retryable(exc):
        return _failed(JudgeUnavailable, f"model {model} unavailable after {attempts} attempt(s)", exc)
    if type(exc).__name__ == "ContentPolicyViolationError":
        return _failed(JudgeBadResponse, f"model {model}: the provider's content filter refused the judge call", exc)
    return _failed(JudgeError, f"model {model} rejected the request", exc)


async def _retrying(call: Any, *, policy: RetryPolicy, deadline: float) -> Any:
    """Run ``call(timeout)`` with tenacity until it succeeds, a stop applies, or the deadline nears."""
    from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

    def wait(state: Any) -> float:
        exc = state.outcome.exception() if state.outcome else None
        return policy.backoff(state.attempt_number, _retry_after(exc) if exc else None)

    def out_of_time(state: Any) -> bool:
        return bool(time.monotonic() + state.upcoming_sleep + policy.min_attempt > deadline)

    def nobody_there(state: Any) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        return exc is not None and _unreachable(exc) and state.attempt_number >= policy.connect_attempts

    too_many: Any = stop_after_attempt(policy.attempts)  # tenacity combines a stop with any callable via |
    async for attempt in AsyncRetrying(
        retry=retry_if_exception(_retryable), wait=wait, stop=too_many | out_of_time | nobody_there, reraise=True
    ):
        with attempt:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            async with asyncio.timeout(remaining):  # not wait_for: on 3.11 that runs the call in a task of its own
                result = await call(remaining)
    return result


def _text(content: Any, model: str) -> str | None:
    """A message's text: a string, or the text parts of a list of content parts (some OpenAI-compatible servers send one).

    Parts of another type (reasoning, a refusal part) are not the verdict and are skipped; anything else is a bad answer, not a crash.
    """
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = []
        for part in content:
            if isinstance(part, dict) and part.get("type", "text") != "text":
                continue
            text = part if isinstance(part, str) else part.get("text") if isinstance(part, dict) else None
            if not isinstance(text, str):
                break
            texts.append(text)
        else:
            return "".join(texts)
    raise JudgeBadResponse(
        f"model {model}: the answer's content is neither text nor a list of text parts ({type(content).__name__})"
    )


def route(model: str, api_base: str | None) -> str:
    """The LiteLLM model id to call: with an OpenAI-compatible ``api_base``, always through ``openai/``.

    ``anthropic/claude-haiku-4-5`` then reaches the endpoint as model ``anthropic/claude-haiku-4-5``
    (what a LiteLLM proxy or OpenRouter expects) instead of LiteLLM speaking Anthropic's protocol to it.
    """
    if api_base and not model.startswith("openai/"):
        return f"openai/{model}"
    return model


def _api_key(model: str, api_base: str | None) -> str | None:
    """A placeholder key where none is needed: replaying a cassette (nothing is sent), or an OpenAI-compatible local server (the protocol wants one)."""
    if cassette.replaying():
        return REPLAY_KEY
    if api_base and model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
        return "sk-guard-no-key"
    return None


#: What a replayed call carries as its key: the cassette answers, and keys are never recorded.
REPLAY_KEY = "sk-guard-replay"


def _first_mode(routed: str, api_base: str | None) -> str:
    """The response format to ask ``routed`` for first.

    An endpoint named by ``api_base`` (vLLM, llama.cpp's server, Ollama, LM Studio, a
    gateway) is asked for ``json_schema``, which they accept, whatever LiteLLM's
    price map knows of the model's name; one that turns it down is asked one
    format weaker, and the call's notes say so.
    """
    if api_base and transport_name(routed) in TRANSPORTS.builtins:
        return "json_schema"
    return response_mode(routed)


async def complete(
    model: str,
    messages: list[dict[str, str]],
    *,
    schema: dict[str, Any],
    max_tokens: int,
    temperature: float,
    deadline: float,
    api_base: str | None = None,
    policy: RetryPolicy | None = None,
) -> ModelReply:
    """One judge call (retries included) that must finish before ``deadline`` (``time.monotonic()``).

    Asks for ``schema`` as a JSON-schema response where the model supports it,
    else JSON mode, else relies on the prompt. A provider that rejects the
    response format with a bad-request error is asked again one mode weaker (and
    the call's notes say so).
    """
    routed = route(model, api_base)
    transport = transport_for(routed)
    policy = policy or RetryPolicy()
    started = time.monotonic()
    budget = deadline - started
    mode = _first_mode(routed, api_base)
    notes: list[str] = []
    key = _api_key(routed, api_base)
    attempts = 0
    while True:
        formats = {"json_schema": schema, "json_object": {"type": "json_object"}, "prompt": None}

        async def call(timeout: float, response_format: dict[str, Any] | None = formats[mode]) -> ChatReply:
            nonlocal attempts
            attempts += 1
            request = ChatRequest(
                model=routed,
                messages=messages,
                max_tokens=max_tokens,
                temperature=temperature,
                timeout=timeout,
                response_format=response_format,
                api_base=api_base,
                api_key=key,
            )
            return await transport.complete(request)

        try:
            reply: ChatReply = await _retrying(call, policy=policy, deadline=deadline)
            break
        except Exception as exc:
            weaker = RESPONSE_MODES.index(mode) + 1
            rejected_format = (
                _status(exc) == 400
                and type(exc).__name__ not in ("ContextWindowExceededError", "ContentPolicyViolationError")
                and not too_large(exc)
            )
            if rejected_format and weaker < len(RESPONSE_MODES) and time.monotonic() + policy.min_attempt < deadline:
                notes.append(f"{mode} rejected ({_short(exc)[:120]}); retried as {RESPONSE_MODES[weaker]}")
                mode = RESPONSE_MODES[weaker]
                continue
            raise _translate(exc, model, attempts, budget, routed, api_base) from exc
    return ModelReply(
        model=model,
        content=_text(reply.content, model),
        refusal=_text(reply.refusal, model),
        latency_ms=round((time.monotonic() - started) * 1000, 3),
        attempts=attempts,
        response_mode=mode,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        cost_usd=None if api_base else reply.cost_usd,  # a custom endpoint's price is not the provider's
        notes=notes + reply.notes,
        finish_reason=reply.finish_reason,
        endpoint=endpoint.resolve(routed, api_base),
        served_model=reply.served_model,
        stub=reply.fingerprint == STUB_FINGERPRINT,
        wire_ms=reply.wire_ms,
    )
