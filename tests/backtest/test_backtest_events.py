"""Which audit rows a backtest may replay: only payloads kept whole, only real judgements; labels and filters read back."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from guard.audit import AuditLog
from guard.audit.replayable import sample, split_replayable
from guard.core.decision import Decision, HookResult

JUDGED = Decision("deny", "no", hooks=[HookResult(id="rule", type="smart", decision="deny")])


def event(command: str, session: str = "s1", **extra: object) -> dict[str, object]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": session,
        "tool_name": "Bash",
        "tool_input": {"command": command, **extra},
    }


def test_only_whole_payloads_of_real_judgements_are_replayed(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db", redact=["token"], payload_limit=2000)
    log.record(event("ls"), JUDGED, latency_ms=1.0)
    log.record(event("deploy", token="s3cret"), JUDGED, latency_ms=1.0)
    log.record(event("echo " + "x" * 5000), JUDGED, latency_ms=1.0)  # shortened
    log.record({**event("cut"), "tool_input": {f"f{i}": "y" * 100 for i in range(40)}}, JUDGED, latency_ms=1.0)  # cut
    log.record(event("rm x"), Decision("deny", "config broken", details={"failure": "config"}), latency_ms=1.0)
    log.record(
        event("sleep 99"), Decision("deny", "timed out", details={"failure": "deadline"}), latency_ms=1.0
    )  # a real outcome
    events, skipped = split_replayable(log.rows())
    assert [e.payload["tool_input"]["command"] for e in events] == ["ls", "deploy", "sleep 99"]  # type: ignore[index]
    assert skipped == {
        "long strings shortened in the audit log": 1,
        "payload cut at the audit size limit": 1,
        "recorded when the config did not load": 1,
    }
    assert [e.redacted for e in events] == [False, True, False]
    assert events[0].hooks == ("rule",) and events[0].decision == "deny"


def test_rows_written_before_the_shortened_flag_are_judged_by_the_marker(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db", payload_limit=2000)
    log.record(event("echo " + "x" * 5000), JUDGED, latency_ms=1.0)
    log.record(event("ls"), JUDGED, latency_ms=1.0)
    with sqlite3.connect(tmp_path / "audit.db") as db:
        db.execute("UPDATE decisions SET payload_shortened = NULL")  # as a row from before migration m002
    events, skipped = split_replayable(log.rows())
    assert [e.payload["tool_input"]["command"] for e in events] == ["ls"]  # type: ignore[index]
    assert skipped == {"long strings shortened in the audit log": 1}


def test_rows_filter_by_time_and_session_and_labels_are_kept(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db")
    log.record(event("old", "s1"), JUDGED, latency_ms=1.0)
    with sqlite3.connect(tmp_path / "audit.db") as db:
        db.execute("UPDATE decisions SET time = ?", (time.time() - 3 * 86400,))
    log.record(event("new", "s2"), JUDGED, latency_ms=1.0)
    assert [r["payload"]["tool_input"]["command"] for r in log.rows(since=time.time() - 86400)] == ["new"]
    assert [r["payload"]["tool_input"]["command"] for r in log.rows(session="s1")] == ["old"]
    assert log.set_label(2, "allow") and not log.set_label(99, "deny")
    assert [(r["id"], r["label"]) for r in log.rows(labeled=True)] == [(2, "allow")]
    with pytest.raises(ValueError, match="label must be one of"):
        log.set_label(1, "maybe")


def test_a_sample_is_seeded_and_keeps_log_order(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db")
    for i in range(20):
        log.record(event(f"cmd {i}"), JUDGED, latency_ms=1.0)
    events, _ = split_replayable(log.rows())
    picked = sample(events, 5, seed=3)
    assert len(picked) == 5 and picked == sample(events, 5, seed=3) and picked != sample(events, 5, seed=4)
    assert [e.audit_id for e in picked] == sorted(e.audit_id for e in picked)
    assert sample(events, None, seed=0) == events
