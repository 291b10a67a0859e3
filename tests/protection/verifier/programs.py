"""The programs the verifier generates lines for: the prover's allowlist, found by asking the prover, plus today's list.

The allowlist is found from the outside, so the verifier works against any prover on
the branch it runs on: every program on PATH, every bash builtin and every git
subcommand is offered to the prover alone and with an operand; what it proves is on
the allowlist. The list the prover had when the verifier was written is always
included too, so a program that leaves the allowlist is still tried (and must then
not be proven).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from functools import lru_cache

__all__ = ["BUILTINS", "KNOWN", "allowed_binaries", "discover"]

#: The prover's allowlist on main when the verifier was written (issue 35): programs, and git's reading subcommands.
KNOWN: tuple[tuple[str, ...], ...] = tuple(
    (name,)
    for name in (
        "cat head tail wc ls grep rg sort uniq cut tr file stat diff echo printf pwd true false : cd basename dirname realpath "
        "readlink which whoami id uname nproc date seq nl od hexdump hd xxd md5sum sha1sum sha256sum tac rev fold expand column "
        "comm join paste strings du df tree test [ env printenv hostname jq sed type find git"
    ).split()
) + tuple(("git", sub) for sub in "log show diff status branch rev-parse ls-files blame remote shortlog grep".split())
#: bash builtins (``compgen -b``) and the keywords that start a command: offered to the prover like programs.
BUILTINS = tuple(
    "alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs disown echo enable eval exec "
    "exit export false fc fg getopts hash help history jobs kill let local logout mapfile popd printf pushd pwd read readarray "
    "readonly return set shift shopt source suspend test times trap true type typeset ulimit umask unalias unset wait : . [ "
    "time coproc function select".split()
)
Prove = Callable[[str], bool]


def _candidates(path: str) -> list[str]:
    names = set(BUILTINS)
    for folder in path.split(":"):
        try:
            names.update(entry for entry in os.listdir(folder) if os.access(os.path.join(folder, entry), os.X_OK))
        except OSError:
            continue
    return sorted(names)


def _git_subcommands() -> list[str]:
    done = subprocess.run(["git", "help", "-a", "--no-aliases"], capture_output=True, text=True, check=False)
    return sorted({line.split()[0] for line in done.stdout.splitlines() if line.startswith("   ") and line.split()})


def discover(proves: Prove, path: str) -> tuple[tuple[str, ...], ...]:
    """The programs ``proves`` accepts, alone or with one operand (``cat``, ``git log``), plus :data:`KNOWN` and the file
    utilities the project-writes lane proves; sorted."""
    from .generator import CHANGERS

    found = set(KNOWN) | set(CHANGERS)
    for name in _candidates(path):
        if proves(name) or proves(f"{name} a.txt"):
            found.add((name,))
    if ("git",) in found or any(p[0] == "git" for p in KNOWN):
        found.update(("git", sub) for sub in _git_subcommands() if proves(f"git {sub}") or proves(f"git {sub} HEAD"))
    return tuple(sorted(found))


@lru_cache(maxsize=4)
def _inode_set(names: tuple[str, ...], path: str) -> frozenset[tuple[int, int]]:
    found = set()
    for name in names:
        where = shutil.which(name, path=path)
        if where:
            info = os.stat(where)
            found.add((info.st_dev, info.st_ino))
    return frozenset(found)


def allowed_binaries(programs: tuple[tuple[str, ...], ...], env: Mapping[str, str]) -> frozenset[tuple[int, int]]:
    """The (device, inode) of each allowlisted program's binary: an exec of any name of one (``hd`` is ``hexdump``,
    ``/usr/lib/git-core/git`` is ``git``) is the program the prover allowed."""
    return _inode_set(tuple(sorted({p[0] for p in programs})), env.get("PATH", os.defpath))
