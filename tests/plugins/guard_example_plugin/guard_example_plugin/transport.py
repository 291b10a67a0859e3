"""``canned``: a judge transport that answers every call with the verdict in ``CANNED_VERDICT`` (a plugin's transport, no model)."""

from __future__ import annotations

import json
import os

from guard.judge.chat import ChatReply, ChatRequest


async def complete(request: ChatRequest) -> ChatReply:
    decision = os.environ.get("CANNED_VERDICT", "allow")
    return ChatReply(
        content=json.dumps(
            {"decision": decision, "reason": f"canned {decision} for {request.model}", "confidence": 0.95}
        ),
        finish_reason="stop",
    )


def response_mode(model: str) -> str:
    return "json_object"


def load() -> None:
    return None
