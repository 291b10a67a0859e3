"""A word diff of two rule texts, so a flip's report shows how the rule it names changed."""

from __future__ import annotations

import difflib
import re
from typing import Literal

__all__ = ["word_diff"]

Part = tuple[Literal["same", "old", "new"], str]

_WORDS = re.compile(r"\s+|[^\s]+")


def word_diff(old: str, new: str) -> list[Part]:
    """``old`` → ``new`` as runs of kept, removed and added text (whitespace kept, so the parts join back into either side)."""
    a, b = _WORDS.findall(old), _WORDS.findall(new)
    parts: list[Part] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            parts.append(("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            parts.append(("old", "".join(a[i1:i2])))
        if j2 > j1:
            parts.append(("new", "".join(b[j1:j2])))
    return parts
