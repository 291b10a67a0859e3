"""An in-process judge transport with scripted replies: unit tests of the judge path without a server or a socket.

The HTTP stub (:mod:`guard.testing.openai_stub`) tests the transports themselves;
this fake replaces them, so a test of what guard does with a verdict runs in
microseconds and sees exactly what guard asked the model::

    fake = FakeTransport(Reply.verdict("deny", "pipes a download into a shell"))
    with fake.installed():  # GUARD_TRANSPORT=fake for every model, until the block ends
        decision = engine.decide_sync(payload)
    assert fake.calls[0].model == "openai/quick"

It registers itself in :data:`guard.judge.transport.TRANSPORTS` as a plugin's
transport is registered from its entry point.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from guard.core.settings import TRANSPORT_ENV, from_env
from guard.judge import chat
from guard.judge.chat import STUB_FINGERPRINT, ChatReply, ChatRequest
from guard.judge.transport import TRANSPORTS
from guard.testing.openai_stub import Reply

__all__ = ["FakeTransport", "Reply"]

#: The fake installed now (what the ``fake`` transport name resolves to).
current: FakeTransport | None = None

_ERRORS: dict[int, type[chat.ProviderError]] = {
    400: chat.BadRequestError,
    401: chat.AuthenticationError,
    429: chat.RateLimitError,
    500: chat.ServiceUnavailableError,
    503: chat.ServiceUnavailableError,
}


class FakeTransport:
    """A :class:`~guard.judge.transport.Transport` answering each call with the next queued :class:`Reply` (then ``default``)."""

    def __init__(self, *replies: Reply, default: Reply | None = None, mode: str = "json_schema") -> None:
        self.replies: deque[Reply] = deque(replies)
        self.default = default or Reply.verdict("allow", "fake transport default")
        self.mode = mode
        self.calls: list[ChatRequest] = []  # each request, as guard sent it

    def enqueue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def load(self) -> None:
        return None

    def response_mode(self, model: str) -> str:
        return self.mode

    async def complete(self, request: ChatRequest) -> ChatReply:
        self.calls.append(request)
        reply = self.replies.popleft() if self.replies else self.default
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.status != 200:
            message = str((reply.body or {}).get("error", {}).get("message", f"fake error {reply.status}"))
            raise _ERRORS.get(reply.status, chat.ProviderError)(message, status_code=reply.status)
        text = reply.content or reply.refusal_message or ""
        return ChatReply(
            content=reply.content,
            refusal=reply.refusal_message,
            finish_reason=reply.finish_reason,
            prompt_tokens=sum(len(str(m.get("content", ""))) for m in request.messages) // 4,
            completion_tokens=max(1, len(text) // 4),
            served_model=request.model.split("/", 1)[-1],
            fingerprint=STUB_FINGERPRINT,
        )

    @contextmanager
    def installed(self) -> Iterator[FakeTransport]:
        """Send every judge call of this process to this fake while the block runs (``GUARD_TRANSPORT=fake``)."""
        global current
        previous, chosen = current, from_env(TRANSPORT_ENV)
        TRANSPORTS.register("fake", f"{__name__}:current")
        current = self
        os.environ[TRANSPORT_ENV] = "fake"
        try:
            yield self
        finally:
            current = previous
            if chosen is None:
                os.environ.pop(TRANSPORT_ENV, None)
            else:
                os.environ[TRANSPORT_ENV] = chosen
