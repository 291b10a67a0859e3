"""A command hook's output: read with a memory cap, and kept out of the agent's context when long.

Text over :data:`OUTPUT_CAP` characters that would become a reason or additional
context is written to a file (``<base_dir>/.guard/hook-output/``, or the system
temp folder when that is not writable); only a preview and the file's path are
returned, so one chatty hook cannot flood the agent's context window.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from guard.core.errors import HookError

__all__ = ["MEMORY_CAP", "OUTPUT_CAP", "PREVIEW_CHARS", "Captured", "read_capped", "spill_long_text"]

OUTPUT_CAP = 10_000  # characters
PREVIEW_CHARS = 2_000
MEMORY_CAP = 4 * 1024 * 1024  # bytes kept per stream; the rest is drained and dropped
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class Captured:
    text: str
    dropped_bytes: int  # output beyond MEMORY_CAP


async def read_capped(stream: asyncio.StreamReader | None) -> Captured:
    """Read a stream to its end, keeping at most :data:`MEMORY_CAP` bytes."""
    if stream is None:
        return Captured("", 0)
    kept = bytearray()
    dropped = 0
    while chunk := await stream.read(_CHUNK):
        room = MEMORY_CAP - len(kept)
        kept += chunk[:room]
        dropped += max(0, len(chunk) - room)
    return Captured(kept.decode("utf-8", errors="replace"), dropped)


def spill_long_text(text: str, *, hook_id: str, label: str, base_dir: Path) -> tuple[str, str | None]:
    """(text or preview, path of the file holding the whole text or None when it fits)."""
    if len(text) <= OUTPUT_CAP:
        return text, None
    path = _write(text, hook_id=hook_id, label=label, base_dir=base_dir)
    rest = len(text) - PREVIEW_CHARS
    return f"{text[:PREVIEW_CHARS]}\n… [{rest} more characters; the whole {label} is in {path}]", str(path)


def _write(text: str, *, hook_id: str, label: str, base_dir: Path) -> Path:
    safe_id = re.sub(r"[^A-Za-z0-9_.-]+", "_", hook_id)[:80] or "hook"
    name = f"{safe_id}-{time.time_ns()}-{label}.txt"
    for folder in (base_dir / ".guard" / "hook-output", Path(tempfile.gettempdir()) / "guard-hook-output"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # may hold secrets
            with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as handle:
                handle.write(text)
            return path
        except OSError:
            continue
    raise HookError(f"cannot write hook output for {hook_id} to {base_dir}/.guard/hook-output or the temp folder")
