"""What a judge transport is asked and answers: guard's own request, reply and error types.

Every transport (guard's HTTP/1.1 wire for ``openai/…`` endpoints, LiteLLM for the
other providers, a plugin's, the test fake) takes a :class:`ChatRequest` and
answers with a :class:`ChatReply`, so :mod:`guard.judge.model` reads one shape
whatever answered, and a recorded reply (:mod:`guard.judge.cassette`) is read by the
same code as a live one. A provider's HTTP error leaves a transport as a
:class:`ProviderError` (``status_code``, and the ``headers`` a Retry-After is read
from); LiteLLM's own exceptions carry the same two attributes, so retries and
error messages work alike on every route.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "STUB_FINGERPRINT",
    "APIConnectionError",
    "AuthenticationError",
    "BadRequestError",
    "ChatReply",
    "ChatRequest",
    "ContentPolicyViolationError",
    "ContextWindowExceededError",
    "EndpointUnreachable",
    "ProviderError",
    "ProxyFailed",
    "RateLimitError",
    "ServiceUnavailableError",
]

#: The ``system_fingerprint`` guard's own stub servers answer with: how a report tells a stub from a local model.
STUB_FINGERPRINT = "guard-stub"


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to ask for; ``model`` is the routed id (``openai/gpt-4.1-mini``), ``timeout`` seconds."""

    model: str
    messages: list[dict[str, str]]
    max_tokens: int
    temperature: float
    timeout: float
    response_format: dict[str, Any] | None = None
    api_base: str | None = None
    api_key: str | None = None


@dataclass
class ChatReply:
    """The parts of a chat completion guard reads.

    ``content`` and ``refusal`` are as the endpoint sent them (text, or a list of
    content parts some servers send); ``served_model`` is the model id the endpoint
    says answered (a dated snapshot, a local file name); ``fingerprint`` its
    ``system_fingerprint`` (:data:`STUB_FINGERPRINT` for guard's stub); ``cost_usd``
    None when the transport knows no price; ``wire_ms`` the provider's part of the call.
    """

    content: Any
    refusal: Any = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    served_model: str | None = None
    fingerprint: str | None = None
    notes: list[str] = field(default_factory=list)
    wire_ms: float | None = None  # the HTTP exchange's time, request sent → answer read (guard.judge.wire_clock)


class ProviderError(Exception):
    """An HTTP error answer from the provider: ``status_code``, and the answer's ``headers`` (Retry-After)."""

    def __init__(self, message: str, *, status_code: int, headers: Any = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.headers = headers if headers is not None else {}


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
    """The provider could not be reached, or dropped the connection (retried)."""

    unreachable = False


class EndpointUnreachable(APIConnectionError):
    """No connection could be opened at all (refused, no such host, TLS handshake): waiting will not help soon."""

    unreachable = True


class ProxyFailed(EndpointUnreachable):
    """The HTTP proxy the environment names would not open the way to the endpoint (it names the proxy and why)."""
