"""Files a program writes under a name it makes from one it is given: a backup's, a compressor's, split's pieces.

``cp -b -S .yaml x ../guard`` renames ``../guard`` to ``../guard.yaml``; ``sed -i.json … .claude/settings`` keeps a
copy of ``.claude/settings`` as ``.claude/settings.json``; ``gunzip -f ../guard.yaml.gz`` writes ``../guard.yaml``;
``split -a1 --additional-suffix=.yaml x ../guar`` writes ``../guard.yaml`` as its fourth piece. No word of these names
guard's file, so each path such a program names also stands for the names it may make of it: any name that starts
with it (the pattern ``PATH*``: a suffix added) and each shorter one (a suffix taken off). A backup suffix holding
``*`` (GNU sed) is a name of its own, with the file's name for the ``*`` (a glob's: any name). Options are read loosely: a word that only
looks like one counts, at the cost of a name that is not guard's. Standard library only: loaded by
:mod:`guard.protection.naming` for these programs alone.
"""

from __future__ import annotations

import os
from typing import Literal

__all__ = ["Kind", "derived"]

#: How a program makes names: coreutils' backups (``-b``, ``-S``, ``--backup``, ``--suffix``), sed's in-place backup
#: (``-iSUFFIX``, ``--in-place=SUFFIX``), split's and csplit's pieces, a compressor's output (suffix added or taken off).
Kind = Literal["backup", "in_place", "pieces", "compress"]
#: The most named paths whose derived names are added (each adds one pattern, and up to 255 shorter names).
MAX_PATHS = 64


def derived(kind: Kind, args: list[str], paths: set[str], cwd: str, *, globbed: bool) -> tuple[set[str], set[str]]:
    """(paths, patterns) the program of ``kind`` with ``args`` may write besides ``paths``, the absolute paths it names
    (``globbed``: and globs)."""
    suffixes = _in_place_suffixes(args) if kind == "in_place" else []
    if suffixes is None or (kind == "backup" and not _backs_up(args)):
        return set(), set()
    replaces_folders = kind in ("backup", "in_place") and any(_short(arg, "T") for arg in args)
    files = [p for p in sorted(paths)[:MAX_PATHS] if replaces_folders or not os.path.isdir(p)]
    patterns = {_glob_escape(path) + "*" for path in files}
    found: set[str] = set()
    if kind == "compress":  # gunzip a.gz, gzip -d -S x a.yamlx: the name with its end cut off
        found = {p[:k] for p in files for k in range(len(os.path.dirname(p)) + 2, len(p)) if p[k - 1] != "/"}
    for suffix in (s for s in suffixes if "*" in s):  # sed -i'../guard.yam*' l: the file's name in place of each *
        for path in files:
            name = suffix.replace("*", os.path.basename(path))
            found |= {os.path.normpath(os.path.join(folder, name)) for folder in (cwd, os.path.dirname(path))}
        if globbed:  # sed -i'../guard.yam*' 1p ?: the file's name is any the glob matches
            pattern = _glob_escape(suffix).replace("[*]", "*")
            patterns |= {
                os.path.normpath(os.path.join(folder, pattern)) for folder in {cwd, *map(os.path.dirname, files)}
            }
    return found, patterns


def _short(arg: str, letter: str) -> bool:
    """Whether ``arg`` is a cluster of short options holding ``letter`` (read loosely: a value's letters count too)."""
    return arg.startswith("-") and not arg.startswith("--") and letter in arg[1:]


def _backs_up(args: list[str]) -> bool:
    """Whether cp, mv, ln or install make backups: ``-b``, ``-S SUFFIX`` (which implies it), ``--backup``, ``--suffix``."""
    return any(_short(arg, "b") or _short(arg, "S") or arg.startswith(("--b", "--su")) for arg in args)


def _in_place_suffixes(args: list[str]) -> list[str] | None:
    """The backup suffixes of ``sed -i`` (``""`` when it keeps none), or None when sed does not edit in place."""
    suffixes: list[str] | None = None
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--i"):
            suffixes = (suffixes or []) + [arg.partition("=")[2]]
        elif _short(arg, "i"):
            suffixes = (suffixes or []) + [arg[arg.index("i") + 1 :]]
    return suffixes


def _glob_escape(path: str) -> str:
    """``path`` as a glob matching only itself (fnmatch has no backslash escape: each special character in brackets)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in path)
