"""Scripted model turns and the loopback server that plays them, shared by the agent-API stubs.

A real agent CLI (Claude Code, Gemini CLI) only talks to its vendor's API, so
end-to-end tests replace that API with a stub that plays a script: each request
from the agent loop (one that offers tools) takes the next turn, "call this tool
with this input" or "answer this text". Side requests that offer no tools
(routers, title generation, prompt hooks) are answered by ``side_reply`` and never
consume a turn. Every request is recorded, so a test can assert what the model
was shown next, such as the reason a hook gave for a deny.

The wire formats live in :mod:`guard.testing.anthropic_stub` and
:mod:`guard.testing.gemini_stub`. Standard library only (``http.server`` on a
thread): it starts in milliseconds and shares nothing with the code under test.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Self, TypeVar

__all__ = ["RecordedRequest", "Reply", "ScriptedAgentServer", "StubHandler", "final_text", "next_id", "tool_use"]


@dataclass(frozen=True)
class Reply:
    """One assistant message as content blocks (``text`` / ``tool_use``), a stop reason and a delay."""

    content: tuple[dict[str, Any], ...]
    stop_reason: str = "end_turn"
    delay_s: float = 0.0


_ids = itertools.count(1)


def next_id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):04d}"


def tool_use(name: str, tool_input: dict[str, Any], *, text: str | None = None, delay_s: float = 0.0) -> Reply:
    """A turn in which the model calls ``name`` with ``tool_input`` (optionally saying ``text`` first)."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks.append({"type": "tool_use", "id": next_id("toolu_stub"), "name": name, "input": tool_input})
    return Reply(tuple(blocks), stop_reason="tool_use", delay_s=delay_s)


def final_text(text: str, *, delay_s: float = 0.0) -> Reply:
    """A turn in which the model answers with plain text and ends its turn."""
    return Reply(({"type": "text", "text": text},), delay_s=delay_s)


@dataclass
class RecordedRequest:
    """What the client sent: path, headers, the JSON body (``None`` when not JSON), its role and arrival time."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    is_agent_turn: bool = False
    received_at: float = field(default_factory=time.monotonic)  # for timing the client between requests

    def text(self) -> str:
        """The whole body as text (system prompt, messages, tool results), for loose assertions."""
        return json.dumps(self.body or {}, ensure_ascii=False)


class StubHandler(BaseHTTPRequestHandler):
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - signature from the base class
        """Silent: tests read the recorded requests instead."""

    def _body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def send_json(self, status: int, data: dict[str, Any]) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_events(self, chunks: Sequence[bytes]) -> None:
        """A server-sent-events body, flushed chunk by chunk as a streaming API would."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(chunk)
            self.wfile.flush()

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self.send_json(200, {})

    def do_POST(self) -> None:  # noqa: N802
        stub = self.server.stub
        body = self._body()
        request = stub.request_class(
            "POST",
            self.path,
            {k.lower(): v for k, v in self.headers.items()},
            body,
            stub.is_agent_turn(self.path, body),
        )
        stub.serve(self, request)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, stub: ScriptedAgentServer[Any]) -> None:
        super().__init__(("127.0.0.1", 0), StubHandler)
        self.stub = stub


RequestT = TypeVar("RequestT", bound=RecordedRequest)


class ScriptedAgentServer(Generic[RequestT]):
    """Base of the agent-API stubs: the turn queue, the request log and the server's lifecycle.

    Subclasses say which requests are agent turns and how to write a reply on the wire.
    ``fallback`` answers agent turns once the script is used up, so a client that
    asks once more ends its turn instead of hanging.
    """

    request_class: type[RequestT]  # the wire format's request type, with its own result readers

    def __init__(
        self,
        turns: Sequence[Reply] = (),
        *,
        side_reply: Callable[[dict[str, Any]], Reply] | None = None,
        fallback: Reply | None = None,
    ) -> None:
        self._turns = list(turns)
        self._side_reply = side_reply or self.default_side_reply
        self._fallback = fallback or final_text("(stub: script finished)")
        self._requests: list[RequestT] = []
        self._lock = threading.Lock()
        self._server = _HTTPServer(self)
        self._thread = threading.Thread(target=self._server.serve_forever, name=type(self).__name__, daemon=True)

    # -- what subclasses define ------------------------------------------------
    def is_agent_turn(self, path: str, body: dict[str, Any] | None) -> bool:
        raise NotImplementedError

    def serve(self, handler: StubHandler, request: RequestT) -> None:
        """Write the HTTP response for ``request`` (call :meth:`answer` for a scripted reply)."""
        raise NotImplementedError

    def default_side_reply(self, body: dict[str, Any]) -> Reply:
        return final_text("ok")

    # -- the script --------------------------------------------------------------
    def record(self, request: RequestT) -> None:
        with self._lock:
            self._requests.append(request)

    def answer(self, request: RequestT) -> Reply:
        """Record ``request`` and pick its reply (next turn, side reply or fallback), after its delay."""
        with self._lock:
            self._requests.append(request)
            if not request.is_agent_turn:
                reply = None
            else:
                reply = self._turns.pop(0) if self._turns else self._fallback
        if reply is None:
            reply = self._side_reply(request.body or {})
        if reply.delay_s:
            time.sleep(reply.delay_s)
        return reply

    def push(self, *turns: Reply) -> None:
        """Append turns (for a second client run against the same stub)."""
        with self._lock:
            self._turns.extend(turns)

    @property
    def requests(self) -> list[RequestT]:
        """Every request received so far, in order."""
        with self._lock:
            return list(self._requests)

    @property
    def agent_requests(self) -> list[RequestT]:
        """Only the agent loop's requests (the ones that took, or asked for, a scripted turn)."""
        return [r for r in self.requests if r.is_agent_turn]

    @property
    def turns_left(self) -> int:
        with self._lock:
            return len(self._turns)

    # -- lifecycle ---------------------------------------------------------------
    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
