"""The sandboxes lines run in: bubblewrap, the whole file system read-only but the world's copy, no network, traced by strace.

Each :class:`Sandbox` is one ``bwrap`` process running :mod:`.driver`: / read-only,
a private /tmp, /dev and /proc of its own, no network (``--unshare-net``), its own
pid namespace, every capability dropped, and a copy of the planted world bound
read-write at the world's own path (so the line sees the folders the prover was
told about). A :class:`Pool` runs one per core and feeds them lines from threads.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .world import World

__all__ = ["INSTALL", "SHELLS_APART", "Pool", "Run", "Sandbox", "missing", "shells"]

#: What installs the sandbox's programs (Debian): the line a skipped test prints.
INSTALL = "apt-get install -y bubblewrap strace"
_DRIVER = Path(__file__).with_name("driver.py")


@dataclass(frozen=True)
class Run:
    """What one line did: strace's log, the first 64 KiB of its output, the first 4 KiB of its errors, its exit status."""

    line: str
    trace: str
    stdout: str
    stderr: str
    rc: int | None
    timed_out: bool
    seconds: float


#: Between the traces of one line run by two shells (each trace's first exec is its shell's).
SHELLS_APART = "\n-- the same line, run by the next shell --\n"


def shells(line: str) -> list[str]:
    """The shells ``line`` is run by: bash, and POSIX sh (dash) when the line holds what sh reads otherwise (``$'…'``,
    braces). Codex runs a call in the shell the agent names, sh too; the prover's proof holds for both."""
    return ["/bin/bash", "/bin/sh"] if "$'" in line or "{" in line else ["/bin/bash"]


def missing() -> str | None:
    """Why lines cannot run here (a program is missing, or bubblewrap cannot make a sandbox), or None."""
    for program in ("bwrap", "strace"):
        if shutil.which(program) is None:
            return f"{program} is not installed ({INSTALL})"
    probe = subprocess.run(
        [
            "bwrap",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-net",
            "--unshare-pid",
            "strace",
            "-f",
            "-qq",
            "-o",
            "/dev/null",
            "true",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        return f"bubblewrap or strace cannot run here: {probe.stderr.strip()[:300]}"
    return None


class Sandbox:
    """One bubblewrap sandbox with its own copy of the world, running lines one after the other."""

    def __init__(self, world: World, number: int) -> None:
        self.world = world
        worker = world.base / f"worker-{number}"
        run_dir = world.base / f"run-{number}"
        shutil.rmtree(worker, ignore_errors=True)
        shutil.copytree(world.root, worker, symlinks=True)
        run_dir.mkdir(exist_ok=True)
        inside_run = world.base / "run"
        argv = [
            "bwrap",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--ro-bind",
            str(world.root),
            str(world.base / "pristine"),
            "--bind",
            str(worker),
            str(world.root),
            "--bind",
            str(run_dir),
            str(inside_run),
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--chdir",
            str(world.project),
            "python3",
            "-I",
            "-S",
            "-c",
            _DRIVER.read_text(),
            str(world.root),
            str(world.base / "pristine"),
            str(inside_run),
        ]
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1
        )

    def run(self, line: str, timeout: float) -> Run:
        """Run ``line`` with ``bash -c`` in the project folder, with the world's environment (and with ``sh -c`` too
        where sh may read it otherwise: :func:`shells`)."""
        stdin, stdout = self._pipes()
        request = {
            "line": line,
            "cwd": str(self.world.project),
            "env": self.world.env(),
            "timeout": timeout,
            "shells": shells(line),
            "apart": SHELLS_APART,
        }
        stdin.write(json.dumps(request) + "\n")
        stdin.flush()
        answer = stdout.readline()
        if not answer:
            raise RuntimeError(f"the sandbox's driver stopped (exit {self.process.wait()}) running {line!r}")
        data = json.loads(answer)
        return Run(line, data["trace"], data["stdout"], data["stderr"], data["rc"], data["timed_out"], data["seconds"])

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        assert self.process.stdin is not None and self.process.stdout is not None
        return self.process.stdin, self.process.stdout

    def close(self) -> None:
        stdin, _ = self._pipes()
        stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Pool:
    """``size`` sandboxes (one per core by default), each fed by a thread; results come back in any order."""

    def __init__(self, world: World, size: int | None = None, timeout: float = 1.0) -> None:
        self.timeout = timeout
        self.sandboxes = [Sandbox(world, n) for n in range(size or os.cpu_count() or 1)]

    def run(self, line: str) -> Run:
        """One line in the first sandbox (minimising runs candidates one at a time)."""
        return self.sandboxes[0].run(line, self.timeout)

    def run_all(self, lines: Iterable[str]) -> Iterator[Run]:
        """Every line, spread over the sandboxes; each result as soon as it is ready."""
        todo: queue.Queue[str | None] = queue.Queue(maxsize=4 * len(self.sandboxes))
        done: queue.Queue[Run | BaseException | None] = queue.Queue()

        def work(sandbox: Sandbox) -> None:
            try:
                while (line := todo.get()) is not None:
                    done.put(sandbox.run(line, self.timeout))
            except BaseException as exc:  # the consumer re-raises it
                done.put(exc)
            done.put(None)

        threads = [threading.Thread(target=work, args=(sandbox,), daemon=True) for sandbox in self.sandboxes]
        for thread in threads:
            thread.start()

        def feed() -> None:
            for line in lines:
                todo.put(line)
            for _ in threads:
                todo.put(None)

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        finished = 0
        while finished < len(threads):
            item = done.get()
            if item is None:
                finished += 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield item

    def close(self) -> None:
        for sandbox in self.sandboxes:
            sandbox.close()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
