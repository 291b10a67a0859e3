"""Webhook signatures: GitHub-compatible body HMAC, replay-proof V2, receiver-side verify."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from guard.webhooks import signing
from guard.webhooks.signing import SignatureError, sign, verify

BODY = b'{"hook_event_name":"PreToolUse","tool_input":{"command":"ls"}}'
NOW = 1_760_000_000


def signed(body: bytes = BODY, secret: str = "k", timestamp: int = NOW, delivery_id: str = "d-1") -> dict[str, str]:
    return sign(body, secret, timestamp=timestamp, delivery_id=delivery_id)


def test_signature_is_the_hex_hmac_sha256_of_the_raw_body() -> None:
    headers = signed()
    assert headers["X-Webhook-Signature"] == "sha256=" + hmac.new(b"k", BODY, hashlib.sha256).hexdigest()
    assert (
        headers["X-Webhook-Signature-V2"]
        == "sha256=" + hmac.new(b"k", f"{NOW}.d-1.".encode() + BODY, hashlib.sha256).hexdigest()
    )
    assert (headers["X-Webhook-Timestamp"], headers["X-Webhook-Delivery"]) == (str(NOW), "d-1")


def test_verify_accepts_an_authentic_fresh_request_with_any_header_case() -> None:
    verify(BODY, signed(), "k", now=NOW + 299)
    verify(BODY, {k.lower(): v for k, v in signed().items()}, b"k", now=NOW - 10)


@pytest.mark.parametrize(
    ("body", "headers", "secret", "now", "message"),
    [
        (BODY + b" ", signed(), "k", NOW, "X-Webhook-Signature does not match"),
        (BODY, signed(), "other", NOW, "does not match"),
        (BODY, signed(), "k", NOW + 301, "possible replay"),
        (BODY, signed(), "k", NOW - 301, "possible replay"),
        (BODY, {**signed(), "X-Webhook-Timestamp": str(NOW + 1000)}, "k", NOW + 1000, "V2 does not match"),
        (BODY, {**signed(), "X-Webhook-Delivery": "d-2"}, "k", NOW, "V2 does not match"),
        (BODY, {**signed(), "X-Webhook-Timestamp": "yesterday"}, "k", NOW, "not a Unix time"),
        (BODY, {k: v for k, v in signed().items() if k != "X-Webhook-Signature-V2"}, "k", NOW, "V2 is missing"),
        (BODY, {k: v for k, v in signed().items() if k != "X-Webhook-Timestamp"}, "k", NOW, "Timestamp is missing"),
        (BODY, {}, "k", NOW, "is missing"),
    ],
)
def test_verify_refuses_forgeries_tampering_and_replays(
    body: bytes, headers: dict[str, str], secret: str, now: int, message: str
) -> None:
    with pytest.raises(SignatureError, match=message):
        verify(body, headers, secret, now=now)


def test_a_replayed_request_with_a_fresh_timestamp_is_refused() -> None:
    """An attacker who captured a request can change the timestamp header, not the V2 signature."""
    old = signed(timestamp=NOW - 3600)
    replay = {**old, "X-Webhook-Timestamp": str(NOW)}
    with pytest.raises(SignatureError, match="V2"):
        verify(BODY, replay, "k", now=NOW)


def test_signatures_are_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(signing.hmac, "compare_digest", spy)
    verify(BODY, signed(), "k", now=NOW)
    assert len(calls) == 2
