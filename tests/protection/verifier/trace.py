"""strace's log read back: one :class:`Call` per system call, with the paths it names resolved.

The log comes from ``strace -f -y``: ``-y`` prints the path behind every file
descriptor (``AT_FDCWD</project>``, ``= 3</project/out.txt>``), which places a
relative path and names the file an ``ftruncate(3)`` changes. A call interrupted by
another process's (``<unfinished ...>`` … ``<... openat resumed>``) is joined back.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Call", "calls"]

_LINE = re.compile(r"^(\d+)\s+(\w+)\((.*)\)\s+=\s+(.*)$")
_ANNOTATED = re.compile(r"^(?:AT_FDCWD|-?\d+)<(.*)>$")
#: For each call, the positions of (directory fd, path) pairs, or of a lone path (directory None), that it acts on.
_AT = {
    "openat": [(0, 1)],
    "openat2": [(0, 1)],
    "unlinkat": [(0, 1)],
    "mkdirat": [(0, 1)],
    "mknodat": [(0, 1)],
    "fchmodat": [(0, 1)],
    "fchownat": [(0, 1)],
    "utimensat": [(0, 1)],
    "futimesat": [(0, 1)],
    "renameat": [(0, 1), (2, 3)],
    "renameat2": [(0, 1), (2, 3)],
    "linkat": [(0, 1), (2, 3)],
    "symlinkat": [(1, 2)],
    "execveat": [(0, 1)],
}
_PLAIN = {
    "open": [0],
    "creat": [0],
    "truncate": [0],
    "unlink": [0],
    "rename": [0, 1],
    "mkdir": [0],
    "rmdir": [0],
    "chdir": [0],
    "link": [0, 1],
    "symlink": [1],
    "chmod": [0],
    "chown": [0],
    "lchown": [0],
    "utime": [0],
    "utimes": [0],
    "mknod": [0],
    "setxattr": [0],
    "lsetxattr": [0],
    "removexattr": [0],
    "lremovexattr": [0],
    "execve": [0],
}
_BY_FD = frozenset({"ftruncate", "fchmod", "fchown", "fsetxattr", "fremovexattr"})


@dataclass(frozen=True)
class Call:
    """One system call: who made it, its name, its arguments as strace printed them, its result, the paths it acts on."""

    pid: int
    name: str
    args: tuple[str, ...]
    result: str
    paths: tuple[str, ...]
    text: str

    @property
    def ok(self) -> bool:
        return not self.result.startswith("-1")

    @property
    def error(self) -> str:
        """The errno name of a failed call (``ENOENT``), else ''."""
        return self.result.split()[1] if not self.ok and len(self.result.split()) > 1 else ""

    @property
    def opened(self) -> str | None:
        """The file a successful open gave a descriptor for (``= 3</path>``), symlinks resolved."""
        match = re.search(r"^\d+<(.*)>$", self.result.split(" ", 1)[0]) if self.ok else None
        return match.group(1) if match else None


def _split(args: str) -> tuple[str, ...]:
    """Top-level arguments: commas inside quotes, brackets, braces and ``<…>`` annotations do not split."""
    parts, depth, quoted, start, i = [], 0, False, 0, 0
    while i < len(args):
        c = args[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c in "[{(<":
            depth += 1
        elif c in "]})>":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(args[start:i].strip())
            start = i + 1
        i += 1
    parts.append(args[start:].strip())
    return tuple(parts)


def string(arg: str) -> str | None:
    """The text of a quoted argument (``"a\\nb"``), None for anything else (``NULL``, a number)."""
    if len(arg) < 2 or not arg.startswith('"'):
        return None
    body = arg[1 : arg.rfind('"')]
    return codecs.escape_decode(body.encode("latin-1"))[0].decode("latin-1")  # type: ignore[no-any-return]


def _paths(name: str, args: tuple[str, ...], cwd: str) -> tuple[str, ...]:
    found = []
    for folder_at, path_at in _AT.get(name, []):
        text = string(args[path_at]) if path_at < len(args) else None
        folder = _ANNOTATED.match(args[folder_at]) if folder_at < len(args) else None
        base = folder.group(1) if folder else cwd
        if text is not None:
            found.append(os.path.normpath(os.path.join(base, text)) if text else base)
    for path_at in _PLAIN.get(name, []):
        text = string(args[path_at]) if path_at < len(args) else None
        if text:
            found.append(os.path.normpath(os.path.join(cwd, text)))
    if name in _BY_FD and args:
        folder = _ANNOTATED.match(args[0])
        if folder:
            found.append(folder.group(1))
    return tuple(found)


def calls(log: str, cwd: str) -> Iterator[Call]:
    """The calls of a ``strace -f -y`` log, in order; ``cwd`` places a relative path before the log shows a process's folder."""
    pending: dict[str, str] = {}
    folders: dict[int, str] = {}
    for raw in log.splitlines():
        if raw.endswith("<unfinished ...>"):
            pid = raw.partition(" ")[0]
            pending[pid] = raw.removesuffix("<unfinished ...>").rstrip()
            continue
        resumed = re.match(r"^(\d+)\s+<\.\.\. \w+ resumed>(.*)$", raw)
        if resumed:
            raw = pending.pop(resumed.group(1), f"{resumed.group(1)} ?(") + resumed.group(2)
        match = _LINE.match(raw)
        if not match:
            continue
        pid, name, body, result = int(match.group(1)), match.group(2), match.group(3), match.group(4)
        args = _split(body)
        here = _ANNOTATED.match(args[0]) if args[0].startswith("AT_FDCWD<") else None
        if here:
            folders[pid] = here.group(1)
        call = Call(pid, name, args, result, _paths(name, args, folders.get(pid, cwd)), raw)
        yield call
        if name in ("chdir", "fchdir") and call.ok:  # mkdir -p makes each folder from inside the one before
            moved = _ANNOTATED.match(args[0]) if name == "fchdir" else None
            target = moved.group(1) if moved else (call.paths[0] if call.paths else None)
            if target:
                folders[pid] = target
