"""Recording and replaying judge calls at guard's own wire, in vcrpy cassettes.

A cassette handed to :func:`use` (by ``guard eval --record/--replay``, or by the
pytest plugin from pytest-recording's ``vcr`` fixture) answers the ``openai/…``
route's POSTs: a recorded answer is turned back into the bytes an endpoint sends
and read by :func:`guard.judge.http11.read_recorded`, the code that reads a live
answer, then parsed by the transport as any other. A replay therefore runs
production's wire, parsing, limits and error handling, and needs no endpoint and
no key. Calls LiteLLM makes for other providers are recorded by vcrpy's own
patch of httpx, in the same cassette. A cassette opened with ``vcr.use_cassette``
and not handed to :func:`use` is found from that patch (:func:`active`), so the
judge's calls are recorded in it too rather than go past it to the network.

A recording is found by what was asked, not where: :func:`same_call` compares the
method, the operation (the URL's last path segment: ``completions``, ``messages``,
``gemini-2.5-flash:generateContent``) and the JSON body (model, messages, limits,
response format), never the host or the base path, so a cassette recorded through
``GUARD_API_BASE`` replays under a config's ``models.api_base`` and the other way round.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from guard.judge import http11

__all__ = ["MATCHER", "NotRecorded", "active", "post", "register", "replaying", "same_call", "use"]

#: The name :func:`same_call` is registered under in a ``vcr.VCR`` (``match_on=["method", MATCHER]``).
MATCHER = "guard_call"
#: The recorded answer's headers that describe the bytes on the wire, rebuilt for the replayed body.
_FRAMING = frozenset({"content-length", "transfer-encoding", "content-encoding", "connection"})

_cassettes: list[Any] = []
#: How vcrpy's patch functions' files are told apart (site-packages/vcr/stubs/…).
_VCRPY = f"{os.sep}vcr{os.sep}"


class NotRecorded(Exception):
    """Replay found no recording for a call (not a ConnectionError: nothing is retried or counted as an outage)."""


@contextmanager
def use(cassette: Any) -> Iterator[Any]:
    """Answer (and record) the judge's calls from ``cassette`` (a ``vcr.cassette.Cassette``) while the block runs."""
    _cassettes.append(cassette)
    try:
        yield cassette
    finally:
        _cassettes.remove(cassette)


def active() -> Any | None:
    """The cassette judge calls go to now, if any: the one handed to :func:`use`, else the one vcrpy is recording into."""
    return _cassettes[-1] if _cassettes else _vcrpy_cassette()


def _vcrpy_cassette() -> Any | None:
    """The cassette of a ``vcr.use_cassette`` block in force, read off vcrpy's patch of httpx's async transport.

    vcrpy imports httpx to patch it, so an httpx not imported means no cassette; a vcrpy
    patch whose cassette cannot be found (a vcrpy that changed how it patches) is refused,
    never passed by: the call would reach the network the cassette stands in for.
    """
    httpx = sys.modules.get("httpx")
    send = getattr(getattr(httpx, "AsyncHTTPTransport", None), "handle_async_request", None)
    code = getattr(send, "__code__", None)
    if send is None or code is None or not hasattr(send, "__wrapped__") or _VCRPY not in code.co_filename:
        return None
    cells = dict(zip(code.co_freevars, send.__closure__ or (), strict=False))
    found = cells["cassette"].cell_contents if "cassette" in cells else None
    if not hasattr(found, "can_play_response_for"):
        raise NotRecorded(
            "vcrpy is recording httpx, but guard cannot find its cassette: hand it to the judge with "
            "guard.judge.cassette.use(cassette)"
        )
    return found


def replaying() -> bool:
    """Whether calls are answered from a cassette that records nothing new: no key and no endpoint are needed."""
    cassette = active()
    return cassette is not None and bool(cassette.write_protected)


def _operation(uri: str) -> str:
    return urlsplit(uri).path.rstrip("/").rsplit("/", 1)[-1]


def _json(body: Any) -> Any:
    raw = body.encode() if isinstance(body, str) else body or b""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def same_call(r1: Any, r2: Any) -> None:
    """vcrpy matcher: the same operation asked with the same JSON body, wherever it was sent (AssertionError if not)."""
    if r1.method != r2.method or _operation(r1.uri) != _operation(r2.uri):
        raise AssertionError(f"{r1.method} {_operation(r1.uri)} != {r2.method} {_operation(r2.uri)}")
    if _json(r1.body) != _json(r2.body):
        raise AssertionError("the bodies differ")


def register(vcr: Any) -> None:
    """Make :data:`MATCHER` known to ``vcr`` (a ``vcr.VCR``); pytest-recording's configure hook calls this."""
    vcr.register_matcher(MATCHER, same_call)


def _raw(response: dict[str, Any]) -> bytes:
    """A recorded answer as the bytes an endpoint would send: chunked again if it was chunked, else with its length."""
    body = response["body"]["string"]
    body = body.encode() if isinstance(body, str) else body or b""
    headers = [
        (name, value)
        for name, values in response["headers"].items()
        for value in (values if isinstance(values, list) else [values])
    ]
    chunked = any(name.lower() == "transfer-encoding" and "chunked" in value.lower() for name, value in headers)
    status = response["status"]
    lines = [
        f"HTTP/1.1 {status['code']} {status.get('message') or ''}".rstrip(),
        *(f"{n}: {v}" for n, v in headers if n.lower() not in _FRAMING),
    ]
    if chunked:
        lines.append("Transfer-Encoding: chunked")
        framed = (f"{len(body):x}\r\n".encode() + body + b"\r\n" if body else b"") + b"0\r\n\r\n"
    else:
        lines.append(f"Content-Length: {len(body)}")
        framed = body
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + framed


def _recorded(answer: http11.Answer, content: bytes) -> dict[str, Any]:
    return {
        "status": {"code": answer.status_code, "message": answer.reason_phrase},
        "headers": {k: [v] for k, v in answer.headers.items()},
        "body": {"string": content},
    }


async def post(
    wire: http11.Connections, url: str, body: bytes, headers: dict[str, str], timeout: float
) -> tuple[http11.Answer, bytes]:
    """The answer to this POST from the active cassette, or from ``wire`` (then recorded) when the cassette may record."""
    from vcr.request import Request

    cassette = active()
    if cassette is None:
        raise RuntimeError("no cassette in use")
    request = Request("POST", url, body, {**headers, "Content-Type": "application/json"})
    if cassette.can_play_response_for(request):
        return await http11.read_recorded(_raw(cassette.play_response(request)))
    if cassette.write_protected:
        raise NotRecorded(
            f"no recording of this call (POST {url}, model {_json(body).get('model') if isinstance(_json(body), dict) else '?'})"
        )
    answer, content = await wire.post(url, body, headers, timeout)
    cassette.append(request, _recorded(answer, content))
    return answer, content
