"""Reading a file the agent may have planted, without letting it stall the hook: regular files only, never blocking, bounded.

A fifo in the place of ``package.json``, a patch file or a ``.pth`` would hang a plain ``open().read()`` until the
client's deadline; ``/dev/zero`` behind a symlink would never end. The file is opened without blocking and read only if
it is a regular file, at most ``limit`` bytes (one more tells the caller it was longer). Standard library only.
"""

from __future__ import annotations

import os
import stat

__all__ = ["read_bytes", "read_text"]


def read_bytes(path: str, limit: int) -> bytes | None:
    """Up to ``limit + 1`` bytes of the regular file at ``path``; None for anything else, or a file that cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_text(path: str, limit: int) -> str | None:
    """:func:`read_bytes` decoded as UTF-8 (undecodable bytes replaced)."""
    data = read_bytes(path, limit)
    return None if data is None else data.decode("utf-8", "replace")
