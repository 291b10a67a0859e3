"""The file utilities the project-writes lane proves: exactly which files a ``mkdir``, ``touch``, ``cp``, ``mv``, ``rm`` or ``sed -i`` changes.

A rule about effects outside the project cannot be broken by a call that only changes plain files inside it, and
agents make most such changes with these programs (``rm reproduce_issue.py``, ``sed -i 's/a/b/' src/x.py``). The
prover (:func:`guard.protection.readonly.prove_script` with ``changes``) proves such a command only when this module
can name every file it writes, creates, removes or renames, and every folder it makes; the lane then checks each name
as it checks a redirection's target (inside the project, a plain name, not a file run unnamed …). So only the plainest
forms are proven, from an allowlist:

* the options that change nothing but the output or whether an existing file is replaced (``mkdir -p``/``-v``;
  ``rm -f``/``-v``; ``touch -a``/``-c``/``-m``/``-f``; ``cp``/``mv`` ``-f``/``-n``/``-v``), read with each program's
  whole option table (GNU coreutils 9.1, Debian 12: an abbreviation resolves as getopt resolves it); anything else is refused:
  ``rm -r`` (a whole tree), ``cp -r``, ``--target-directory``, ``--backup``, ``--suffix``, ``touch -r``/``-d``, ``mkdir -m`` …;
* operands named as written: no glob (the names it would match are not known);
* ``cp`` and ``mv`` with one source and a destination that is not a folder, or sources and a folder to put them in;
  a ``cp`` source must be a regular, non-executable file (``cp`` gives the copy its source's mode), an ``mv`` source a
  regular file, not a link (``mv`` of a folder moves a whole tree);
* ``sed -i`` with no backup suffix, no ``--follow-symlinks``, and a script :mod:`guard.protection.sed_script` proves
  (no ``w``, ``e``, ``r``: sed then writes a temporary file in the edited file's folder and renames it onto the file).

Standard library only: it runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from functools import cache

from guard.command_analysis.expansion import Field
from guard.core.record import FrozenRecord
from guard.protection.argv_model import NO, Table, getopt_long

__all__ = ["PROGRAMS", "Change", "change_of", "table"]


class Change(FrozenRecord):
    """What a proven file utility changes: ``written`` files (written, created, removed or renamed, as typed), ``made``
    folders, and ``read`` files (a copy's sources)."""

    __slots__ = ("written", "made", "read")
    written: tuple[str, ...]
    made: tuple[str, ...]
    read: tuple[str, ...]

    def __init__(self, written: tuple[str, ...] = (), made: tuple[str, ...] = (), read: tuple[str, ...] = ()) -> None:
        self._assign(locals())


#: Each program's option string and long options (coreutils 9.1's own, checked against the installed binaries by
#: tests/protection/test_option_tables.py), and the option keys that are proven.
_OPTIONS = {
    "mkdir": ("pm:vZ", "context==/Z mode=/m parents/p verbose/v help/HELP version/VERSION", "pv"),
    "rm": (
        "dfirvIR",
        "force/f interactive==/INTERACTIVE one-file-system/ONE_FS no-preserve-root/NO_PRESERVE_ROOT "
        "preserve-root==/PRESERVE_ROOT -presume-input-tty/PRESUME recursive/r dir/d verbose/v help/HELP version/VERSION",
        "fv",
    ),
    "touch": (
        "acd:fhmr:t:",
        "time=/TIME no-create/c date=/d reference=/r no-dereference/h help/HELP version/VERSION",
        "acmf",
    ),
    "cp": (
        "abdfHilLnprst:uvxPRS:TZ",
        "archive/a attributes-only/ATTRIBUTES_ONLY backup==/BACKUP copy-contents/COPY_CONTENTS "
        "dereference/L force/f interactive/i link/l no-clobber/n no-dereference/P no-preserve=/NO_PRESERVE "
        "no-target-directory/T one-file-system/x parents/PARENTS path/PARENTS preserve==/PRESERVE recursive/R "
        "reflink==/REFLINK remove-destination/REMOVE_DESTINATION sparse=/SPARSE strip-trailing-slashes/STRIP "
        "symbolic-link/s suffix=/S target-directory=/t update/u verbose/v context==/Z help/HELP version/VERSION",
        "fnv",
    ),
    "mv": (
        "bfint:uvS:TZ",
        "backup==/BACKUP context/Z force/f interactive/i no-clobber/n no-target-directory/T "
        "strip-trailing-slashes/STRIP suffix=/S target-directory=/t update/u verbose/v help/HELP version/VERSION",
        "fnv",
    ),
}
#: The programs :func:`change_of` proves (sed too, with ``-i``).
PROGRAMS = frozenset(_OPTIONS)


@cache
def table(name: str) -> Table:
    """``name``'s getopt table."""
    from guard.protection.reading_programs import option_table

    short, longs, _ = _OPTIONS[name]
    return option_table(short, longs)


def change_of(name: str, args: Sequence[Field], cwd: str) -> Change | str | None:
    """What ``name`` run with ``args`` in ``cwd`` changes, why it is not proven, or None when it is not a file utility this
    module proves (``sed`` without ``-i`` is a reading program)."""
    if name == "sed":
        return _sed_in_place(args)
    if name not in _OPTIONS:
        return None
    parsed = getopt_long(table(name), args)
    if parsed.problem:
        return parsed.problem
    allowed = _OPTIONS[name][2]
    for use in parsed.uses:
        if use.option.key not in allowed or use.option.arg != NO:
            return f"{use.spelled} is not proven"
    operands = [field.text for field in parsed.operands]
    if any(field.pattern for field in parsed.operands) or any(not text for text in operands):
        return "an operand is a glob or empty: the files it names are not known"
    if not operands:
        return "no operand"
    if name == "mkdir":
        if "p" in parsed.keys():
            return Change(made=tuple(dict.fromkeys(p for text in operands for p in _prefixes(text))))
        return Change(made=tuple(operands))
    if name in ("rm", "touch"):
        return Change(written=tuple(operands))
    return _copy_or_move(name, operands, cwd)


def _prefixes(text: str) -> list[str]:
    """The folders ``mkdir -p`` makes (or finds already there) for ``text``: each leading part of it, in order."""
    parts = [part for part in text.split("/") if part]
    lead = "/" if text.startswith("/") else ""
    return [lead + "/".join(parts[: k + 1]) for k in range(len(parts))]


def _copy_or_move(name: str, operands: list[str], cwd: str) -> Change | str:
    """``cp``/``mv``: the destination, or each source's name inside a destination folder."""
    if len(operands) < 2:
        return f"{name} with one operand"
    *sources, dest = operands
    if any(src.endswith("/") for src in sources):
        return "a source ends with /"
    into = os.path.isdir(os.path.join(cwd, dest))
    if not into and (len(sources) > 1 or dest.endswith("/")):
        return f"{dest!r} is not a folder"
    for src in sources:
        try:
            info = (os.stat if name == "cp" else os.lstat)(os.path.join(cwd, src))
        except OSError:
            return f"{src!r} cannot be looked at"
        if not stat.S_ISREG(info.st_mode):
            return f"{src!r} is not a regular file"
        if name == "cp" and info.st_mode & 0o111:
            return f"{src!r} is executable: the copy would be too"
    inside = tuple(os.path.join(dest, os.path.basename(src)) for src in sources)
    # a destination that is no folder now may be one when it runs (``mkdir d && mv x d``): both names are claimed
    targets = inside if into else (dest, *inside)
    if name == "cp":
        return Change(written=targets, read=tuple(sources))
    return Change(written=(*sources, *targets))


def _sed_in_place(args: Sequence[Field]) -> Change | str | None:
    """``sed -i SCRIPT FILE…``: the files it rewrites, or None for a sed that only reads."""
    from guard.protection.reading_programs import SCRIPT, VALUE, program

    prog = program("sed")
    assert prog is not None
    parsed = prog.parse(args)
    if parsed.problem or "i" not in parsed.keys():
        return None  # a read (proven or refused as one)
    for use in parsed.uses:
        key = use.option.key
        if key == "i":
            if use.value is not None:
                return f"{use.spelled} writes a backup copy named with the suffix {use.value!r}"
            continue
        if key == "F":
            return "sed --follow-symlinks writes the file a link points to"
        role = prog.roles.get(key, "flag" if use.option.arg == NO else None)
        if role not in ("flag", VALUE, SCRIPT):
            return role or f"{use.spelled} is not modelled"
        if use.word.pattern or (use.detached is not None and use.detached.pattern):
            return f"{use.word.text!r}: a glob would make other options of the names it matches"
    if any(field.pattern or not field.text for field in parsed.operands):
        return "an operand is a glob or empty: the files it names are not known"
    problem = prog.check(parsed) if prog.check is not None else None
    if problem:
        return problem
    given = any(use.option.key == "e" for use in parsed.uses)
    files = tuple(field.text for field in parsed.operands[0 if given else 1 :])
    return Change(written=files) if files else "sed -i with no file"
