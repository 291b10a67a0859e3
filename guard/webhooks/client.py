"""One webhook delivery: SSRF check, signing, and a POST to the address that was checked.

The connection goes to the IP :func:`~guard.webhooks.ssrf.check_url` approved while
the Host header and TLS SNI / certificate check use the name from the URL, so a
second DNS answer can never redirect the request (no rebinding). Redirects are
not followed: a 3xx is a failure, since its Location was never checked. Replies
are capped in size and the whole exchange in time, so a hostile or slow receiver
costs at most ``timeout`` seconds and ``MAX_REPLY_BYTES`` of memory.
Standard library only (``http.client`` in a worker thread).
"""

from __future__ import annotations

import functools
import http.client
import os
import socket
import ssl
import time
import uuid
from dataclasses import dataclass

from guard.core.errors import HookError, HookTimeout
from guard.webhooks.signing import DELIVERY_HEADER, TIMESTAMP_HEADER, sign
from guard.webhooks.ssrf import Resolver, Target, check_url, display_url

__all__ = ["MAX_REPLY_BYTES", "USER_AGENT", "Delivery"]

MAX_REPLY_BYTES = 1 << 20
USER_AGENT = "guard-webhook/1"


@functools.lru_cache(maxsize=4)
def _tls_context(cert_file: str | None) -> ssl.SSLContext:
    """The default verifying context (built once: loading the CA store costs milliseconds)."""
    return ssl.create_default_context(cafile=cert_file)


def _connection(target: Target, timeout: float) -> http.client.HTTPConnection:
    """A connection that names ``target.host`` but connects to ``target.address``."""
    conn: http.client.HTTPConnection
    if target.scheme == "https":
        conn = http.client.HTTPSConnection(
            target.host, target.port, timeout=timeout, context=_tls_context(os.environ.get("SSL_CERT_FILE"))
        )
    else:
        conn = http.client.HTTPConnection(target.host, target.port, timeout=timeout)

    def pinned(address: tuple[str, int], timeout: float, source: tuple[str, int] | None = None) -> socket.socket:
        return socket.create_connection((target.address, address[1]), timeout, source)

    conn._create_connection = pinned  # type: ignore[attr-defined]  # http.client's documented seam for this
    return conn


@dataclass(frozen=True, slots=True)
class Delivery:
    """Everything needed to send one event to one webhook, now or later from the queue."""

    hook_id: str
    url: str
    body: bytes
    event: str
    secret: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = 10.0
    allow_networks: tuple[str, ...] = ()

    def request_headers(self) -> dict[str, str]:
        """User headers first, then guard's own (which a user header cannot override).

        Signed at send time, so a queued delivery's timestamp is when it left.
        """
        timestamp, delivery_id = int(time.time()), uuid.uuid4().hex
        own = (
            sign(self.body, self.secret, timestamp=timestamp, delivery_id=delivery_id)
            if self.secret
            else {TIMESTAMP_HEADER: str(timestamp), DELIVERY_HEADER: delivery_id}
        )
        return {
            **dict(self.headers),
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Webhook-Event": self.event,
            "Connection": "close",
            **own,
        }

    def send(self, *, resolve: Resolver | None = None) -> bytes:
        """POST the body; return a 2xx reply's body. Raises HookRefused / HookTimeout / HookError."""
        target = check_url(self.url, allow_networks=self.allow_networks, resolve=resolve)
        shown = display_url(self.url)
        deadline = time.monotonic() + self.timeout
        conn = _connection(target, self.timeout)
        try:
            conn.request("POST", target.path, body=self.body, headers=self.request_headers())
            _limit(conn, deadline)
            response = conn.getresponse()
            data = _read_capped(conn, response, deadline, shown)
        except TimeoutError as exc:
            raise HookTimeout(f"webhook {shown} did not answer within {self.timeout:g}s") from exc
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise HookError(f"webhook {shown} failed: {type(exc).__name__}: {exc}") from exc
        finally:
            conn.close()
        if 300 <= response.status < 400:
            where = display_url(response.getheader("Location") or "")
            raise HookError(
                f"webhook {shown} answered {response.status} redirecting to {where}; redirects are not followed"
            )
        if not 200 <= response.status < 300:
            raise HookError(f"webhook {shown} answered HTTP {response.status} {response.reason}")
        return data


def _read_capped(
    conn: http.client.HTTPConnection, response: http.client.HTTPResponse, deadline: float, shown: str
) -> bytes:
    """Read the reply in chunks, so a receiver trickling bytes still hits the deadline."""
    chunks: list[bytes] = []
    size = 0
    while True:
        _limit(conn, deadline)
        chunk = response.read1(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise HookError(f"webhook {shown} reply is larger than {MAX_REPLY_BYTES} bytes")
        chunks.append(chunk)


def _limit(conn: http.client.HTTPConnection, deadline: float) -> None:
    """Shrink the socket timeout to what is left of the whole exchange's budget."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("deadline passed")
    if conn.sock is not None:
        conn.sock.settimeout(remaining)
