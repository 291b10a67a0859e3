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
Look-alikes count: markers are found on a skeleton of the data (NFKC, zero-width
characters dropped, Cyrillic/Greek confusables and dash variants folded to ASCII,
line and paragraph separators as spaces), so ``＜＜＜ＵＮＴＲＵＳＴＥＤ``,
``<<<UN\u200bTRUSTED`` or a Cyrillic ``Ѕ`` are defused like the plain marker.

Standard library only: this module is on the cache-key path.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from functools import lru_cache

__all__ = ["FENCE_RE", "boundary_for", "defuse", "fence"]

_SALT = b"guard/judge/fence/v1"
_OPEN = "<<<UNTRUSTED-DATA {}>>>"
_CLOSE = "<<<END-UNTRUSTED-DATA {}>>>"
_MARKER = re.compile(r"<<<(?=\s*(?:END-)?UNTRUSTED-DATA)", re.IGNORECASE)

#: Matches one fenced block; group 1 is the boundary, group 2 the data.
FENCE_RE = re.compile(r"<<<UNTRUSTED-DATA ([0-9a-f]{16,})>>>\n(.*?)\n<<<END-UNTRUSTED-DATA \1>>>", re.DOTALL)


_DEFUSED = "<<<[quoted] "
#: Characters a reader does not see: zero-width spaces and joiners, word joiner, BOM, soft hyphen, Mongolian vowel separator.
_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e")
#: Letters drawn like the marker's Latin ones (Cyrillic, Greek, Cherokee, Armenian, small capitals),
#: angle brackets drawn like "<", and dash variants: folds NFKC leaves alone.
_CONFUSABLE = str.maketrans(
    {
        **dict(zip("АВЕНІКМОРСТХЅԀаеіорсхѕтԁ", "ABEHIKMOPCTXSDaeiopcxstd", strict=True)),
        **dict(zip("ΑΒΕΗΙΚΜΝΟΡΤΧΥΖντυ", "ABEHIKMNOPTXYZvtu", strict=True)),
        **dict(zip("ᎠᎡᎬᎪᎢᏚՍᴀᴅᴇɴʀꜱᴛᴜ", "DREATSUadenrstu", strict=True)),
        **dict.fromkeys("‹˂ᐸ〈⟨❮", "<"),
        **dict.fromkeys("‐‑‒–—―−﹣", "-"),
    }
)


@lru_cache(maxsize=4096)
def _fold(char: str) -> str:
    """What ``char`` reads as when hunting for markers: '' for invisible, ' ' for any space or line break."""
    if char in _INVISIBLE or unicodedata.category(char) == "Mn":
        return ""
    if char.isspace():
        return " "
    return unicodedata.normalize("NFKC", char).translate(_CONFUSABLE)


def _skeleton(data: str) -> tuple[str, list[int]]:
    """``data`` folded for comparison, and for each skeleton character the index of the data character it came from."""
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(data):
        folded = _fold(char)
        chars.append(folded)
        origin.extend([index] * len(folded))
    return "".join(chars), origin


def defuse(data: str) -> str:
    """Rewrite anything in ``data`` that could be read as a fence marker, look-alikes included."""
    if data.isascii():  # the common case; ASCII has no look-alikes but spaces, which the marker regex allows
        return _MARKER.sub(_DEFUSED, data)
    skeleton, origin = _skeleton(data)
    out: list[str] = []
    done = 0
    for match in _MARKER.finditer(skeleton):
        start, end = origin[match.start()], origin[match.end() - 1] + 1  # the data characters that read as "<<<"
        out += [data[done:start], _DEFUSED]
        done = end
    return "".join([*out, data[done:]])


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
