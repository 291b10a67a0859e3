"""``guard doctor``'s live check of a client's sandbox: a write into guard's store and a read of its secret, tried through it.

Settings can say ``sandbox.enabled`` on a machine where the sandbox cannot start
(no user namespaces in a container, a missing tool). So doctor runs a small
script through the sandbox: it must fail to write into guard's state folder
and to read the secret, and succeed in writing a scratch file, which shows the
sandbox ran at all. Codex has a command for exactly this (``codex sandbox``,
with the project's config); for Claude Code, which has none, bubblewrap is run
the way Claude Code's sandbox runs it on Linux: the root read-only, a working
folder writable, guard's paths mounted read-only and the secret hidden.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from guard.core.settings import CODEX_BIN_ENV, from_env, user_dir
from guard.sandbox.paths import ProtectedPaths

__all__ = ["TIMEOUT_S", "probe"]

TIMEOUT_S = 60.0
_SCRIPT = (
    'if touch "$1/.guard-doctor-probe" 2>/dev/null; then rm -f "$1/.guard-doctor-probe"; echo "wrote-store"; fi; '
    'if cat "$2" >/dev/null 2>&1; then echo "read-secret"; fi; '
    'if touch "$3/.guard-doctor-probe" 2>/dev/null; then rm -f "$3/.guard-doctor-probe"; echo "wrote-scratch"; fi'
)


def _store() -> Path:
    store = user_dir("state")
    store.mkdir(parents=True, exist_ok=True)
    return store


def _bwrap(paths: ProtectedPaths, scratch: Path) -> list[str] | str:
    """bubblewrap set up as Claude Code's Linux sandbox, or why it cannot be run here."""
    if not sys.platform.startswith("linux"):
        return f"not tried on {sys.platform} (the check runs bubblewrap, Linux only)"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    argv = [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-pid",
        "--die-with-parent",
        "--new-session",
        "--bind",
        str(scratch),
        str(scratch),
    ]
    for path in paths.write_roots():
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    for path in paths.read_roots():
        if os.path.isdir(path):
            argv += ["--tmpfs", path, "--remount-ro", path]
        elif os.path.exists(path):
            argv += ["--ro-bind", "/dev/null", path]
    return argv


def _codex() -> list[str] | str:
    codex = from_env(CODEX_BIN_ENV) or shutil.which("codex")
    if codex is None:
        return "not tried (no codex on PATH)"
    return [codex, "sandbox", "--"]  # run in the project: its config is the one Codex applies there


def probe(client: str, paths: ProtectedPaths, *, project_dir: Path) -> tuple[bool | None, str]:
    """Try it: (True, what held) when the sandbox kept the store and the secret out, (False, what got through), (None, why not tried)."""
    store = _store()
    secret = next((p for p in paths.read if os.path.isfile(p)), None) or "/nonexistent"
    with tempfile.TemporaryDirectory(prefix="guard-doctor-", dir=project_dir if client == "codex" else None) as scratch:
        command = _codex() if client == "codex" else _bwrap(paths, Path(scratch))
        if isinstance(command, str):
            return None, command
        try:
            done = subprocess.run(
                [*command, "/bin/sh", "-c", _SCRIPT, "sh", str(store), secret, scratch],
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                stdin=subprocess.DEVNULL,
                cwd=project_dir,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"the sandbox did not run: {exc}"
    said = set(done.stdout.split())
    if "wrote-scratch" not in said:
        return (
            False,
            f"the sandbox did not start here: {(done.stderr or done.stdout).strip()[-300:] or f'exit {done.returncode}'}",
        )
    leaks = [
        what
        for what, mark in ((f"wrote into {store}", "wrote-store"), (f"read {secret}", "read-secret"))
        if mark in said
    ]
    if leaks:
        return False, f"a command in the sandbox {' and '.join(leaks)}"
    read = f" nor read {secret}" if secret != "/nonexistent" else ""
    return True, f"a command in the sandbox could not write into {store}{read}, and could write in its working folder"
