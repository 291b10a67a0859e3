"""``guard serve`` writes its audit log off the event loop: a locked log delays no decision, and loses no row on exit."""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path

import pytest
from fixtures.processes import run_guard
from test_serve_process import ServeProcess, serve  # noqa: F401 (fixture)

from guard.server.client import send_event

LS = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}


def rows(path: Path) -> int:
    """Rows in the audit log; 0 while the service has not created it yet."""
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        try:
            return int(db.execute("SELECT count(*) FROM decisions").fetchone()[0])
        except sqlite3.OperationalError:  # created, not migrated yet
            return 0


def wait_for_rows(path: Path, count: int, timeout: float = 15.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and rows(path) < count:
        time.sleep(0.05)
    return rows(path)


def test_a_locked_audit_log_holds_up_no_decision_and_every_row_lands(serve: ServeProcess) -> None:
    log = serve.workdir / "audit.db"
    assert (send_event(serve.url, LS, timeout=10) or {}).get("decision") == "allow"
    assert wait_for_rows(log, 1) == 1
    holder = sqlite3.connect(log, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock (a long `guard log` export, a checkpoint)
    try:
        started = time.monotonic()
        for _ in range(3):
            assert (send_event(serve.url, LS, timeout=10) or {}).get("decision") == "allow"
        assert time.monotonic() - started < 2.0, "decisions waited for the audit log's lock"
    finally:
        holder.execute("COMMIT")
        holder.close()
    serve.proc.send_signal(signal.SIGTERM)
    serve.proc.wait(timeout=30)
    assert rows(log) == 4  # queued rows were written before the service left


@pytest.mark.slow
def test_the_services_batches_and_hook_processes_beside_it_chain_into_one_intact_log(serve: ServeProcess) -> None:
    """The batch writer and ``guard hook`` processes write one log at once: one chain, no gap, nothing unsealed."""
    import json
    import os
    import sys
    from concurrent.futures import ThreadPoolExecutor

    def via_service(n: int) -> None:
        assert (send_event(serve.url, {**LS, "tool_input": {"command": f"ls {n}"}}, timeout=20) or {}).get(
            "decision"
        ) == "allow"

    def via_hook(n: int) -> None:
        event = json.dumps({**LS, "tool_input": {"command": f"rm {n}"}})
        done = run_guard(
            ["hook"], serve.workdir, stdin=event, env={"PYTHONPATH": os.pathsep.join([str(serve.workdir), *sys.path])}
        )
        assert done.returncode == 0 and "deny" in done.stdout, done.stderr

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: via_service(n) if n % 3 else via_hook(n), range(45)))
    serve.proc.send_signal(signal.SIGTERM)  # drains the writer's queue
    serve.proc.wait(timeout=30)

    from guard.audit import AuditLog

    report = AuditLog(serve.workdir / "audit.db").verify()
    assert report.intact and report.chained == 45 and report.unchained == 0, report.problems
