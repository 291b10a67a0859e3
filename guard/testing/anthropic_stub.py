"""A scripted Anthropic Messages API on 127.0.0.1, for driving the real Claude Code CLI in tests.

Streaming follows the Messages protocol (message_start, content_block_start /
delta / stop with ``input_json_delta`` fragments for tool calls, message_delta,
message_stop); non-streaming requests get one JSON message. Requests that offer
no tools (Claude's own ``type: "prompt"`` hooks, title generation) are side
requests; by default they are answered ``{"ok": true}``, which is what a prompt
hook expects.

    with AnthropicStub([tool_use("Bash", {"command": "ls"}), final_text("done")]) as stub:
        ...  # ANTHROPIC_BASE_URL=stub.base_url
        stub.agent_requests[1].tool_results()  # what the model saw after the call
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from guard.testing.agent_script import (
    RecordedRequest,
    Reply,
    ScriptedAgentServer,
    StubHandler,
    final_text,
    next_id,
    tool_use,
)

__all__ = ["AnthropicRequest", "AnthropicStub", "Reply", "final_text", "tool_use"]


class AnthropicRequest(RecordedRequest):
    """A recorded Messages request."""

    def tool_results(self) -> list[dict[str, Any]]:
        """Every ``tool_result`` block the client sent in this request's messages."""
        results: list[dict[str, Any]] = []
        for message in (self.body or {}).get("messages", []):
            content = message.get("content")
            if isinstance(content, list):
                results.extend(b for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
        return results


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _stream_events(reply: Reply, message_id: str, model: str) -> Iterator[bytes]:
    """The Messages streaming protocol; a tool's input arrives as two ``input_json_delta`` fragments."""
    yield _sse(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
    )
    for index, block in enumerate(reply.content):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            raw = json.dumps(block["input"])
            half = len(raw) // 2
            deltas = [{"type": "input_json_delta", "partial_json": part} for part in (raw[:half], raw[half:])]
        else:
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block["text"]}]
        yield _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        for delta in deltas:
            yield _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 20},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


class AnthropicStub(ScriptedAgentServer[AnthropicRequest]):
    """``/v1/messages`` (streaming or not) and ``/v1/messages/count_tokens``; other POSTs get a 404."""

    request_class = AnthropicRequest

    def is_agent_turn(self, path: str, body: dict[str, Any] | None) -> bool:
        return _is_messages(path) and bool((body or {}).get("tools"))

    def default_side_reply(self, body: dict[str, Any]) -> Reply:
        return final_text('{"ok": true}')

    def serve(self, handler: StubHandler, request: AnthropicRequest) -> None:
        if "count_tokens" in request.path:
            self.record(request)
            handler.send_json(200, {"input_tokens": 100})
            return
        if not _is_messages(request.path):
            self.record(request)
            handler.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": request.path}})
            return
        reply = self.answer(request)
        body = request.body or {}
        message_id = next_id("msg_stub")
        model = body.get("model") or "claude-stub"
        if body.get("stream"):
            handler.send_events(list(_stream_events(reply, message_id, model)))
            return
        handler.send_json(
            200,
            {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": list(reply.content),
                "stop_reason": reply.stop_reason,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 20},
            },
        )


def _is_messages(path: str) -> bool:
    return path.split("?", 1)[0].rstrip("/") == "/v1/messages"
