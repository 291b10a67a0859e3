"""How a judge call reaches a model: the :class:`Transport` seam, and which transport a model takes.

guard has two: ``openai`` (:mod:`guard.judge.openai_transport`, guard's own
HTTP/1.1 wire, for ``openai/…`` models) and ``litellm`` (:mod:`guard.judge.litellm_transport`,
every provider LiteLLM speaks). ``GUARD_TRANSPORT`` picks one for every model; ``auto``
(the default) sends ``openai/…`` models to ``openai`` and the rest to ``litellm``.
Another name is looked up in the ``guard.transports`` entry-point group, read
only then: a package adds a transport without a line of guard changed.
"""

from __future__ import annotations

from typing import Protocol, cast

from guard.core.errors import UnknownName
from guard.core.plugins import Seam
from guard.core.settings import TRANSPORT_ENV, from_env
from guard.judge.chat import ChatReply, ChatRequest

__all__ = ["TRANSPORTS", "Transport", "transport_for", "transport_name"]


class Transport(Protocol):
    """What :func:`guard.judge.model.complete` needs of a transport (a module or an object).

    ``complete`` answers a :class:`~guard.judge.chat.ChatRequest` with a
    :class:`~guard.judge.chat.ChatReply` (content, refusal, finish reason, token
    counts, cost when it knows one, the model id that answered). An HTTP error
    leaves as an exception with ``status_code`` (and ``headers`` for Retry-After):
    :class:`~guard.judge.chat.ProviderError` and its kinds, so retries work alike.
    """

    async def complete(self, request: ChatRequest) -> ChatReply: ...

    def response_mode(self, model: str) -> str:
        """``json_schema``, ``json_object`` or ``prompt``: how ``model`` can be asked for the verdict's shape."""
        ...

    def load(self) -> None:
        """Import what the transport needs (called once, off the event loop, before a deadline starts)."""
        ...


TRANSPORTS = Seam(
    "guard.transports",
    "transport",
    {
        "openai": "guard.judge.openai_transport",
        "litellm": "guard.judge.litellm_transport",
    },
)


def transport_name(model: str) -> str:
    """The transport ``model`` (as routed) takes under ``GUARD_TRANSPORT``; ConfigError for a name nothing registers."""
    chosen = (from_env(TRANSPORT_ENV) or "auto").strip().lower() or "auto"
    if chosen == "auto":
        return "openai" if model.startswith("openai/") else "litellm"
    if not TRANSPORTS.known(chosen):
        raise UnknownName(
            f"unknown transport {chosen!r}; use auto, {', '.join(TRANSPORTS.names())}, or install a plugin "
            f"that adds it to the entry-point group {TRANSPORTS.group!r}",
            key=TRANSPORT_ENV,
        )
    return chosen


def transport_for(model: str) -> Transport:
    """The transport that calls ``model``."""
    return cast(Transport, TRANSPORTS.load(transport_name(model)))
