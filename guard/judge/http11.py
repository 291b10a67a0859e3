"""One POST at a time over kept-alive HTTP/1.1 connections on asyncio's own streams: the OpenAI route's wire.

A judgement is one small JSON POST and one small JSON answer. Through httpx,
httpcore, anyio and h11 that costs about 5 ms of CPU per call on a shared 2-core
machine at 64 calls in flight, 20× the same POST on a bare socket
(``bench/bench_serve.py``'s transport row): in ``guard serve`` and ``guard eval``
that CPU, not the model, is what calls queue on. This speaks the part of HTTP/1.1
a chat API needs (one write per request, Content-Length or chunked answers, keep-alive)
on the event loop's streams, with the TLS context :func:`tls_context` builds (the one httpx
would: same CA bundle, hostname checked), so httpx is not even imported. Behind the HTTP
proxy the environment names (:mod:`guard.judge.proxy`) an ``http://`` target is asked in
absolute form and an ``https://`` one through a CONNECT tunnel, with TLS to the target
inside it, verified as a direct connection is. A recorded answer is read by the same code
as a live one (:func:`read_recorded`): replaying a cassette tests this module too.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from guard.core.extras import DISTRIBUTION
from guard.judge import proxy as proxies
from guard.judge.reply_limit import MAX_REPLY_BYTES, ReplyTooLarge

__all__ = [
    "Answer",
    "BrokenAnswer",
    "Connections",
    "ProxyRefused",
    "Unreachable",
    "read_recorded",
    "request_bytes",
    "tls_context",
]

#: Largest status line plus headers read (asyncio's stream limit is 64 KiB).
MAX_HEAD_BYTES = 1 << 16


def tls_context() -> ssl.SSLContext:
    """The context httpx builds by default: ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` when set, else certifi's bundle."""
    if cafile := os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=cafile)
    if capath := os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=capath)
    import certifi  # only for https: a plain-HTTP endpoint (a local server) never loads the bundle

    return ssl.create_default_context(cafile=certifi.where())


class Unreachable(ConnectionError):
    """No connection could be opened (refused, no such host, TLS handshake failed)."""


class ProxyRefused(Unreachable):
    """The proxy did not open the tunnel (it answered CONNECT with other than 2xx), or was named but cannot be spoken to."""


class BrokenAnswer(ConnectionError):
    """The connection broke, or the answer was not HTTP/1.1, after the request was sent."""


class _Headers(dict[str, str]):
    """An answer's headers by lower-case name (what ``Retry-After`` and ``Content-Length`` lookups use)."""

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)


@dataclass
class Answer:
    """The parts of an HTTP answer the callers read: status, reason, headers (as httpx's response offers them)."""

    status_code: int
    reason_phrase: str
    headers: _Headers = field(default_factory=_Headers)
    exchange_ms: float | None = None  # request written → answer read, on an open connection (its opening not included)


@dataclass
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    idle_since: float = 0.0

    def close(self) -> None:
        self.writer.close()


class _Origin(NamedTuple):
    """Where a connection goes (a kept one is reused only for the same target through the same proxy)."""

    scheme: str
    host: str
    port: int
    via: proxies.Proxy | None


class Connections:
    """Kept-alive connections of one event loop, by target and proxy; one request on each at a time."""

    def __init__(self, tls: ssl.SSLContext | None, keepalive_s: float) -> None:
        """``tls`` verifies https connections; None builds it on first need (loading the CA bundle costs ~0.2 s)."""
        self._tls = tls
        self._keepalive_s = keepalive_s
        self._idle: dict[_Origin, list[_Connection]] = {}

    def _context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = tls_context()
        return self._tls

    async def post(self, url: str, body: bytes, headers: dict[str, str], timeout: float) -> tuple[Answer, bytes]:
        """POST ``body`` to ``url``; the answer and its body (at most :data:`MAX_REPLY_BYTES`, else :class:`ReplyTooLarge`).

        A kept-alive connection the server closed while idle is found out on use; the
        request is then sent once more on a new connection (it was never read).
        """
        parts = urlsplit(url)
        tls = parts.scheme == "https"
        try:
            via = proxies.for_url(url)
        except proxies.ProxyUnsupported as exc:
            raise ProxyRefused(str(exc)) from exc
        origin = _Origin(parts.scheme, parts.hostname or "", parts.port or (443 if tls else 80), via)
        if via is not None and not tls:  # the proxy opens the connection to the target: it is asked in absolute form
            if via.authorization:
                headers = {**headers, "Proxy-Authorization": via.authorization}
            request = request_bytes(url, body, headers, absolute=True)
        else:
            request = request_bytes(url, body, headers)
        async with asyncio.timeout(timeout):
            connection = await self._connection(origin)
            try:
                return await self._exchange(origin, connection, request)
            except _StaleConnection:
                connection = await self._connection(origin, fresh=True)
                return await self._exchange(origin, connection, request)
            except BaseException:
                connection.close()
                raise

    async def _connection(self, origin: _Origin, *, fresh: bool = False) -> _Connection:
        idle = self._idle.get(origin, [])
        now = time.monotonic()
        while idle and not fresh:
            connection = idle.pop()
            if now - connection.idle_since < self._keepalive_s and not connection.reader.at_eof():
                return connection
            connection.close()
        try:
            return await self._open(origin)
        except ProxyRefused:
            raise
        except (OSError, ssl.SSLError) as exc:
            through = f" (through the proxy {origin.via.shown})" if origin.via is not None else ""
            raise Unreachable(f"{type(exc).__name__}: {exc}{through}") from exc

    async def _open(self, origin: _Origin) -> _Connection:
        tls = origin.scheme == "https"
        if origin.via is None:
            reader, writer = await asyncio.open_connection(
                origin.host,
                origin.port,
                limit=MAX_HEAD_BYTES,
                ssl=self._context() if tls else None,
                server_hostname=origin.host if tls else None,
            )
            return _Connection(reader, writer)
        via = origin.via
        reader, writer = await asyncio.open_connection(
            via.host,
            via.port,
            limit=MAX_HEAD_BYTES,
            ssl=self._context() if via.tls else None,
            server_hostname=via.host if via.tls else None,
        )
        try:
            if tls:  # TLS to the target inside the tunnel (inside TLS to the proxy, for an https:// proxy)
                await _tunnel(reader, writer, via, origin.host, origin.port)
                await writer.start_tls(self._context(), server_hostname=origin.host)
        except BaseException:
            writer.close()
            raise
        return _Connection(reader, writer)

    async def _exchange(self, origin: _Origin, connection: _Connection, request: bytes) -> tuple[Answer, bytes]:
        reused = connection.idle_since > 0
        started = time.perf_counter()
        try:
            connection.writer.write(request)
            await connection.writer.drain()
            answer, content, keep = await _read_answer(connection.reader)
            answer.exchange_ms = round((time.perf_counter() - started) * 1000, 3)
        except BrokenAnswer:
            connection.close()
            raise
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            connection.close()
            if reused and (not isinstance(exc, asyncio.IncompleteReadError) or not exc.partial):
                raise _StaleConnection from exc  # closed by the server while idle: nothing of ours was read
            raise BrokenAnswer(f"{type(exc).__name__}: {exc}") from exc
        if keep and (
            "content-length" in answer.headers or "chunked" in answer.headers.get("transfer-encoding", "").lower()
        ):
            connection.idle_since = time.monotonic()
            self._idle.setdefault(origin, []).append(connection)
        else:
            connection.close()
        return answer, content

    async def aclose(self) -> None:
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()


class _StaleConnection(Exception):
    pass


async def _tunnel(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, via: proxies.Proxy, host: str, port: int
) -> None:
    """Ask the proxy for a tunnel to ``host:port`` (CONNECT); :class:`ProxyRefused` naming the proxy unless it answers 2xx."""
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    lines = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}", f"User-Agent: {DISTRIBUTION}"]
    if via.authorization:
        lines.append(f"Proxy-Authorization: {via.authorization}")
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    await writer.drain()
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
        raise ProxyRefused(f"the proxy {via.shown} did not answer CONNECT {authority}") from exc
    answer, _ = _parse_head(head)
    if not 200 <= answer.status_code < 300:
        raise ProxyRefused(
            f"the proxy {via.shown} answered CONNECT {authority} with {answer.status_code} {answer.reason_phrase}"
        )


def _parse_head(head: bytes) -> tuple[Answer, bool]:
    """The status and headers; whether the connection may be kept."""
    status_line, *header_lines = head.decode("latin-1").rstrip("\r\n").split("\r\n")
    version, _, rest = status_line.partition(" ")
    code, _, reason = rest.partition(" ")
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise BrokenAnswer(f"not an HTTP/1.1 answer: {status_line[:80]!r}")
    headers = _Headers()
    for line in header_lines:
        name, sep, value = line.partition(":")
        if not sep:
            raise BrokenAnswer(f"a malformed header line in the answer: {line[:80]!r}")
        key = name.strip().lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    keep = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
    return Answer(int(code), reason, headers), keep


def request_bytes(url: str, body: bytes, headers: dict[str, str], *, absolute: bool = False) -> bytes:
    """The whole POST of ``body`` to ``url`` as it goes on the wire: one write (``absolute``: to a proxy, the whole URL)."""
    parts = urlsplit(url)
    authority = parts.netloc.rsplit("@", 1)[-1]
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    lines = [
        f"POST {f'{parts.scheme}://{authority}' if absolute else ''}{target} HTTP/1.1",
        f"Host: {authority}",
        "Accept: application/json",
        "Accept-Encoding: identity",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        f"User-Agent: {DISTRIBUTION}",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


async def _read_answer(reader: asyncio.StreamReader) -> tuple[Answer, bytes, bool]:
    """One answer off ``reader``: its status and headers, its body (capped), and whether the connection may be kept.

    A connection that ends before the head is read raises as asyncio does (the caller
    tells a stale kept-alive connection from a broken answer); anything later is a :class:`BrokenAnswer`.
    """
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError as exc:
        raise BrokenAnswer(f"the answer's headers are over {MAX_HEAD_BYTES} bytes") from exc
    answer, keep = _parse_head(head)
    try:
        content = await _read_body(reader, answer)
    except (asyncio.IncompleteReadError, ConnectionError, ValueError, asyncio.LimitOverrunError) as exc:
        raise BrokenAnswer(f"the answer broke off: {type(exc).__name__}: {exc}") from exc
    return answer, content, keep


async def read_recorded(raw: bytes) -> tuple[Answer, bytes]:
    """A recorded answer (status line, headers, framed body) read by the same code that reads one off a socket.

    Replay (:mod:`guard.judge.cassette`) goes through here, so a recording is parsed,
    de-chunked and size-capped exactly as production reads the live answer.
    """
    reader = asyncio.StreamReader(limit=MAX_HEAD_BYTES)
    reader.feed_data(raw)
    reader.feed_eof()
    try:
        answer, content, _ = await _read_answer(reader)
    except asyncio.IncompleteReadError as exc:
        raise BrokenAnswer(f"the recorded answer ends early: {exc}") from exc
    return answer, content


async def _read_body(reader: asyncio.StreamReader, answer: Answer) -> bytes:
    if "chunked" in answer.headers.get("transfer-encoding", "").lower():
        return await _read_chunked(reader, answer.status_code)
    length = answer.headers.get("content-length")
    if length is not None:
        size = int(length)
        if size > MAX_REPLY_BYTES:
            raise ReplyTooLarge(answer.status_code)
        return await reader.readexactly(size)
    body = bytearray()  # delimited by the server closing the connection
    async for chunk in _until_eof(reader):
        body += chunk
        if len(body) > MAX_REPLY_BYTES:
            raise ReplyTooLarge(answer.status_code)
    return bytes(body)


async def _until_eof(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    while chunk := await reader.read(1 << 16):
        yield chunk


async def _read_chunked(reader: asyncio.StreamReader, status: int) -> bytes:
    body = bytearray()
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip(), 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers, if any
                pass
            return bytes(body)
        if len(body) + size > MAX_REPLY_BYTES:
            raise ReplyTooLarge(status)
        body += await reader.readexactly(size)
        await reader.readexactly(2)
