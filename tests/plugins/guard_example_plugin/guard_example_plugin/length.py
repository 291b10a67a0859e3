"""``max_input``'s verdict, standard library only: what the ``guard hook`` fast path calls (``Kind.verdict``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from guard.core.decision import HookResult
from guard.core.spec import HookSpec


def too_long(spec: HookSpec, payload: Mapping[str, Any], env: Mapping[str, str]) -> HookResult:
    """A deny when the call's input is longer than ``max_chars``, else no objection: a verdict every time."""
    limit = int(spec.options["max_chars"])
    size = len(json.dumps(payload.get("tool_input") or {}))
    if size <= limit:
        return HookResult(spec.id, spec.kind)
    return HookResult(spec.id, spec.kind, decision="deny", reason=f"max_input: {size} characters, at most {limit}")
