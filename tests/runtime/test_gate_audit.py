"""A long-lived gate's audit rows, written by a thread: every row on disk when the gate closes or the process exits, chained.

An SDK's gate decides many events; from its second decision on its rows go to
one writer thread (the one ``guard serve`` uses), so a cache hit does not wait
for the audit transaction. What a user relies on: ``guard log`` shows every
decision and ``guard log verify`` finds the chain intact, whether the gate was
closed or the script simply ended; a failed write is still reported.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from fixtures.processes import SOURCE_ROOT, run_guard

from guard.runtime.deciders import in_process
from guard.runtime.gate import Gate

POLICY = "import guard\n\ndef no_force_push(event):\n    if '--force' in event.tool_input.get('command', ''):\n        return guard.deny('force-push rewrites shared history')\n"
CONFIG = "audit: {path: audit.db}\nhooks:\n  PreToolUse:\n    - id: no-force-push\n      matcher: Bash\n      callable: gate_audit_policy:no_force_push\n"


def push(n: int) -> dict[str, Any]:
    command = f"git push {'--force ' if n % 2 else ''}origin b{n}"
    return {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "session_id": "s1",
        "cwd": ".",
    }


pytestmark = pytest.mark.project(files={"gate_audit_policy.py": POLICY}, config=CONFIG, importable=True)


def logged(project: Path) -> list[dict[str, Any]]:
    """The rows a real ``guard log --json`` prints, oldest first."""
    done = run_guard(["log", "--json", "-n", "1000"], project, env={"PYTHONPATH": f"{project}:{SOURCE_ROOT}"})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return sorted((json.loads(line) for line in done.stdout.splitlines()), key=lambda row: row["id"])


def verified(project: Path) -> str:
    done = run_guard(["log", "verify"], project)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    return done.stdout


def writers(*, besides: frozenset[threading.Thread] = frozenset()) -> list[threading.Thread]:
    """The audit writer threads alive now, less ``besides`` (other tests' gates, still open, have their own)."""
    return [t for t in threading.enumerate() if t.name == "guard-audit" and t not in besides]


def test_a_closed_gate_leaves_every_decision_in_the_log_and_the_chain_intact(project: Path) -> None:
    others = frozenset(writers())
    with Gate(deciders=in_process()) as gate:
        _, first = gate.decide(push(0))
        assert not writers(besides=others)  # one decision (guard hook's one) is written at once: no thread
        decisions = [first.decision, *(gate.decide(push(n))[1].decision for n in range(1, 40))]
        assert writers(besides=others)  # a gate that decides again hands its rows to the writer
    assert not writers(besides=others)

    rows = logged(project)

    assert [row["payload"]["tool_input"]["command"] for row in rows] == [
        push(n)["tool_input"]["command"] for n in range(40)
    ]
    assert [row["decision"] for row in rows] == decisions == ["allow", "deny"] * 20
    assert "intact (40 sealed rows)" in verified(project)


def test_a_script_that_never_closes_its_gate_still_leaves_its_rows_at_exit(project: Path) -> None:
    script = "import guard\ngate = guard.Gate()\nfor n in range(25):\n    gate.decide({'hook_event_name': 'PreToolUse', 'tool_name': 'Bash', 'tool_input': {'command': f'git push origin b{n}'}, 'session_id': 's1', 'cwd': '.'})\n"
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=60,
        env={**os.environ, "PYTHONPATH": f"{project}:{SOURCE_ROOT}"},
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr

    assert [row["payload"]["tool_input"]["command"] for row in logged(project)] == [
        f"git push origin b{n}" for n in range(25)
    ]
    assert "intact (25 sealed rows)" in verified(project)


def test_a_failed_write_from_the_writer_is_logged_and_reported(project: Path, caplog: pytest.LogCaptureFixture) -> None:
    (project / "audit.db").mkdir()  # SQLite cannot open a folder: every write fails
    caplog.set_level(logging.WARNING)
    with Gate(deciders=in_process()) as gate:
        assert [gate.decide(push(n))[1].decision for n in range(3)] == ["allow", "deny", "allow"]  # the decisions stand
    failed = [r for r in caplog.records if r.getMessage() == "audit log write failed"]
    assert {r.name for r in failed} == {"guard.gate", "guard.audit"} and len(
        failed
    ) == 3  # the first row in the call, the rest from the writer
    (project / "audit.db").rmdir()
    with Gate(deciders=in_process()) as gate:
        gate.decide(push(3))

    assert "note: 3 audit writes failed" in verified(project)
