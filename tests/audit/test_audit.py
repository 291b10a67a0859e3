"""The audit log: every decision appended, secrets redacted, payloads kept small, read back by guard log."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from guard.audit import PAYLOAD_LIMIT, REDACTED, AuditLog
from guard.core.decision import Decision, HookResult
from guard.core.settings import Settings
from guard.core.spec import HookSpec
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry

EVENT = {
    "hook_event_name": "PreToolUse",
    "session_id": "sess-1",
    "tool_name": "Bash",
    "tool_input": {"command": "curl -H 'Authorization: x' https://api.example.com", "env": {"API_KEY": "sk-live-123"}},
}


def deny_decision() -> Decision:
    return Decision(
        decision="deny",
        reason="exfiltrates a key",
        hooks=[
            HookResult(
                id="no-exfil",
                type="smart",
                decision="deny",
                reason="exfiltrates a key",
                tier="quick",
                model="openai/stub",
                confidence=0.9,
                latency_ms=412.0,
                cost_usd=0.0001,
            ),
            HookResult(
                id="audit-hook",
                type="http",
                decision=None,
                cached=False,
                latency_ms=3.0,
                cost_usd=0.0002,
                error="timed out after 5s",
            ),
            HookResult(id="cached-one", type="smart", decision="allow", cached=True),
        ],
    )


def test_a_decision_is_logged_with_every_hook(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db")
    log.record(EVENT, deny_decision(), latency_ms=415.5)
    [row] = log.tail()
    assert (row["event"], row["tool"], row["session"], row["decision"], row["reason"]) == (
        "pre_tool_use",
        "Bash",
        "sess-1",
        "deny",
        "exfiltrates a key",
    )
    assert row["latency_ms"] == 415.5 and abs(row["cost_usd"] - 0.0003) < 1e-12
    assert [(h["id"], h["decision"], h["tier"], h["model"], h["cached"], h["error"]) for h in row["hooks"]] == [
        ("no-exfil", "deny", "quick", "openai/stub", False, None),
        ("audit-hook", None, None, None, False, "timed out after 5s"),
        ("cached-one", "allow", None, None, True, None),
    ]
    assert row["payload"]["tool_input"]["command"].startswith("curl")


def test_configured_fields_are_redacted_at_any_depth_in_any_case(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db", redact=["api_key", "Password"])
    payload = {**EVENT, "extra": [{"password": "hunter2", "PASSWORD": "x", "user": "bob"}]}
    decision = Decision(
        decision="allow",
        updated_input={"env": {"Api_Key": "sk-2"}},
        hooks=[HookResult(id="rw", type="callable", decision="allow", updated_input={"api_key": "sk-3"})],
    )
    log.record(payload, decision, latency_ms=1.0)
    [row] = log.tail()
    assert row["payload"]["tool_input"]["env"] == {"API_KEY": REDACTED}
    assert row["payload"]["extra"] == [{"password": REDACTED, "PASSWORD": REDACTED, "user": "bob"}]
    assert row["hooks"][0]["updated_input"] == {"api_key": REDACTED}
    assert row["details"]["updated_input"] == {"env": {"Api_Key": REDACTED}}
    raw = (tmp_path / "audit.db").read_bytes() + (tmp_path / "audit.db-wal").read_bytes()
    assert b"sk-live-123" not in raw and b"hunter2" not in raw and b"sk-2" not in raw


def test_long_strings_are_shortened_but_the_payload_stays_json(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db")
    big = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": "/p/a.txt", "content": "x" * 50_000},
    }
    log.record(big, Decision(), latency_ms=1.0)
    [row] = log.tail()
    assert row["payload_truncated"] is False
    assert row["payload"]["tool_input"]["file_path"] == "/p/a.txt"
    content = row["payload"]["tool_input"]["content"]
    assert len(content) < PAYLOAD_LIMIT and content.endswith(f"[{50_000 - PAYLOAD_LIMIT // 4} more characters]")


def test_a_payload_of_many_fields_is_cut_at_the_limit(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db", payload_limit=500)
    many = {"hook_event_name": "PreToolUse", "tool_input": {f"field{i}": "v" * 50 for i in range(100)}}
    log.record(many, Decision(), latency_ms=1.0)
    [row] = log.tail()
    assert row["payload_truncated"] is True and isinstance(row["payload"], str) and len(row["payload"]) == 500


def test_tail_returns_the_latest_rows_oldest_first(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db")
    for i in range(5):
        log.record({**EVENT, "tool_name": f"T{i}"}, Decision(), latency_ms=float(i))
    assert [r["tool"] for r in log.tail(3)] == ["T2", "T3", "T4"]
    assert [r["tool"] for r in log.tail(100)] == ["T0", "T1", "T2", "T3", "T4"]


def test_no_file_until_something_is_recorded(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "audit.db"
    assert AuditLog(path).tail() == []
    assert not path.parent.exists()


def test_the_schema_is_migrated_once_and_recorded(tmp_path: Path) -> None:
    path = tmp_path / "audit.db"
    AuditLog(path).record(EVENT, Decision(), latency_ms=1.0)
    AuditLog(path).record(EVENT, Decision(), latency_ms=1.0)
    db = sqlite3.connect(path)
    assert [r[0] for r in db.execute("SELECT name FROM _guard_audit_migrations")] == [
        "m001_decisions",
        "m002_replay_and_label",
        "m003_view_indexes",
        "m004_sealed_chain",
        "m005_shadow_verdicts",
        "m006_shipping",
        "m007_shipped_digest",
    ]
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("SELECT count(*) FROM decisions").fetchone()[0] == 2


WRITER = """
import sys
from guard.audit import AuditLog
from guard.core.decision import Decision
for i in range(40):
    AuditLog(sys.argv[1]).record({"hook_event_name": "PreToolUse", "tool_name": sys.argv[2]}, Decision(), latency_ms=1.0)
"""


@pytest.mark.slow
def test_concurrent_hook_processes_lose_no_row(tmp_path: Path) -> None:
    path = tmp_path / "new" / "audit.db"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"T{n}"], stderr=subprocess.PIPE, text=True)
        for n in range(8)
    ]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, errors
    assert len(AuditLog(path).tail(1000)) == 8 * 40


async def test_the_engine_records_each_decision(tmp_path: Path) -> None:
    settings = Settings(audit_path=str(tmp_path / "audit.db"), audit_redact=("api_key",))
    spec = HookSpec(
        id="no-curl",
        kind="callable",
        event="pre_tool_use",
        matcher="Bash",
        func=lambda e: {"decision": "deny", "reason": "no curl"},
    )
    decision = await Engine(settings, Registry([spec])).decide(EVENT)
    assert decision.decision == "deny"
    [row] = AuditLog(tmp_path / "audit.db").tail()
    assert row["decision"] == "deny" and row["hooks"][0]["id"] == "no-curl"
    assert row["payload"]["tool_input"]["env"]["API_KEY"] == REDACTED
    assert json.dumps(row)  # what guard log --json prints
    assert row["latency_ms"] == decision.details["latency_ms"]
