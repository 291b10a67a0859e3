"""What ``guard hook`` does with its audit row once it has answered: hand it to a shipper, never wait for one.

A hook whose settings name an audit store or a collector checks two things
without a query: the store's back-off marker (its mtime is when the next try is
due after a failure; one ``stat``) and the log's ship lock (a shipper holds it
while it works; one ``flock`` probe). If neither says wait, it starts a shipper
(:mod:`guard.audit.shipping`) and exits: a fork when the process has no other
thread, else a fresh ``python -m guard.audit.shipping``. This module is what a
hook imports for that, so it stays small: the shipper's own modules load in the
shipper. Standard library only.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["busy_or_backing_off", "lock_path", "marker_path", "ship_after_exit", "target_names", "without_password"]


def target_names(settings: Any) -> list[str]:
    """The targets ``settings`` ship to, by the name their position is kept under (a URL's password left out)."""
    names = []
    if getattr(settings, "audit_url", None):
        names.append("postgres:" + without_password(settings.audit_url))
    if getattr(settings, "audit_otlp", None):
        names.append("otlp:" + without_password(settings.audit_otlp))
    return names


def without_password(url: str) -> str:
    """``url`` with any password left out (what messages and position names show): ``user:password@`` and libpq's ``?password=``."""
    url, question, query = url.partition("?")
    if question:
        kept = "&".join(part for part in query.split("&") if part.partition("=")[0] != "password")
        query, question = kept, "?" if kept else ""
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    return (f"{scheme}{sep}{credentials.split(':', 1)[0]}{at}{host}" if at else url) + question + query


def marker_path(path: Path) -> Path:
    """Its mtime is when the next attempt is due after a failure (absent: no back-off); a hook reads it with one stat."""
    return path.with_name(path.name + ".ship-after")


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".ship.lock")


def busy_or_backing_off(path: Path) -> bool:
    """What a hook checks before it forks: a stat and a lock probe, never a query."""
    try:
        if os.stat(marker_path(path)).st_mtime > time.time():
            return True
    except OSError:
        pass
    try:
        fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def ship_after_exit(settings: Any, audit_path: Path) -> None:
    """``guard hook``, its answer written: start a shipper for the log's unsent rows, unless one runs or the store backs off.

    The parent returns at once. A process with no other thread forks (its cost
    is the fork); one whose hooks left threads (a model client's) starts a fresh
    ``python -m guard.audit.shipping`` instead, the settings on its stdin (a URL's
    password stays out of its arguments), since a fork would inherit whatever
    lock those threads hold. The shipper owns none of the client's stdin, stdout
    or stderr and leaves the process group.
    """
    if not target_names(settings) or busy_or_backing_off(audit_path):
        return
    threading_module = sys.modules.get("threading")
    if hasattr(os, "fork") and (threading_module is None or threading_module.active_count() == 1):
        _fork(settings, audit_path)
    else:
        _spawn(settings, audit_path)


def _fork(settings: Any, audit_path: Path) -> None:
    if os.fork() != 0:
        return
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.setsid()
        from guard.audit.shipping import linger

        linger(audit_path, settings)
    except BaseException:  # nothing of the child's may surface anywhere: the rows stay queued for the next shipper
        pass
    finally:
        os._exit(0)  # not the parent's exit handlers


def _spawn(settings: Any, audit_path: Path) -> None:
    import json
    import subprocess

    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "guard.audit.shipping"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
        assert child.stdin is not None
        child.stdin.write(json.dumps({"path": str(audit_path), "settings": settings.to_dict()}).encode())
        child.stdin.close()
    except OSError:
        pass  # the rows wait in the local log for the next shipper
