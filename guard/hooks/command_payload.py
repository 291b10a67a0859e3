"""The event JSON a command hook gets in ``$ARGUMENTS`` / ``$HOOK_PAYLOAD``, cut to fit one variable.

Linux caps a single environment string at 128 KiB (``MAX_ARG_STRLEN``), so a
payload over :data:`ENV_LIMIT` (96 KiB of UTF-8) is shortened: every string value
longer than some cap ``C`` is cut to ``C`` characters plus a marker, with ``C`` the
largest that fits (so the longest strings are cut first and short ones are kept
whole), and ``"payload_truncated": true`` is added. The result is always valid
JSON within the limit. Stdin always carries the whole payload.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ENV_LIMIT", "TRUNCATED_KEY", "encode_payload", "fit_payload"]

ENV_LIMIT = 96 * 1024  # bytes of UTF-8
TRUNCATED_KEY = "payload_truncated"
_MARKER = "…[truncated]"
#: Kept when even cutting every string to nothing does not fit (a payload of huge keys or lists).
_IDENTITY_FIELDS = ("hook_event_name", "session_id", "cwd", "tool_name", "tool_use_id", "prompt_id")


def encode_payload(payload: Any) -> str:
    """Compact JSON, UTF-8 text kept readable; escaped only if it holds lone surrogates."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(payload, separators=(",", ":"))
    return text


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def fit_payload(payload: dict[str, Any], limit: int = ENV_LIMIT, *, full: str | None = None) -> str:
    """``payload`` as JSON of at most ``limit`` UTF-8 bytes (``full`` is its encoding if already made)."""
    full = encode_payload(payload) if full is None else full
    if _size(full) <= limit:
        return full
    longest = _longest_string(payload)
    low, high, best = 0, longest, None
    while low <= high:  # the largest cap that fits
        cap = (low + high) // 2
        text = encode_payload({**_cut(payload, cap), TRUNCATED_KEY: True})
        if _size(text) <= limit:
            best, low = text, cap + 1
        else:
            high = cap - 1
    return best if best is not None else _identity_only(payload, limit)


def _longest_string(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return max((_longest_string(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return max((_longest_string(v) for v in value), default=0)
    return 0


def _cut(value: Any, cap: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= cap + len(_MARKER) else value[:cap] + _MARKER
    if isinstance(value, dict):
        return {k: _cut(v, cap) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v, cap) for v in value]
    return value


def _identity_only(payload: dict[str, Any], limit: int) -> str:
    """Last resort: the fields that say which event this is, each cut short."""
    kept = {k: _cut(payload[k], 256) for k in _IDENTITY_FIELDS if isinstance(payload.get(k), str)}
    text = encode_payload({**kept, TRUNCATED_KEY: True})
    return text if _size(text) <= limit else encode_payload({TRUNCATED_KEY: True})
