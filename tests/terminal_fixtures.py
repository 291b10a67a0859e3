"""Running a guard command at a terminal: a pseudo-terminal that is the process's controlling terminal, as a shell's is.

``guard trust`` asks on ``/dev/tty``; a process started with pipes (a tool call, CI)
has none. :func:`at_terminal` gives the child a session of its own whose
controlling terminal is a pty, answers the first ``[y/N]`` question and returns
the exit code and everything the child wrote to the terminal.
"""

from __future__ import annotations

import fcntl
import os
import select
import subprocess
import termios
import time
from collections.abc import Mapping
from pathlib import Path


def _take_terminal() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # stdin is the pty: make it this new session's controlling terminal


def at_terminal(argv: list[str], *, answer: str | None, cwd: Path, env: Mapping[str, str], timeout: float = 120.0) -> tuple[int, str]:
    """Run ``argv`` at a terminal; type ``answer`` at the first question (None: expect no question)."""
    master, slave = os.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=dict(env), start_new_session=True,
                            preexec_fn=_take_terminal, close_fds=True)
    os.close(slave)
    out, asked = b"", False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
                if b"[y/N]" in out and not asked:
                    assert answer is not None, f"unexpected question: {out.decode(errors='replace')}"
                    os.write(master, answer.encode() + b"\n")
                    asked = True
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=max(deadline - time.monotonic(), 1.0))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return code, out.decode("utf-8", "replace").replace("\r\n", "\n")
