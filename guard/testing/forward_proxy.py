"""A loopback HTTP forward proxy for tests: CONNECT tunnels and absolute-form requests, and a record of what it saw.

Tests point ``HTTPS_PROXY`` / ``HTTP_PROXY`` at it to show a judge call really went
through a proxy (``seen`` holds each CONNECT's ``host:port`` or each absolute URL, with
the request's headers), that ``NO_PROXY`` kept a call away from it, and how guard
answers a proxy that wants credentials (``credentials``: anything else gets 407).
"""

from __future__ import annotations

import base64
import http.client
import select
import socket
import socketserver
import ssl
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

__all__ = ["ForwardProxy", "Seen"]


@dataclass(frozen=True)
class Seen:
    """One request the proxy was asked: its method, its target (``host:port`` or an absolute URL), its headers."""

    method: str
    target: str
    headers: dict[str, str] = field(default_factory=dict)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False


class ForwardProxy:
    """An HTTP/1.1 forward proxy on 127.0.0.1 in a background thread (``with ForwardProxy() as proxy: proxy.url``)."""

    def __init__(self, *, credentials: tuple[str, str] | None = None, tls: ssl.SSLContext | None = None) -> None:
        self.credentials = credentials
        self._tls = tls  # a server context: an https:// proxy (TLS to the proxy itself)
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None

    def __enter__(self) -> ForwardProxy:
        self._server = _Server(("127.0.0.1", 0), _handler_for(self))
        if self._tls is not None:
            self._server.socket = self._tls.wrap_socket(self._server.socket, server_side=True)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (``https://`` with ``tls``), with the credentials as userinfo when the proxy requires them."""
        if self._server is None:
            raise RuntimeError("the proxy is not running")
        user = f"{self.credentials[0]}:{self.credentials[1]}@" if self.credentials else ""
        return f"{'https' if self._tls else 'http'}://{user}127.0.0.1:{self._server.server_address[1]}"

    def _record(self, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)

    def _allowed(self, headers: dict[str, str]) -> bool:
        if self.credentials is None:
            return True
        expected = base64.b64encode(":".join(self.credentials).encode()).decode()
        return headers.get("proxy-authorization") == f"Basic {expected}"


def _read_head(stream: Any) -> tuple[str, str, dict[str, str]] | None:
    """The request line's method and target, and the headers by lower-case name; None at the end of the connection."""
    line = stream.readline(65536).decode("latin-1").strip()
    if not line:
        return None
    method, target, _ = line.split(" ", 2)
    headers: dict[str, str] = {}
    while (header := stream.readline(65536).decode("latin-1").strip()) != "":
        name, _, value = header.partition(":")
        headers[name.strip().lower()] = value.strip()
    return method, target, headers


def _pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes (the CONNECT tunnel)."""
    sockets = [a, b]
    while True:
        readable, _, _ = select.select(sockets, [], [], 30)
        if not readable:
            return
        for source in readable:
            data = source.recv(65536)
            if not data:
                return
            while isinstance(source, ssl.SSLSocket) and source.pending():  # decrypted already: select will not say so
                data += source.recv(65536)
            (b if source is a else a).sendall(data)


def _handler_for(proxy: ForwardProxy) -> type[socketserver.StreamRequestHandler]:
    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            while (head := _read_head(self.rfile)) is not None:
                method, target, headers = head
                proxy._record(Seen(method, target, headers))
                if not proxy._allowed(headers):
                    self._answer(407, "Proxy Authentication Required", b"", {"Proxy-Authenticate": 'Basic realm="t"'})
                    return
                if method == "CONNECT":
                    self._tunnel(target)
                    return
                self._forward(method, target, headers)

        def _answer(self, status: int, reason: str, body: bytes, headers: dict[str, str]) -> None:
            lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in headers.items())]
            lines.append(f"Content-Length: {len(body)}")
            self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

        def _tunnel(self, target: str) -> None:
            host, _, port = target.rpartition(":")
            try:
                upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
            except OSError:
                self._answer(502, "Bad Gateway", b"", {})
                return
            with upstream:
                self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                _pipe(self.connection, upstream)

        def _forward(self, method: str, target: str, headers: dict[str, str]) -> None:
            parts = urlsplit(target)
            body = self.rfile.read(int(headers.get("content-length", "0")))
            sent = {k: v for k, v in headers.items() if k not in ("proxy-authorization", "connection")}
            upstream = http.client.HTTPConnection(parts.hostname or "", parts.port or 80, timeout=30)
            try:
                upstream.request(method, (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), body, sent)
                answer = upstream.getresponse()
                content = answer.read()
            except OSError:
                self._answer(502, "Bad Gateway", b"", {})
                return
            finally:
                upstream.close()
            kept = {
                k: v
                for k, v in answer.getheaders()
                if k.lower() not in ("content-length", "transfer-encoding", "connection")
            }
            self._answer(answer.status, answer.reason, content, kept)

    return Handler
