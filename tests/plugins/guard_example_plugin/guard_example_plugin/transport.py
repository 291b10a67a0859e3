"""``canned``: a judge transport that answers every call with the verdict in ``CANNED_VERDICT`` (a plugin's transport, no model)."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace
from typing import Any


async def acompletion(**kwargs: Any) -> Any:
    decision = os.environ.get("CANNED_VERDICT", "allow")
    content = json.dumps({"decision": decision, "reason": f"canned {decision} for {kwargs['model']}", "confidence": 0.95})
    message = SimpleNamespace(content=content, refusal=None)
    return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")], usage=None)


def response_mode(model: str) -> str:
    return "json_object"


def load() -> None:
    return None
