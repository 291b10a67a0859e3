"""Cache keys: a hash of canonical JSON of only what changes the verdict.

Volatile fields (ids, transcript path, timestamps) are dropped so the same tool
call in another session hits the same entry; keys are sorted so field order
does not matter.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["VOLATILE_FIELDS", "cache_key", "canonical_json", "canonical_payload"]

VOLATILE_FIELDS: frozenset[str] = frozenset(
    {
        "session_id",
        "prompt_id",
        "tool_use_id",
        "transcript_path",
        "timestamp",
        "created_at",
        "time",
        "agent_id",
        "trace_id",
        "delivery_id",
    }
)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def canonical_payload(
    payload: dict[str, Any], ignore: tuple[str, ...] = (), keep: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The payload without volatile top-level fields (``ignore`` adds more, ``keep`` spares some)."""
    drop = (VOLATILE_FIELDS | frozenset(ignore)) - frozenset(keep)
    return {k: v for k, v in payload.items() if k not in drop}


def cache_key(parts: dict[str, Any]) -> str:
    """blake2b of canonical JSON of ``parts`` (rule, prompt version and hash, model, tier, params, payload)."""
    return hashlib.blake2b(canonical_json(parts).encode(), digest_size=20).hexdigest()
