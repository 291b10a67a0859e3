"""A client's JSON settings file, edited as its owner would: read as an object, written whole in its own indentation.

``guard install`` edits files people care about (Claude Code's settings, Gemini
CLI's): a file it cannot read is named with nothing written, the result keeps
the file's indentation, and the new text replaces the old in one step. Standard
library only.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from guard.core.errors import ConfigError

__all__ = ["dump_json", "parse_json", "write_atomic"]


def parse_json(text: str | None, path: Path) -> dict[str, Any]:
    """The file's JSON object ({} for no file or an empty one); a ConfigError naming the file when it is not one."""
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg}); nothing was written"
            " — fix the file or move it aside and run guard install again",
            file=str(path),
        ) from None
    if not isinstance(data, dict):
        raise ConfigError("the top level must be a JSON object; nothing was written", file=str(path))
    return data


_INDENT = re.compile(r"^\{\s*\n([ \t]+)\S")


def dump_json(data: dict[str, Any], original: str | None) -> str:
    """JSON in the file's own indentation (two spaces for a new file), ending in a newline."""
    match = _INDENT.match(original or "")
    indent: int | str = 2
    if match:
        unit = match.group(1)
        indent = unit if "\t" in unit else len(unit)
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Replace the file in one step, so a crash never leaves a half-written settings file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
