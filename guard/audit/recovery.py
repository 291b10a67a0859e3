"""When the audit log cannot be written: a damaged file is set aside and a new one begun; failed writes are noted beside it.

A file SQLite cannot read as a database (damaged on disk, or overwritten by
the agent) would otherwise fail every later write, and every later decision
would go unlogged. The writer renames it (with its ``-wal`` and ``-shm``) to
``audit.db.unreadable-<UTC time>`` and starts a new log, saying so on stderr and
in the new log's first row; ``guard doctor`` and ``guard view`` list what was set
aside. A write that fails for any other reason (a full disk, a lock held past
the wait) is noted in guard's state directory (``audit-failures/<hash of the
log's path>.jsonl``, JSON lines, the last :data:`KEPT` kept: beside the log
would fail with it when its folder is the problem), which ``guard doctor``,
``guard view`` and ``guard log verify`` report. Standard library only: it runs
on the ``guard hook`` path, and only when something failed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

__all__ = ["KEPT", "failures", "is_damaged", "note_failure", "set_aside", "set_aside_files"]

#: Failure notes kept beside a log (older ones are dropped when the file is rewritten).
KEPT = 100
#: Past this size the notes file is rewritten with the last KEPT notes.
_NOTES_BYTES = 256 << 10
_SET_ASIDE = ".unreadable-"
#: SQLite's names for a file that is not (or no longer) a readable database.
_DAMAGED = frozenset({"SQLITE_NOTADB", "SQLITE_CORRUPT"})


def is_damaged(exc: BaseException) -> bool:
    """Whether ``exc`` says the file is not a readable database (never a lock, a full disk or a permission)."""
    if not isinstance(exc, sqlite3.DatabaseError) or isinstance(exc, sqlite3.OperationalError):
        return False
    name = getattr(exc, "sqlite_errorname", None)
    if name is not None:
        return name in _DAMAGED
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text


def set_aside(path: Path) -> Path:
    """Rename the damaged log at ``path`` (and its WAL files) out of the way; the name it now has."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.name}{_SET_ASIDE}{stamp}")
    n = 1
    while target.exists():  # two set-asides in one second
        n += 1
        target = path.with_name(f"{path.name}{_SET_ASIDE}{stamp}-{n}")
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.replace(f"{path}{suffix}", f"{target}{suffix}")
        except FileNotFoundError:  # no such file, or another process set it aside first
            continue
    return target


def set_aside_files(path: Path) -> list[Path]:
    """Logs set aside beside ``path``, oldest first."""
    try:
        return sorted(
            p
            for p in path.parent.glob(f"{path.name}{_SET_ASIDE}*")
            if not p.name.endswith(("-wal", "-shm", "-journal"))
        )
    except OSError:
        return []


def _notes(path: Path) -> Path:
    from guard.core.settings import user_dir

    digest = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:16]
    return user_dir("state") / "audit-failures" / f"{digest}.jsonl"


def note_failure(path: Path, exc: BaseException) -> None:
    """Append what made a write to the log at ``path`` fail; never raises (it runs while a write has already failed)."""
    line = json.dumps({"time": time.time(), "error": f"{type(exc).__name__}: {exc}"[:500]}, ensure_ascii=True) + "\n"
    notes = _notes(path)
    try:
        notes.parent.mkdir(parents=True, exist_ok=True)
        if notes.exists() and notes.stat().st_size > _NOTES_BYTES:
            kept = notes.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)[-KEPT:]
            tmp = notes.with_name(f".{notes.name}.{os.getpid()}.tmp")
            tmp.write_text("".join(kept) + line, encoding="utf-8")
            os.replace(tmp, notes)
            return
        with notes.open("a", encoding="utf-8") as out:
            out.write(line)
    except OSError:
        pass


def failures(path: Path) -> list[dict[str, Any]]:
    """The failed writes noted beside the log at ``path``, oldest first (unreadable lines skipped)."""
    try:
        lines = _notes(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    found = []
    for line in lines[-KEPT:]:
        try:
            note = json.loads(line)
        except ValueError:
            continue
        if isinstance(note, dict) and isinstance(note.get("time"), int | float) and isinstance(note.get("error"), str):
            found.append(note)
    return found
