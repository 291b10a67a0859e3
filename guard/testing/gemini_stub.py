"""A scripted Gemini API (``generateContent`` / ``streamGenerateContent``) on 127.0.0.1, for Gemini CLI e2e tests.

Gemini CLI reads ``GOOGLE_GEMINI_BASE_URL`` (plain http is allowed for 127.0.0.1),
so its agent loop can run against scripted turns like Claude Code's. Its side
requests (the model router, next-speaker checks) ask for JSON matching a
``responseJsonSchema``; the default side reply fills that schema with
placeholder values so they never stall the run.
"""

from __future__ import annotations

import json
from typing import Any

from guard.testing.agent_script import RecordedRequest, Reply, ScriptedAgentServer, StubHandler, final_text, tool_use

__all__ = ["GeminiRequest", "GeminiStub", "Reply", "final_text", "tool_use"]


class GeminiRequest(RecordedRequest):
    """A recorded ``generateContent`` request."""

    def function_responses(self) -> list[dict[str, Any]]:
        """Every ``functionResponse`` part the client sent: the tool results the model sees."""
        return [
            part["functionResponse"]
            for content in (self.body or {}).get("contents", [])
            for part in content.get("parts", [])
            if isinstance(part, dict) and "functionResponse" in part
        ]


_GENERATE = ("generateContent", "streamGenerateContent")


def _method(path: str) -> str:
    """``/v1beta/models/gemini-x:streamGenerateContent?alt=sse`` → ``streamGenerateContent``."""
    return path.split("?", 1)[0].rsplit(":", 1)[-1]


def _placeholder(schema: dict[str, Any]) -> Any:
    """A value of the schema's shape (first enum member, 1, false, "stub", …)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = str(schema.get("type", "")).upper()
    if kind == "OBJECT":
        return {name: _placeholder(sub) for name, sub in schema.get("properties", {}).items()}
    if kind == "ARRAY":
        return []
    if kind in ("INTEGER", "NUMBER"):
        return 1
    if kind == "BOOLEAN":
        return False
    return "stub"


def _parts(reply: Reply) -> list[dict[str, Any]]:
    return [
        {"functionCall": {"name": b["name"], "args": b["input"]}} if b["type"] == "tool_use" else {"text": b["text"]}
        for b in reply.content
    ]


class GeminiStub(ScriptedAgentServer[GeminiRequest]):
    """``/v1beta/models/{model}:generateContent``, ``:streamGenerateContent?alt=sse`` and ``:countTokens``."""

    request_class = GeminiRequest

    def is_agent_turn(self, path: str, body: dict[str, Any] | None) -> bool:
        return _method(path) in _GENERATE and bool((body or {}).get("tools"))

    def default_side_reply(self, body: dict[str, Any]) -> Reply:
        schema = (body.get("generationConfig") or {}).get("responseJsonSchema")
        return final_text(json.dumps(_placeholder(schema)) if isinstance(schema, dict) else "ok")

    def serve(self, handler: StubHandler, request: GeminiRequest) -> None:
        method = _method(request.path)
        if method == "countTokens":
            self.record(request)
            handler.send_json(200, {"totalTokens": 100})
            return
        if method not in _GENERATE:
            self.record(request)
            handler.send_json(404, {"error": {"code": 404, "message": request.path, "status": "NOT_FOUND"}})
            return
        reply = self.answer(request)
        response = {
            "candidates": [{"content": {"role": "model", "parts": _parts(reply)}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 20, "totalTokenCount": 30},
            "modelVersion": "gemini-stub",
        }
        if method == "streamGenerateContent":
            handler.send_events([f"data: {json.dumps(response)}\r\n\r\n".encode()])
        else:
            handler.send_json(200, response)
