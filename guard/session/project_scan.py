"""Which files of a project changed since a moment: what the agent wrote through routes guard never saw.

A program the agent runs may write files it never names (a generator script, ``tar x``, ``git checkout``, ``pip
install -e``); a judge that later allows code importing them would never have seen them. So before a call that may
run project code, guard walks the project and takes every file whose inode change time (``st_ctime``, which a
program cannot set back the way it can set ``st_mtime`` with ``touch -d``) is after the last walk.

Bounded: folders that hold other people's code or tools' caches are not walked (``.git``, ``node_modules``, a
virtualenv (a folder holding ``pyvenv.cfg``), ``.tox``, ``.nox``, ``.mypy_cache`` …, guard's own ``.guard``); a
compiled ``.pyc`` in ``__pycache__`` counts only when Python would run it without checking its source (an unchecked
hash-based file: a stale timestamp or hash is simply recompiled); the walk stops after :data:`MAX_ENTRIES` entries or
:data:`MAX_SECONDS`, and says so (``complete`` False), so a caller never takes "nothing found" from a walk that was cut.
Standard library only.
"""

from __future__ import annotations

import os
import time

from guard.core.record import Record

__all__ = ["MAX_CHANGED", "MAX_ENTRIES", "MAX_SECONDS", "Scan", "changed_since", "project_root"]

MAX_ENTRIES = 60_000
MAX_SECONDS = 1.0
#: More changed files than this in one walk: the rest are not digested (the walk is reported cut).
MAX_CHANGED = 500
_SKIPPED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".guard",
        ".cache",
        ".venv",
        "site-packages",
    }
)
#: Flags of a hash-based .pyc that Python runs without looking at its source (PEP 552: hash-based, check_source off).
_UNCHECKED = 0b01


class Scan(Record):
    """The files found changed (absolute paths), whether the walk covered the whole project, and why not."""

    __slots__ = ("changed", "complete", "why")

    def __init__(self, changed: list[str], complete: bool = True, why: str | None = None) -> None:
        self.changed, self.complete, self.why = changed, complete, why


def project_root(cwd: str) -> str:
    """The project a call's ``cwd`` belongs to: the nearest folder above it holding ``.git``, else ``cwd`` itself
    (never the root or the home folder, nor a folder above the home)."""
    cwd = os.path.realpath(cwd)
    home = os.path.realpath(os.path.expanduser("~"))
    folder = cwd
    while True:
        if folder == "/" or folder == home or home.startswith(folder.rstrip("/") + "/"):
            return cwd
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return cwd
        folder = parent


def _runs_unchecked(path: str) -> bool:
    """Whether a ``__pycache__`` file is a .pyc Python would run without checking its source."""
    if not path.endswith(".pyc"):
        return False
    try:
        with open(path, "rb") as fh:
            header = fh.read(8)
    except OSError:
        return True
    return len(header) < 8 or int.from_bytes(header[4:8], "little") == _UNCHECKED


def changed_since(root: str, since_ns: int, *, skip: frozenset[str] = frozenset(), links: bool = True) -> Scan:
    """Every file (or symlink) below ``root`` whose status changed after ``since_ns`` (``time.time_ns()``), but ``skip``.

    A link to a folder made since (``ln -s .cache/pkg pkg``) also brings every file below it, by the link's path: it
    makes them importable, and they may sit where the walk does not look. ``links`` False: not again inside one.
    """
    started = time.monotonic()
    changed: list[str] = []
    folders = [root]
    entries = 0
    while folders:
        folder = folders.pop()
        try:
            listing = os.scandir(folder)
        except OSError:
            continue
        with listing:
            for entry in listing:
                entries += 1
                if entries > MAX_ENTRIES or time.monotonic() - started > MAX_SECONDS:
                    return Scan(changed, False, f"the project is larger than guard walks ({entries:,} entries seen)")
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in _SKIPPED and not os.path.exists(os.path.join(entry.path, "pyvenv.cfg")):
                            folders.append(entry.path)
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if info.st_ctime_ns <= since_ns or entry.path in skip:
                    continue
                if os.path.basename(folder) == "__pycache__" and not _runs_unchecked(entry.path):
                    continue
                changed.append(entry.path)
                if links and entry.is_symlink() and entry.is_dir():
                    inside = changed_since(entry.path, -1, skip=skip, links=False)
                    changed += inside.changed
                    if not inside.complete:
                        return Scan(changed[:MAX_CHANGED], False, inside.why)
                if len(changed) > MAX_CHANGED:
                    return Scan(changed[:MAX_CHANGED], False, f"more than {MAX_CHANGED} files changed")
    return Scan(changed)
