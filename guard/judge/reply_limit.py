"""A model's answer is read up to a limit: a verdict is a few hundred bytes, so anything far larger is refused unread.

An endpoint that answers with hundreds of megabytes (a misbehaving proxy, a
hostile server behind ``api_base``) would otherwise be held in memory whole and
parsed, and a verdict padded out to that size would still be believed. Both
transports stop reading at :data:`MAX_REPLY_BYTES`: the OpenAI route's wire
(:mod:`guard.judge.http11`) counts the body as it reads it; LiteLLM's HTTP transports
are wrapped so their responses are counted the same way, asked for uncompressed
(:func:`cap_litellm`). httpx is imported by LiteLLM's route only, never on the hook's fast path.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

from guard.judge import wire_clock

__all__ = ["MAX_REPLY_BYTES", "ReplyTooLarge", "cap_litellm", "too_large"]

#: Largest answer read from a model endpoint (errors included): ample for any verdict and any error body.
MAX_REPLY_BYTES = 1 << 20


class ReplyTooLarge(Exception):
    """The endpoint's answer went past :data:`MAX_REPLY_BYTES`; what was read is dropped."""

    def __init__(self, status_code: int | None = None) -> None:
        super().__init__(
            f"the answer is over the {MAX_REPLY_BYTES >> 20} MiB limit for a model's answer; it was not read"
        )
        self.status_code = status_code


def too_large(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was caused by, :class:`ReplyTooLarge` (LiteLLM wraps what its transport raised)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ReplyTooLarge):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return "limit for a model's answer" in str(exc)


def _declared_too_large(headers: Any) -> bool:
    length = headers.get("content-length", "")
    return length.isdigit() and int(length) > MAX_REPLY_BYTES


def _counted(httpx: Any, inner: Any, status: int, sent: list[float]) -> Any:
    """``inner`` (a response's byte stream) raising :class:`ReplyTooLarge` once it has passed the limit; read whole, the
    exchange's seconds (since the request was ``sent`` on an open connection) go to :mod:`guard.judge.wire_clock`."""

    class CountedStream(httpx.AsyncByteStream):  # type: ignore[misc]  # httpx is passed in: imported only when a reply is read
        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in inner:
                seen += len(chunk)
                if seen > MAX_REPLY_BYTES:
                    raise ReplyTooLarge(status)
                yield chunk
            wire_clock.record(time.perf_counter() - sent[0])

        async def aclose(self) -> None:
            await inner.aclose()

    return CountedStream()


async def _capped(httpx: Any, send: Any, request: Any) -> Any:
    """``send(request)`` asking for an uncompressed body (the bytes counted are the bytes parsed), its body counted."""
    request.headers["Accept-Encoding"] = "identity"
    sent = [time.perf_counter()]
    inner_trace = request.extensions.get("trace")

    async def trace(event: str, info: Any) -> None:  # httpcore's events: the exchange starts once a connection is open
        if event.endswith(".send_request_headers.started"):
            sent[0] = time.perf_counter()
        if inner_trace is not None:
            await inner_trace(event, info)

    request.extensions["trace"] = trace
    response = await send(request)
    if _declared_too_large(response.headers):
        await response.aclose()
        raise ReplyTooLarge(response.status_code)
    response.stream = _counted(httpx, response.stream, response.status_code, sent)
    return response


def cap_litellm() -> None:
    """Count every answer LiteLLM's async HTTP clients read (its OpenAI-SDK clients and its own handler share one transport factory).

    LiteLLM's factory returns no transport in the common case (the client then
    builds httpx's own): a capped subclass of httpx's transport is built from the
    same arguments instead, so LiteLLM still adds its proxy mounts beside it; the
    proxy mounts, and any other transport it makes, are wrapped.
    """
    import httpx
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    if getattr(AsyncHTTPHandler, "guard_capped", False):
        return

    class CappedHTTPTransport(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: Any) -> Any:
            return await _capped(httpx, super().handle_async_request, request)

    class CappedTransport(httpx.AsyncBaseTransport):
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def handle_async_request(self, request: Any) -> Any:
            return await _capped(httpx, self.inner.handle_async_request, request)

        async def aclose(self) -> None:
            await self.inner.aclose()

    make, mounts = AsyncHTTPHandler.create_async_transport, AsyncHTTPHandler.create_httpx_proxy_mounts

    def create_async_transport(*args: Any, **kwargs: Any) -> Any:
        inner = make(*args, **kwargs)
        if inner is not None:
            return CappedTransport(inner)
        context, verify = kwargs.get("ssl_context"), kwargs.get("ssl_verify")
        return CappedHTTPTransport(
            verify=context if context is not None else verify is not False,
            cert=kwargs.get("cert"),
            http2=bool(kwargs.get("http2")),
            **({"limits": kwargs["limits"]} if "limits" in kwargs else {}),
        )

    def create_httpx_proxy_mounts(*args: Any, **kwargs: Any) -> Any:
        made = mounts(*args, **kwargs)
        return {url: CappedTransport(t) if t is not None else None for url, t in made.items()} if made else made

    setattr(AsyncHTTPHandler, "create_async_transport", staticmethod(create_async_transport))  # noqa: B010 - a patched method
    setattr(AsyncHTTPHandler, "create_httpx_proxy_mounts", staticmethod(create_httpx_proxy_mounts))  # noqa: B010
    setattr(AsyncHTTPHandler, "guard_capped", True)  # noqa: B010
