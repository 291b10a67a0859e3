"""Webhook request signing (sender side) and verification (receiver side).

Two signatures ride on every signed request, both ``sha256=<hex HMAC-SHA256>``
with the hook's ``secret`` as key:

* ``X-Webhook-Signature`` over the raw body, exactly as GitHub does, so existing
  receivers (and the contract) work unchanged. It does not cover the timestamp
  or the delivery id, so on its own a captured request can be replayed forever.
* ``X-Webhook-Signature-V2`` over ``"<timestamp>.<delivery id>." + body`` (Stripe's
  idea, plus the delivery id). It binds the time and the id to the body, so a
  receiver that checks it and refuses old timestamps and seen delivery ids
  refuses replays; :func:`verify` does the first two.

Standard library only, so a receiver can copy :func:`verify` without guard.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping

from guard.core.errors import GuardError

__all__ = [
    "DELIVERY_HEADER",
    "SIGNATURE_HEADER",
    "SIGNATURE_V2_HEADER",
    "TIMESTAMP_HEADER",
    "SignatureError",
    "sign",
    "verify",
]

SIGNATURE_HEADER = "X-Webhook-Signature"
SIGNATURE_V2_HEADER = "X-Webhook-Signature-V2"
TIMESTAMP_HEADER = "X-Webhook-Timestamp"
DELIVERY_HEADER = "X-Webhook-Delivery"


class SignatureError(GuardError):
    """A received webhook's signature is missing or wrong, or its timestamp is out of tolerance."""


def _hmac(secret: str | bytes, message: bytes) -> str:
    key = secret.encode() if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, message, hashlib.sha256).hexdigest()


def _v2_message(body: bytes, timestamp: int, delivery_id: str) -> bytes:
    return f"{timestamp}.{delivery_id}.".encode() + body


def sign(body: bytes, secret: str | bytes, *, timestamp: int, delivery_id: str) -> dict[str, str]:
    """The signature, timestamp and delivery headers for one request body."""
    return {
        SIGNATURE_HEADER: _hmac(secret, body),
        SIGNATURE_V2_HEADER: _hmac(secret, _v2_message(body, timestamp, delivery_id)),
        TIMESTAMP_HEADER: str(timestamp),
        DELIVERY_HEADER: delivery_id,
    }


def _header(headers: Mapping[str, str], name: str) -> str:
    """Case-insensitive header lookup (works for dicts and ``http.client`` / email messages)."""
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name.lower()), None)
    if not value:
        raise SignatureError(f"header {name} is missing")
    return value


def verify(
    body: bytes,
    headers: Mapping[str, str],
    secret: str | bytes,
    *,
    tolerance: float = 300,
    now: float | None = None,
) -> None:
    """Check a received webhook; raise :class:`SignatureError` unless it is authentic and fresh.

    Both signatures must match (compared in constant time), then the timestamp must
    be within ``tolerance`` seconds of ``now``. Refusing a delivery id seen before
    is left to the receiver, which alone knows what it has stored.
    """
    stamp = _header(headers, TIMESTAMP_HEADER)
    delivery_id = _header(headers, DELIVERY_HEADER)
    try:
        timestamp = int(stamp)
    except ValueError:
        raise SignatureError(f"header {TIMESTAMP_HEADER} is not a Unix time: {stamp!r}") from None
    checks = (
        (SIGNATURE_HEADER, _hmac(secret, body)),
        (SIGNATURE_V2_HEADER, _hmac(secret, _v2_message(body, timestamp, delivery_id))),
    )
    for name, expected in checks:
        if not hmac.compare_digest(_header(headers, name).encode(), expected.encode()):
            raise SignatureError(f"header {name} does not match the body")
    skew = abs((time.time() if now is None else now) - timestamp)
    if skew > tolerance:
        raise SignatureError(f"timestamp is {skew:.0f}s away from now (tolerance {tolerance:g}s): possible replay")
