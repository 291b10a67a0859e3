"""Real HTTP(S) receivers on 127.0.0.1 for the webhook tests.

A :class:`Receiver` records every connection and request it gets and answers
with a configurable status, body and headers, optionally after a delay or
trickling its body one byte at a time (slow and hostile receivers).
"""

from __future__ import annotations

import http.server
import logging
import socket
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

Reply = tuple[int, bytes, dict[str, str]]


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """A threaded HTTP server; ``reply`` is a fixed reply or a function of the request."""

    reply: Reply | Callable[[Received], Reply] = (200, b"", {})
    delay: float = 0.0
    trickle: float | None = None  # seconds between body bytes
    ssl_context: ssl.SSLContext | None = None
    requests: list[Received] = field(default_factory=list)
    connections: int = 0

    def __post_init__(self) -> None:
        self._release = threading.Event()
        self._got = threading.Condition()
        receiver = self

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def verify_request(self, request: Any, client_address: Any) -> bool:
                with receiver._got:
                    receiver.connections += 1
                return True

        self._server = Server(("127.0.0.1", 0), self._handler())
        if self.ssl_context is not None:
            self._server.socket = self.ssl_context.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def url(self, path: str = "/hook", host: str = "127.0.0.1") -> str:
        scheme = "https" if self.ssl_context else "http"
        return f"{scheme}://{host}:{self.port}{path}"

    def wait_for(self, count: int, timeout: float = 5.0) -> bool:
        """Wait until ``count`` requests arrived."""
        with self._got:
            return self._got.wait_for(lambda: len(self.requests) >= count, timeout)

    def close(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                got = Received(self.command, self.path, dict(self.headers.items()), self.rfile.read(length))
                with receiver._got:
                    receiver.requests.append(got)
                    receiver._got.notify_all()
                if receiver.delay and receiver._release.wait(receiver.delay):
                    return
                status, body, headers = receiver.reply(got) if callable(receiver.reply) else receiver.reply
                self.send_response(status)
                for name, value in {"Content-Length": str(len(body)), "Connection": "close", **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                if receiver.trickle is None:
                    self.wfile.write(body)
                    return
                for byte in body:
                    if receiver._release.wait(receiver.trickle):
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()

            do_POST = do_GET = _answer

        return Handler


def self_signed_cert(directory: Path, hostname: str) -> tuple[Path, Path]:
    """A throwaway certificate and key for ``hostname`` (openssl CLI, EC key: fast)."""
    cert, key = directory / f"{hostname}.crt", directory / f"{hostname}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", f"/CN={hostname}",
         "-addext", f"subjectAltName=DNS:{hostname}"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def fake_dns(monkeypatch: Any, answers: dict[str, list[str]]) -> list[str]:
    """Answer ``getaddrinfo`` for the given names from ``answers`` (a list per name,
    one entry consumed per lookup, the last one repeating); returns the looked-up names."""
    real = socket.getaddrinfo
    lookups: list[str] = []

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in answers:
            lookups.append(host)
            address = answers[host][min(lookups.count(host), len(answers[host])) - 1]
            return real(address, port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return lookups


def made_and_closed(build: Callable[..., Any]) -> Iterator[Callable[..., Any]]:
    """A factory for a fixture to yield; everything it built is closed after the test."""
    made: list[Any] = []

    def make(**kwargs: Any) -> Any:
        made.append(build(**kwargs))
        return made[-1]

    yield make
    for thing in made:
        thing.close()


@pytest.fixture
def make_receiver() -> Iterator[Callable[..., Receiver]]:
    """Start receivers on 127.0.0.1 (``make_receiver(reply=…, delay=…)``); all closed after the test."""
    yield from made_and_closed(Receiver)


@pytest.fixture
def guard_log(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> pytest.LogCaptureFixture:
    """caplog that sees guard's warnings even after something stopped the ``guard`` logger propagating."""
    monkeypatch.setattr(logging.getLogger("guard"), "propagate", True)
    caplog.set_level(logging.WARNING, logger="guard")
    return caplog
