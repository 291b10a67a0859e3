"""Fencing untrusted data for the judge prompt.

Everything an agent or a tool produced (tool input, transcript excerpts, the
user's goal as the client relays it) reaches the judge between two marker lines
carrying a boundary token; the judge is told that only the exact boundary closes
the fence and that nothing inside is an instruction.

Why the boundary is derived, not drawn from ``secrets``: a fresh random token per
call would make every request body differ, which defeats body-matched replay
(vcrpy cassettes in CI) and provider-side prompt caching. The token is an HMAC of
the data itself under a fixed salt, so it is stable for identical data yet cannot
be planted inside that data (doing so needs a fixed point of SHA-256). The token
is still checked against the data, and anything in the data that looks like a
fence marker is defused, so a fake closing line stays visibly inside the fence.

Standard library only: this module is on the cache-key path.
"""

from __future__ import annotations

import hashlib
import hmac
import re

__all__ = ["FENCE_RE", "boundary_for", "defuse", "fence"]

_SALT = b"guard/judge/fence/v1"
_OPEN = "<<<UNTRUSTED-DATA {}>>>"
_CLOSE = "<<<END-UNTRUSTED-DATA {}>>>"
_MARKER = re.compile(r"<<<(?=\s*(?:END-)?UNTRUSTED-DATA)", re.IGNORECASE)

#: Matches one fenced block; group 1 is the boundary, group 2 the data.
FENCE_RE = re.compile(r"<<<UNTRUSTED-DATA ([0-9a-f]{16,})>>>\n(.*?)\n<<<END-UNTRUSTED-DATA \1>>>", re.DOTALL)


def defuse(data: str) -> str:
    """Rewrite anything in ``data`` that could be read as a fence marker."""
    return _MARKER.sub("<<<[quoted] ", data)


def boundary_for(data: str) -> str:
    """A boundary token derived from ``data`` that does not occur in it."""
    for attempt in range(16):
        token = hmac.new(_SALT, f"{attempt}:{data}".encode(), hashlib.sha256).hexdigest()[:32]
        if token not in data:
            return token
    raise ValueError("could not derive a fence boundary absent from the data")  # needs 16 SHA-256 collisions


def fence(data: str) -> tuple[str, str]:
    """Return ``(fenced_text, boundary)`` for untrusted ``data``."""
    safe = defuse(data)
    token = boundary_for(safe)
    return f"{_OPEN.format(token)}\n{safe}\n{_CLOSE.format(token)}", token
