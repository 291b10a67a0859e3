"""$HOOK_PAYLOAD / $ARGUMENTS: cut to 96 KiB by shortening long strings, right at the boundary."""

from __future__ import annotations

import json
from typing import Any

import pytest

from guard.hooks.command_payload import ENV_LIMIT, TRUNCATED_KEY, encode_payload, fit_payload


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def payload_of_size(target: int, *, filler: str = "x") -> dict[str, Any]:
    """A PreToolUse payload whose compact JSON is exactly ``target`` bytes."""
    base: dict[str, Any] = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": "a.txt", "content": ""},
    }
    room = target - size(encode_payload(base))
    per_char = size(filler)
    assert room >= 0 and room % per_char == 0
    base["tool_input"]["content"] = filler * (room // per_char)
    assert size(encode_payload(base)) == target
    return base


def test_limit_is_96_kib() -> None:
    assert ENV_LIMIT == 98304


def test_exactly_96_kib_passes_untouched() -> None:
    payload = payload_of_size(ENV_LIMIT)
    text = fit_payload(payload)
    assert text == encode_payload(payload)
    assert TRUNCATED_KEY not in json.loads(text)


def test_one_byte_over_is_truncated_valid_and_within_limit() -> None:
    payload = payload_of_size(ENV_LIMIT + 1)
    text = fit_payload(payload)
    assert size(text) <= ENV_LIMIT
    data = json.loads(text)
    assert data[TRUNCATED_KEY] is True
    assert data["tool_name"] == "Write" and data["tool_input"]["file_path"] == "a.txt"
    content = data["tool_input"]["content"]
    assert content.endswith("…[truncated]") and len(content) < len(payload["tool_input"]["content"])
    assert size(text) > ENV_LIMIT - 64, "the cut is no larger than it needs to be"


@pytest.mark.parametrize("filler", ["é", "日", "🙂"])
def test_multibyte_text_is_measured_in_utf8_bytes(filler: str) -> None:
    """Fewer characters than 96 Ki, more bytes: still cut, and never mid-character."""
    payload = {"hook_event_name": "PreToolUse", "tool_input": {"content": filler * (ENV_LIMIT // size(filler) + 5)}}
    assert len(encode_payload(payload)) < ENV_LIMIT < size(encode_payload(payload))
    text = fit_payload(payload)
    assert size(text) <= ENV_LIMIT
    data = json.loads(text)
    assert data[TRUNCATED_KEY] is True
    assert set(data["tool_input"]["content"].removesuffix("…[truncated]")) == {filler}


def test_longest_strings_are_cut_first_and_short_ones_kept() -> None:
    payload = {
        "hook_event_name": "PostToolUse",
        "session_id": "s-123",
        "tool_input": {"command": "cat big.log", "notes": ["short", "y" * 60_000]},
        "tool_response": {"stdout": "z" * 120_000, "exit_code": 0},
    }
    data = json.loads(fit_payload(payload))
    assert data["session_id"] == "s-123"
    assert data["tool_input"]["command"] == "cat big.log"
    assert data["tool_input"]["notes"][0] == "short"
    assert data["tool_response"]["exit_code"] == 0
    assert data["tool_response"]["stdout"].endswith("…[truncated]")


def test_payload_too_wide_to_cut_keeps_its_identity() -> None:
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "tool_input": {f"k{i:06d}": i for i in range(20_000)},
    }
    data = json.loads(fit_payload(payload))
    assert data == {"hook_event_name": "PreToolUse", "session_id": "s", TRUNCATED_KEY: True}


def test_lone_surrogates_still_encode() -> None:
    text = encode_payload({"prompt": "bad \ud800 half"})
    text.encode("utf-8")
    assert json.loads(text) == {"prompt": "bad \ud800 half"}
