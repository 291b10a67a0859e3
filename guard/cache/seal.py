"""The seal on a decision-cache entry: what an entry must carry to be believed.

Both backends store the verdict text and its expiry beside this MAC (see
:mod:`guard.storage.secret`); binding the key stops a valid allow being copied onto
another call's key, binding the expiry stops an entry being kept alive.
"""

from __future__ import annotations

from guard.storage.secret import seal, verify

__all__ = ["entry_seal", "sealed"]

_PURPOSE = "cache"


def entry_seal(key: str, text: str, expires_at: float) -> str:
    """The MAC for the entry ``key`` → ``text`` (verdict JSON) valid until ``expires_at``."""
    return seal(_PURPOSE, key, text, repr(float(expires_at)))


def sealed(mac: object, key: str, text: object, expires_at: object) -> bool:
    """True when the stored ``mac`` matches the stored entry; anything malformed is False."""
    if not isinstance(text, str) or not isinstance(expires_at, (int, float)) or isinstance(expires_at, bool):
        return False
    return verify(mac, _PURPOSE, key, text, repr(float(expires_at)))
