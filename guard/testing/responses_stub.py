"""A scripted OpenAI Responses API (``POST /v1/responses``, streaming) on 127.0.0.1, for Codex CLI e2e tests.

Codex CLI speaks only the Responses wire protocol to a custom ``model_providers``
entry (``wire_api = "chat"`` is refused), so its agent loop needs this rather than
the chat-completions judge stub. Tool calls go out as ``function_call`` items
whose ``arguments`` are a JSON string; tool results come back as
``function_call_output`` items in the next request's ``input``.
"""

from __future__ import annotations

import json
import time
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

__all__ = ["ResponsesRequest", "ResponsesStub", "Reply", "final_text", "tool_use"]


class ResponsesRequest(RecordedRequest):
    """A recorded Responses request."""

    def tool_outputs(self) -> list[dict[str, Any]]:
        """Every ``function_call_output`` item the client sent: the tool results the model sees."""
        return [
            item
            for item in (self.body or {}).get("input", [])
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]


def _items(reply: Reply) -> list[dict[str, Any]]:
    items = []
    for block in reply.content:
        if block["type"] == "tool_use":
            items.append(
                {
                    "type": "function_call",
                    "id": next_id("fc_stub"),
                    "call_id": block["id"],
                    "name": block["name"],
                    "arguments": json.dumps(block["input"]),
                    "status": "completed",
                }
            )
        else:
            items.append(
                {
                    "type": "message",
                    "id": next_id("msg_stub"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": block["text"], "annotations": []}],
                }
            )
    return items


def _events(reply: Reply, model: str) -> Iterator[bytes]:
    response = {
        "id": next_id("resp_stub"),
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "in_progress",
        "output": [],
    }

    def event(kind: str, **data: Any) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()

    yield event("response.created", response=response)
    items = _items(reply)
    for index, item in enumerate(items):
        yield event("response.output_item.added", output_index=index, item=item)
        yield event("response.output_item.done", output_index=index, item=item)
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 30,
    }
    yield event("response.completed", response={**response, "status": "completed", "output": items, "usage": usage})


class ResponsesStub(ScriptedAgentServer[ResponsesRequest]):
    """``POST /v1/responses`` (streamed as server-sent events); other POSTs get a 404."""

    request_class = ResponsesRequest

    def is_agent_turn(self, path: str, body: dict[str, Any] | None) -> bool:
        return _is_responses(path) and bool((body or {}).get("tools"))

    def serve(self, handler: StubHandler, request: ResponsesRequest) -> None:
        if not _is_responses(request.path):
            self.record(request)
            handler.send_json(404, {"error": {"message": f"no route {request.path}", "type": "not_found"}})
            return
        reply = self.answer(request)
        handler.send_events(list(_events(reply, (request.body or {}).get("model") or "stub-model")))


def _is_responses(path: str) -> bool:
    return path.split("?", 1)[0].rstrip("/").endswith("/responses")
