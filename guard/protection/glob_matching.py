"""What a glob may match on disk, as bash may match it under any of its glob options, and as the kernel finds it.

:mod:`guard.protection.naming` reads a word that may be a pattern (``../g*``, ``@(guard).yaml``, ``**/settings.json``,
``[[:alpha:]]uard.yaml``) as every path it may match: an extglob group as ``*`` (a line may ``shopt -s extglob``
itself), bash's bracket expressions as :mod:`fnmatch` reads them, dotfiles, either case, and ``**`` at any depth through
links. Each folder listed is spent from the call's :class:`~guard.protection.naming.Budget`. Loaded only for a word that
may be a pattern. Standard library only: it runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

import fnmatch
import os
import re

from guard.protection.naming import LIMITS, MAGIC, Budget, TooLarge

__all__ = ["as_patterns", "glob_matches", "matches"]

#: An extglob group (``@(…)``, ``!(…)``, ``+(…)``, ``*(…)``, ``?(…)``), which bash reads under ``shopt -s extglob``: a line
#: may set that option itself, on an earlier line, so every group is read as a glob.
_EXTGLOB = re.compile(r"[?*+@!]\((?:[^()]|\([^()]*\))*\)")
#: A bracket expression as bash writes it: ``[^…]`` (as ``[!…]``), a first ``]`` among its characters, a class ``[:alpha:]``.
_BRACKET = re.compile(r"\[[!^]?\]?(?:\[[:=.][^]]*[:=.]\]|[^]])*\]")
#: A path part bash (``shopt -s globstar``) or zsh (``**``, ``***``) reads as any number of folders, through links too.
_RECURSIVE = re.compile(r"\*{2,}")


def as_patterns(full: str, joined: str) -> tuple[str, str]:
    """A pattern's normalised (``full``) and written (``joined``) forms as :func:`matches` reads them: an extglob group
    in ``full`` as ``*`` (it matches no more than ``*`` does in the same place), bracket expressions as :mod:`fnmatch`
    reads them."""
    if "(" in full:
        full = _EXTGLOB.sub("*", full)
    return _fnmatch_brackets(full), _fnmatch_brackets(joined)


def matches(full: str, joined: str, physical: bool, budget: Budget) -> list[str]:
    """Every path the pattern ``full`` may match, and, when its written form climbs out of a folder with ``..``
    (``physical``), every one ``joined`` may match: a folder of the written path is listed as the kernel finds it."""
    if "(" in joined:
        joined = _EXTGLOB.sub("*", joined)
    return _glob(full, budget) + (_glob(joined, budget) if physical else [])


def _fnmatch_brackets(pattern: str) -> str:
    """``pattern`` with its bracket expressions as :mod:`fnmatch` reads them (:func:`_fnmatch_bracket`)."""
    return _BRACKET.sub(_fnmatch_bracket, pattern) if "[" in pattern else pattern


def _fnmatch_bracket(found: re.Match[str]) -> str:
    """A bracket expression fnmatch reads as bash does: ``[^x]`` (bash's and zsh's "not x") as ``[!x]``; one holding a
    class (``[[:alpha:]]``, which fnmatch reads as other characters) as ``?``, any character."""
    bracket = found.group(0)
    if any(opener in bracket[1:] for opener in ("[:", "[=", "[.")):
        return "?"
    return "[!" + bracket[2:] if bracket.startswith("[^") else bracket


def glob_matches(pattern: str) -> list[str]:
    """Every path the absolute glob ``pattern`` may match, as :func:`_glob` matches them (an extglob group as ``*``).
    Raises :class:`TooLarge` past the budget."""
    return _glob(_EXTGLOB.sub("*", pattern), Budget())


def _glob(pattern: str, budget: Budget) -> list[str]:
    """Every path ``pattern`` may match on disk, whatever the shell's glob options: dotfiles (``dotglob``), either case
    (``nocaseglob``), and any depth through links for ``**`` (``globstar``; zsh's ``***``). A line may set each option
    itself, so the matches are a superset of bash's. Past the budget, :class:`TooLarge`: a link below the folders listed
    could lead anywhere, so what is not listed is not known."""
    current = ["/"]
    for part in pattern.split("/")[1:]:
        if not part:
            continue
        if not (MAGIC & set(part)):
            current = [os.path.join(c, part) for c in current]
            continue
        if _RECURSIVE.fullmatch(part):
            current = _below(current, budget)
            continue
        folded = part.lower()
        current = [
            os.path.join(folder, name)
            for folder in current
            for name in _listed(folder, budget)
            if fnmatch.fnmatchcase(name.lower(), folded)
        ]
        if not current:
            return []
    return [c for c in current if os.path.lexists(c)]


def _listed(folder: str, budget: Budget) -> list[str]:
    """The names in ``folder`` (none when it cannot be listed), each spent from the budget."""
    try:
        with os.scandir(folder) as entries:
            names = [entry.name for entry in entries]
    except (OSError, ValueError):
        return []
    budget.entries -= len(names)
    if budget.entries < 0:
        raise TooLarge(f"its globs list more than {LIMITS['entries']} names on disk")
    return names


def _below(folders: list[str], budget: Budget) -> list[str]:
    """``folders`` and every folder below them, following links (each real folder once)."""
    found: list[str] = []
    seen: set[str] = set()
    queue = list(folders)
    while queue:
        folder = queue.pop()
        real = os.path.realpath(folder)
        if real in seen:
            continue
        seen.add(real)
        found.append(folder)
        queue.extend(path for name in _listed(folder, budget) if os.path.isdir(path := os.path.join(folder, name)))
    return found
