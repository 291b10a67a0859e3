"""A loopback OpenAI-compatible server with scripted replies, for tests and benchmarks.

This is NOT a judge. It answers ``POST /v1/chat/completions`` with whatever the
test queued (verdicts, prose, refusals, 429 with ``Retry-After``, 500, slow
replies) so the whole smart-hook path — LiteLLM, retries, timeouts, parsing —
runs over real HTTP without the internet. A request that judges several rules at
once (:func:`rule_ids`) gets a scripted single verdict as every rule's. The ``keyword`` policy used from the
CLI is a crude marker match on the fenced tool input; figures measured against it
say nothing about a real model's quality.

    with StubServer() as stub:
        stub.enqueue(Reply.verdict("deny", "deletes files", confidence=0.9))
        ...  # model="openai/stub-judge", api_base=stub.url

CLI: ``python -m guard.testing.openai_stub --port 8999 --latency 0.3 --mode keyword``
prints the base URL and serves until killed; ``GET /v1/stub/stats`` reports the
calls answered and the TCP connections accepted. Every completion says it is the
stub (``system_fingerprint: guard-stub``): that, not a loopback address, is what makes
an eval report call its figures a stub's.
"""

from __future__ import annotations

import argparse
import json
import re
import ssl
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypedDict, Unpack

from guard.judge.chat import STUB_FINGERPRINT
from guard.judge.fence import FENCE_RE

__all__ = ["POLICIES", "Reply", "StubServer", "by_model_policy", "keyword_policy", "rule_ids"]


class _Server(ThreadingHTTPServer):
    """A listen backlog for load tests (the default of 5 refuses bursts of 64 clients); counts accepted connections."""

    request_queue_size = 256
    daemon_threads = True
    accepted = 0

    def process_request(self, request: Any, client_address: Any) -> None:
        self.accepted += 1  # one thread accepts, so no lock is needed
        super().process_request(request, client_address)


_REASONS = {
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "service_unavailable",
    401: "invalid_api_key",
    400: "invalid_request_error",
}


class ReplyTiming(TypedDict, total=False):
    """What every kind of scripted answer may also set: when it comes, and how a completion says it ended."""

    delay: float
    finish_reason: str


@dataclass
class Reply:
    """One scripted answer: a chat completion (``content`` / ``refusal_message``) or an HTTP error (``status`` ≠ 200)."""

    status: int = 200
    content: str | None = None
    refusal_message: str | None = None  # sent as ``message.refusal`` with null content
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None  # sent verbatim instead of a built completion / error body
    delay: float = 0.0  # seconds to wait before answering (on top of the server's latency)
    finish_reason: str = "stop"  # "length" / "content_filter" to script a cut-off or filtered answer

    @classmethod
    def text(cls, content: str, **kw: Unpack[ReplyTiming]) -> Reply:
        return cls(content=content, **kw)

    @classmethod
    def json(cls, obj: object, **kw: Unpack[ReplyTiming]) -> Reply:
        return cls(content=json.dumps(obj), **kw)

    @classmethod
    def verdict(
        cls,
        decision: str,
        reason: str = "stub verdict",
        confidence: float = 0.9,
        reasoning: str | None = None,
        **kw: Unpack[ReplyTiming],
    ) -> Reply:
        obj: dict[str, Any] = {"decision": decision, "reason": reason, "confidence": confidence}
        if reasoning is not None:
            obj = {"reasoning": reasoning, **obj}
        return cls.json(obj, **kw)

    @classmethod
    def verdicts(cls, by_rule: dict[str, tuple[str, str, float]], **kw: Unpack[ReplyTiming]) -> Reply:
        """One request's verdicts for several rules: rule id -> (decision, reason, confidence)."""
        return cls.json(
            {rule: {"decision": d, "reason": r, "confidence": c} for rule, (d, r, c) in by_rule.items()}, **kw
        )

    @classmethod
    def refusal(cls, message: str = "I can't help with that.", **kw: Unpack[ReplyTiming]) -> Reply:
        return cls(refusal_message=message, **kw)

    @classmethod
    def error(
        cls, status: int, message: str = "stub error", retry_after: float | None = None, **kw: Unpack[ReplyTiming]
    ) -> Reply:
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        return cls(
            status=status,
            body={"error": {"message": message, "type": _REASONS.get(status, "error"), "code": None}},
            headers=headers,
            **kw,
        )


def _estimate_tokens(text: str) -> int:
    return max(1, (len(text) + 3) // 4)


def _message_text(messages: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, list):  # OpenAI content parts
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
        elif content is not None:
            parts.append(str(content))
    return "\n".join(parts)


_RULES_HEAD = "Rules (a JSON object, rule id -> rule):\n"


def rule_ids(body: dict[str, Any]) -> list[str] | None:
    """The rule ids a request asks verdicts for when it judges several rules at once (guard's ``together`` prompts), else None."""
    schema = (body.get("response_format") or {}).get("json_schema") or {}
    if schema.get("name") == "guard_verdicts":
        return list(schema["schema"]["properties"])
    text = _message_text([m for m in body.get("messages") or [] if m.get("role") == "user"][-1:])
    at = text.find(_RULES_HEAD)
    if at < 0:
        return None
    try:
        rules, _ = json.JSONDecoder().raw_decode(text, at + len(_RULES_HEAD))
    except ValueError:
        return None
    return list(rules) if isinstance(rules, dict) else None


def _for_every_rule(body: dict[str, Any], reply: Reply) -> Reply:
    """A scripted single verdict answers every rule of a request that judges several (one rule's verdicts pass as scripted)."""
    ids = rule_ids(body)
    if not ids or reply.status != 200 or reply.content is None:
        return reply
    try:
        obj = json.loads(reply.content)
    except ValueError:
        return reply
    if not isinstance(obj, dict) or "decision" not in obj:
        return reply
    return Reply(
        content=json.dumps(dict.fromkeys(ids, obj)),
        headers=reply.headers,
        delay=reply.delay,
        finish_reason=reply.finish_reason,
    )


def _completion(body: dict[str, Any], reply: Reply, seq: int) -> dict[str, Any]:
    prompt_tokens = _estimate_tokens(_message_text(body.get("messages") or []))
    completion_tokens = _estimate_tokens(reply.content or reply.refusal_message or "")
    return {
        "id": f"chatcmpl-stub-{seq}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "stub-judge"),
        "system_fingerprint": STUB_FINGERPRINT,  # how a report tells guard's stub from a real (local) model
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content, "refusal": reply.refusal_message},
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _stream_chunks(completion: dict[str, Any]) -> list[dict[str, Any]]:
    """The completion as a minimal SSE chunk sequence: role+content, then finish with usage."""
    message = completion["choices"][0]["message"]
    base = {k: completion[k] for k in ("id", "created", "model", "system_fingerprint")} | {
        "object": "chat.completion.chunk"
    }
    delta = {"role": "assistant", "content": message["content"] or ""}
    if message["refusal"]:
        delta["refusal"] = message["refusal"]
    return [
        base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        base
        | {
            "choices": [{"index": 0, "delta": {}, "finish_reason": completion["choices"][0]["finish_reason"]}],
            "usage": completion["usage"],
        },
    ]


class StubServer:
    """An OpenAI-compatible server on 127.0.0.1 (port 0 by default) in a background thread.

    Replies come from the FIFO queue, else ``responder(body)``, else ``default``.
    Every request body is kept in ``requests``. Thread-safe; logs nothing.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        latency: float = 0.0,
        default: Reply | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.latency = latency
        self.default = default or Reply.verdict("allow", "stub default", confidence=0.95)
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._host, self._port = host, port
        self._tls = tls  # a server context: answer over https (the handshake happens as a connection is accepted)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------
    def start(self) -> StubServer:
        server = _Server((self._host, self._port), _handler_for(self))
        server.block_on_close = False  # a slow scripted reply must not hold up stop()
        if self._tls is not None:
            server.socket = self._tls.wrap_socket(server.socket, server_side=True)
        self._server = server
        self._stopping.clear()
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-stub", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("stub server is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The OpenAI base URL (``…/v1``) to pass as ``api_base``."""
        host = "127.0.0.1" if self._host in ("", "0.0.0.0") else self._host
        return f"{'https' if self._tls else 'http'}://{host}:{self.port}/v1"

    # -- scripting -------------------------------------------------------
    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def connections(self) -> int:
        """TCP connections accepted so far (a client that reuses connections opens few)."""
        return self._server.accepted if self._server is not None else 0

    @property
    def pending(self) -> int:
        """Scripted replies not yet served."""
        with self._lock:
            return len(self._queue)

    def _next(self, body: dict[str, Any]) -> tuple[Reply, int]:
        with self._lock:
            self.requests.append(body)
            seq = len(self.requests)
            if self._queue:
                return self._queue.popleft(), seq
        return (self.responder(body) if self.responder else self.default), seq

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


def _handler_for(stub: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as two writes; Nagle + delayed ACK would add ~40 ms

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            return

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                pass

        def _send_stream(self, completion: dict[str, Any]) -> None:
            lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in _stream_chunks(completion)] + ["data: [DONE]\n\n"]
            data = "".join(lines).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            if self.path.rstrip("/").endswith("/stub/stats"):  # for benchmarks driving the stub from another process
                self._send(200, {"calls": stub.calls, "connections": stub.connections})
            elif self.path.rstrip("/").endswith("/models"):
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": "stub-judge", "object": "model", "created": 0, "owned_by": STUB_FINGERPRINT}],
                    },
                )
            else:
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            try:
                body = json.loads(raw or b"{}")
                if not isinstance(body, dict):
                    raise ValueError("body is not an object")
            except ValueError as exc:
                self._send(400, {"error": {"message": f"bad JSON body: {exc}", "type": "invalid_request_error"}})
                return
            reply, seq = stub._next(body)
            reply = _for_every_rule(body, reply)
            stub._sleep(stub.latency + reply.delay)
            if stub._stopping.is_set():
                return
            if reply.status != 200:
                self._send(reply.status, reply.body or Reply.error(reply.status).body, reply.headers)
            elif reply.body is not None:
                self._send(200, reply.body, reply.headers)
            elif body.get("stream"):
                self._send_stream(_completion(body, reply, seq))
            else:
                self._send(200, _completion(body, reply, seq), reply.headers)

    return Handler


# -- deterministic policies for the CLI (benchmarks, "against the stub model" eval runs) --

_RISKY = re.compile(
    # rm -rf / -fr of something outside the project: /…, ~…, $VAR, *, .., . (not ./build, not node_modules)
    # (lazy before the target, so a deny's reason quotes the command up to it, not the rest of the event)
    r"rm\s+(?:-\S+\s+)*-[a-z]*(?:r[a-z]*f|f[a-z]*r)[a-z]*\s+(?:[^;&|\n]*?\s)??(?:\\?[\"'])?(?:[/~*$]|\.\.|\./?(?=[\s\\\"';&|]|$))"
    r"|(?:curl|wget)\b[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z)?sh\b"  # curl … | sh
    r"|\.ssh\b|id_rsa|/etc/shadow|\.aws/credentials|\.env\b|secret|api[_-]?key|password"
    r"|push\s+(?:[^\n]*\s)?(?:--force\b|-f\b)|reset\s+--hard|mkfs|dd\s+if=|chmod\s+(?:-R\s+)?777"
    r"|drop\s+(?:table|database)|:\(\)\s*\{",
    re.IGNORECASE,
)


def keyword_policy(body: dict[str, Any]) -> Reply:
    """Deny when the fenced data (else the last user message) contains a risky marker. Not a judge."""
    messages = body.get("messages") or []
    text = _message_text([m for m in messages if m.get("role") == "user"][-1:])
    fenced = FENCE_RE.search(text)
    data = fenced.group(2) if fenced else text
    hit = _RISKY.search(data)
    if hit:
        return Reply.verdict(
            "deny", f"stub keyword policy: risky marker {hit.group(0)!r}", confidence=0.9, reasoning="marker match"
        )
    return Reply.verdict("allow", "stub keyword policy: no risky marker", confidence=0.9, reasoning="no marker")


def _allow_all(body: dict[str, Any]) -> Reply:
    return Reply.verdict("allow", "stub policy: allow everything", confidence=0.95)


def _deny_all(body: dict[str, Any]) -> Reply:
    return Reply.verdict("deny", "stub policy: deny everything", confidence=0.95)


def by_model_policy(body: dict[str, Any]) -> Reply:
    """The policy the model's name asks for: ``…stub-allow`` allows everything, ``…stub-deny`` denies everything, any other the keyword policy.

    So one stub can stand in for several models of a comparison (``guard eval --model openai/stub-keyword --model openai/stub-allow``).
    """
    name = str(body.get("model", ""))
    return (
        _allow_all(body)
        if name.endswith("stub-allow")
        else _deny_all(body)
        if name.endswith("stub-deny")
        else keyword_policy(body)
    )


POLICIES: dict[str, Callable[[dict[str, Any]], Reply]] = {
    "allow": _allow_all,
    "deny": _deny_all,
    "keyword": keyword_policy,
    "by-model": by_model_policy,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m guard.testing.openai_stub", description="OpenAI-compatible stub server (not a real judge)."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every reply")
    parser.add_argument("--mode", choices=sorted(POLICIES), default="keyword")
    args = parser.parse_args(argv)
    stub = StubServer(args.host, args.port, latency=args.latency)
    stub.responder = POLICIES[args.mode]
    try:
        stub.start()
    except OSError as exc:  # a busy port, or a host this machine does not have: one line, not a traceback
        print(
            f"{parser.prog}: cannot listen on {args.host}:{args.port}: {exc.strerror or exc} "
            "(pick another --port, or --port 0 for a free one)",
            file=sys.stderr,
        )
        return 1
    print(stub.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        stub.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
