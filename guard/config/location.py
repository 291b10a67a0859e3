"""Where in a config file a key path is, so a config error can name the line as well as the key."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from guard.core.errors import ConfigError

__all__ = ["line_of", "located"]

_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _parts(key: str) -> list[str | int]:
    return [int(index) if index else name for name, index in _PART.findall(key)]


def _yaml_line(text: str, parts: list[str | int]) -> int | None:
    import yaml

    node: Any = yaml.compose(text, Loader=yaml.SafeLoader)
    line = None
    for part in parts:
        if isinstance(node, yaml.MappingNode):
            found = next(((k, v) for k, v in node.value if getattr(k, "value", None) == part), None)
            if found is None:
                return line
            line, node = found[0].start_mark.line + 1, found[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _json_line(text: str, parts: list[str | int]) -> int | None:
    """The first line holding the last named key after the lines of the keys before it (JSON has no marks)."""
    names = [p for p in parts if isinstance(p, str)]
    lines = text.splitlines()
    at = 0
    for name in names:
        needle = f'"{name}"'
        hit = next((i for i in range(at, len(lines)) if needle in lines[i]), None)
        if hit is None:
            break
        at = hit
    return at + 1 if names else None


def located(error: ConfigError) -> ConfigError:
    """``error`` with the line of its key in its file, when that can be found (the core's errors know no files)."""
    if error.line or not (error.file and error.key):
        return error
    line = line_of(error.file, error.key)
    return (
        type(error)(error.message, file=error.file, key=error.key, line=line) if line else error
    )  # the same kind of error


def line_of(file: str, key: str) -> int | None:
    """The 1-based line of ``key`` (``hooks.PreToolUse[0].timeout``) in ``file``; None when unknown."""
    try:
        text = Path(file).read_text(encoding="utf-8")
        parts = _parts(key)
        return _json_line(text, parts) if file.endswith(".json") else _yaml_line(text, parts)
    except Exception:  # a location is a courtesy; the error itself is what matters
        return None
