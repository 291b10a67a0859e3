"""The oracle: what a line really did that its proof says it would not, with the system calls that show it.

A line proven to only read may not write, create, remove, rename, truncate or change
any file, run a program that is not on the allowlist, open the network, or read
guard's secret; a line proven to write only its ``written`` files (and make its ``made``
folders) may write, create, remove or rename those (named as the caller reads them: relative to
the working directory) and nothing else.
Attempts count as much as successes: the sandbox makes / read-only, so ``sort -o /etc/x``
fails there with EROFS but would write on the agent's machine.

What is not a change: opening a terminal or a standard stream, a temporary file a
program creates with ``O_EXCL`` in /tmp and removes before it exits (``tac`` reading a
pipe, a long here-document), git's own refresh of its index under ``index.lock``, and ``sed -i``'s
own temporary file: ``sedXXXXXX``, created with ``O_EXCL`` in the folder of a file the line may
write, then renamed onto such a file or removed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .sandbox import SHELLS_APART, Run
from .trace import Call, calls
from .world import ENV_CANARY, SECRET_CANARY, World

__all__ = ["DELETES", "ENVIRONMENT", "NETWORK", "RUNS", "SECRET", "WRITES", "Finding", "findings"]

WRITES, DELETES, RUNS, NETWORK, SECRET, ENVIRONMENT = (
    "writes",
    "deletes",
    "runs a program",
    "network",
    "reads the secret",
    "prints the environment",
)
_WRITE_FLAGS = re.compile(r"\bO_(?:WRONLY|RDWR|CREAT|TRUNC|APPEND)\b")
_DELETING = frozenset({"unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2"})
_CHANGING = frozenset(
    {
        "creat",
        "truncate",
        "ftruncate",
        "mkdir",
        "mkdirat",
        "link",
        "linkat",
        "symlink",
        "symlinkat",
        "chmod",
        "fchmod",
        "fchmodat",
        "chown",
        "fchown",
        "lchown",
        "fchownat",
        "utime",
        "utimes",
        "utimensat",
        "futimesat",
        "mknod",
        "mknodat",
        "setxattr",
        "lsetxattr",
        "fsetxattr",
        "removexattr",
        "lremovexattr",
        "fremovexattr",
    }
)
_STREAMS = ("/dev/null", "/dev/tty", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/zero", "/dev/full")
_STREAM_PREFIXES = ("/dev/fd/", "/proc/self/fd/", "/dev/pts/", "pipe:", "socket:", "/proc/thread-self/fd/")
#: Local sockets a C library talks to on its own (name service cache): not the network.
_LOCAL_SERVICES = ("/var/run/nscd/socket", "/run/nscd/socket")


@dataclass(frozen=True)
class Finding:
    """One thing the line did that its proof rules out, and the evidence (a system call as strace logged it, or output)."""

    effect: str
    evidence: str


def _stream(path: str) -> bool:
    return path in _STREAMS or path.startswith(_STREAM_PREFIXES) or re.match(r"^/proc/\d+/fd/", path) is not None


def _temporary(log: list[Call]) -> set[str]:
    """Files created with O_EXCL in /tmp and removed again by the same line: a program's scratch space."""
    created = {
        c.paths[0]
        for c in log
        if c.name.startswith("open") and c.paths and "O_EXCL" in c.text and c.paths[0].startswith("/tmp/")
    }
    removed = {p for c in log if c.name in ("unlink", "unlinkat") and c.ok for p in c.paths}
    return created & removed


def _sed_temporary(log: list[Call], may_write: set[str]) -> set[str]:
    """``sed -i``'s temporary files: ``sedXXXXXX`` created with O_EXCL beside a file the line may write, then renamed onto
    one or removed, or not created at all (nothing else is accepted: a file of that name elsewhere, or left behind, is a
    write like any other)."""
    folders = {os.path.dirname(path) for path in may_write}
    attempts = [
        c
        for c in log
        if c.name.startswith("open")
        and c.paths
        and "O_EXCL" in c.text
        and re.fullmatch(r"sed[A-Za-z0-9]{6}", os.path.basename(c.paths[0]))
        and os.path.dirname(c.paths[0]) in folders
    ]
    created = {c.paths[0] for c in attempts if c.ok}
    settled = {
        c.paths[0]
        for c in log
        if c.ok
        and c.paths
        and (
            (c.name.startswith("rename") and len(c.paths) == 2 and c.paths[1] in may_write)
            or c.name in ("unlink", "unlinkat")
        )
    }
    return (created & settled) | {c.paths[0] for c in attempts if not c.ok}


def _no_replace(call: Call, may_write: set[str]) -> bool:
    """``mv``'s first try, onto the destination folder itself with RENAME_NOREPLACE: it fails (EEXIST, or EXDEV across the
    sandbox's mounts) and could not have replaced anything on the agent's machine either, the folder being there."""
    return (
        call.name == "renameat2"
        and "RENAME_NOREPLACE" in call.text
        and not call.ok
        and len(call.paths) == 2
        and call.paths[0] in may_write
        and os.path.isdir(call.paths[1])
    )


def _git_index(call: Call, world: World, git: bool) -> bool:
    """git refreshing its index: ``.git/index.lock`` created exclusively, renamed over ``.git/index`` or removed."""
    if not git:
        return False
    lock, index = str(world.project / ".git" / "index.lock"), str(world.project / ".git" / "index")
    return bool(call.paths) and set(call.paths) <= {lock, index} and lock in call.paths


def _runs(call: Call, allowed: frozenset[tuple[int, int]]) -> bool:
    if call.error == "ENOENT" or not call.paths:
        return False  # a search along PATH: the next try is the one that runs
    try:
        info = os.stat(call.paths[-1])
    except OSError:
        return True
    return (info.st_dev, info.st_ino) not in allowed


def _network(call: Call) -> bool:
    if call.name not in ("connect", "bind") or len(call.args) < 2:
        return False
    address = call.args[1]
    if "AF_UNIX" in address:
        return not any(service in address for service in _LOCAL_SERVICES)
    return "AF_NETLINK" not in address


def _secret(path: str, call: Call, world: World) -> bool:
    """Whether ``call`` opened a file in guard's secret folder (one that is not there was not read)."""
    folder = str(world.secret.parent)
    return path.startswith(folder + "/") and call.ok and "O_DIRECTORY" not in call.text


def _canaries(run: Run) -> Iterable[Finding]:
    for effect, canary in ((SECRET, SECRET_CANARY), (ENVIRONMENT, ENV_CANARY)):
        for name, output in (("stdout", run.stdout), ("stderr", run.stderr)):
            at = output.find(canary)
            if at >= 0:
                yield Finding(effect, f"{name}: …{output[max(0, at - 60) : at + len(canary) + 20]!r}…")
                break


def findings(
    run: Run,
    world: World,
    allowed: frozenset[tuple[int, int]],
    written: tuple[str, ...] | None = None,
    made: tuple[str, ...] = (),
) -> list[Finding]:
    """What ``run`` did beyond its proof. ``written`` None: it was proven to only read; else the files it may write (and
    ``made``, the folders it may make)."""
    segments = [list(calls(trace, str(world.project))) for trace in run.trace.split(SHELLS_APART)]
    log = [call for segment in segments for call in segment]
    may_write = {os.path.normpath(os.path.join(world.project, w)) for w in (*(written or ()), *made)}
    temporary = _temporary(log) | _sed_temporary(log, may_write)
    git = any(c.name == "execve" and c.ok and c.paths and os.path.basename(c.paths[0]) == "git" for c in log)
    found: list[Finding] = []
    shells = {id(next((c for c in segment if c.name == "execve"), None)) for segment in segments}  # each run's shell
    for call in log:
        effect = None
        if call.name in ("execve", "execveat"):
            effect = RUNS if id(call) not in shells and _runs(call, allowed) else None
        elif call.name.startswith("open") and call.paths:
            target = call.opened or call.paths[0]
            if any(_secret(p, call, world) for p in {call.paths[0], target}):
                effect = SECRET
            elif _WRITE_FLAGS.search(call.text) and not (_stream(call.paths[0]) or _stream(target)):
                allowed_here = (
                    target in may_write
                    or call.paths[0] in may_write
                    or target in temporary
                    or _git_index(call, world, git)
                )
                effect = None if allowed_here else WRITES
        elif call.name in _DELETING or call.name in _CHANGING:
            paths = [p for p in call.paths if not _stream(p)]
            if paths and not (
                set(paths) <= temporary | may_write or _git_index(call, world, git) or _no_replace(call, may_write)
            ):
                effect = DELETES if call.name in _DELETING else WRITES
        elif _network(call):
            effect = NETWORK
        if effect:
            found.append(Finding(effect, call.text[:400]))
    found += _canaries(run)
    return found
