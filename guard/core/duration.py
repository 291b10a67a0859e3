"""Durations as people write them in guard.yaml (``ttl: 7d``), turned into seconds.

Standard library only: the config loader calls it while compiling a config.
"""

from __future__ import annotations

import re

__all__ = ["format_duration", "parse_duration"]

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])\s*")
_PARTS = re.compile(r"(?:\d+(?:\.\d+)?\s*[smhdw]\s*)+")


def parse_duration(value: object) -> float:
    """Seconds in ``value``: a number of seconds, or ``30s``, ``30m``, ``12h``, ``7d``, ``2w``, ``1h30m``.

    Raises ValueError with a message a person can act on (the config loader adds
    the file and key). Zero and negative durations are refused: a cache entry
    that expires at once is a config mistake, and ``cache: off`` says "no cache".
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a duration such as 30m, 12h or 7d, got {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip().lower()
        if _NUMBER.fullmatch(text):
            seconds = float(text)
        elif _PARTS.fullmatch(text):
            seconds = sum(float(n) * _UNITS[unit] for n, unit in _PART.findall(text))
        else:
            raise ValueError(f"expected a duration such as 30m, 12h or 7d, got {value!r}")
    else:
        raise ValueError(f"expected a duration such as 30m, 12h or 7d, got {type(value).__name__}")
    if seconds <= 0:
        raise ValueError(f"a duration must be positive, got {value!r}")
    return seconds


def format_duration(seconds: float) -> str:
    """``seconds`` in the largest whole unit, as it would be written in guard.yaml (604800 → ``7d``)."""
    for unit in ("w", "d", "h", "m"):
        size = _UNITS[unit]
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"
