"""The audit log as evidence: rows written by real ``guard hook`` processes, tampered with as an agent would, checked by ``guard log verify``.

Every row is sealed to the one before it with guard's secret, and a sealed head
names the last one: a row deleted, edited, moved, or cut off the end is named by
the first bad row and what is wrong with it (exit 1). A damaged file is set
aside and a new log started instead of losing every later decision.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.browser import start_view
from fixtures.processes import SOURCE_ROOT, run_guard

CONFIG = "audit: {path: audit.db}\nhooks:\n  PreToolUse:\n    - id: no-force-push\n      matcher: Bash\n      callable: policy:no_force_push\n"
POLICY = "import guard\n\ndef no_force_push(event):\n    if '--force' in event.tool_input.get('command', ''):\n        return guard.deny('force-push rewrites shared history')\n"
#: every test writes its log through real guard hook processes
pytestmark = [pytest.mark.slow, pytest.mark.project(files={"policy.py": POLICY}, config=CONFIG)]


def json_lines(text: str) -> list[dict[str, Any]]:
    """What ``guard log --json`` prints: one object per line."""
    return [json.loads(line) for line in text.splitlines()]


def guard(project: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_guard(list(args), project, stdin=stdin, env={"PYTHONPATH": os.pathsep.join([str(project), SOURCE_ROOT])})


def call(project: Path, command: str) -> subprocess.CompletedProcess[str]:
    event = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "session_id": "s1",
        "cwd": str(project),
    }
    done = guard(project, "hook", stdin=json.dumps(event))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


def verify(project: Path) -> tuple[int, str]:
    done = guard(project, "log", "verify")
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout


def tamper(project: Path, *statements: str) -> None:
    with sqlite3.connect(project / "audit.db") as db:
        for statement in statements:
            db.execute(statement)


@pytest.fixture
def logged(project: Path) -> Path:
    """Five decisions logged by five guard hook processes: #1–#5 (#2 and #4 denied)."""
    for n in range(5):
        call(project, f"git push {'--force ' if n % 2 else ''}origin branch-{n}")
    return project


def test_rows_from_concurrent_hooks_form_one_intact_chain(project: Path) -> None:
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: call(project, f"git push origin b{n}"), range(24)))

    code, out = verify(project)

    assert code == 0 and "intact (24 sealed rows)" in out, out
    ids = [
        row[0]
        for row in sqlite3.connect(project / "audit.db").execute(
            "SELECT id FROM decisions WHERE chain IS NOT NULL ORDER BY id"
        )
    ]
    assert ids == list(range(1, 25))


def test_a_deleted_row_is_named(logged: Path) -> None:
    tamper(logged, "DELETE FROM decisions WHERE id = 2")  # the agent drops the deny it does not want seen
    code, out = verify(logged)
    assert code == 1 and "BROKEN at #2 is missing: deleted from the log" in out, out


def test_an_edited_row_is_named(logged: Path) -> None:
    tamper(logged, "UPDATE decisions SET decision = 'allow', reason = NULL WHERE id = 4")
    code, out = verify(logged)
    assert code == 1 and "BROKEN at #4 does not match its seal: it was edited" in out, out


def test_rows_moved_into_each_others_place_are_named(logged: Path) -> None:
    tamper(
        logged,
        "UPDATE decisions SET id = 100 WHERE id = 2",
        "UPDATE decisions SET id = 2 WHERE id = 3",
        "UPDATE decisions SET id = 3 WHERE id = 100",
    )
    code, out = verify(logged)
    assert code == 1 and "BROKEN at #2 does not match its seal" in out and "#3 does not match its seal" in out, out


def test_a_tail_cut_off_is_named(logged: Path) -> None:
    tamper(logged, "DELETE FROM decisions WHERE id >= 4")
    code, out = verify(logged)
    assert code == 1 and "BROKEN at the log was cut off: its sealed head names #5, the last row is #3" in out, out


def test_a_tail_cut_off_with_its_head_removed_is_still_found(logged: Path) -> None:
    tamper(logged, "DELETE FROM decisions WHERE id >= 4", "DELETE FROM audit_head")
    code, out = verify(logged)
    assert code == 1 and "sealed head is missing" in out, out


def test_a_forged_head_does_not_verify(logged: Path) -> None:
    tamper(
        logged,
        "DELETE FROM decisions WHERE id >= 4",
        "UPDATE audit_head SET last_id = 3, chain = (SELECT chain FROM decisions WHERE id = 3)",
    )
    code, out = verify(logged)
    assert code == 1 and "sealed head does not verify" in out, out


def test_the_next_decision_after_tampering_keeps_the_break_on_record(logged: Path) -> None:
    """guard hook never re-seals over a break: it restarts the chain and says why in the new row."""
    tamper(logged, "DELETE FROM decisions WHERE id >= 4")
    call(logged, "git push origin after")

    code, out = verify(logged)

    assert code == 1 and "BROKEN at #4–#5 are missing" in out, out
    assert "#6: audit chain restarted: the log ended at #3 but its sealed head names #5" in out, out
    row = json_lines(guard(logged, "log", "--json").stdout)[0]  # newest first
    assert row["id"] == 6 and any("audit chain restarted" in w for w in row["warnings"])  # ids are never reused


def test_a_head_and_tail_removed_together_do_not_stop_later_rows(logged: Path) -> None:
    """The deleted rows' index entries remain; the next decision is still logged (and restarts the chain).

    The log's end is also recorded outside it, so the rows cut off with the head are still missed, and ids go on after them.
    """
    tamper(logged, "DELETE FROM decisions WHERE id >= 4", "DELETE FROM audit_head")
    assert verify(logged)[0] == 1
    call(logged, "git push --force origin after")
    call(logged, "git push origin after")

    code, out = verify(logged)

    assert (
        code == 1
        and "#4–#5 are missing" in out
        and "#6: audit chain restarted: the chain's sealed head is missing" in out
    ), out
    assert "audit write" not in out, out
    assert [r["id"] for r in json_lines(guard(logged, "log", "--json", "--reverse").stdout)] == [1, 2, 3, 6, 7]


@pytest.mark.parametrize("how", ["emptied", "replaced by a fresh log", "deleted"])
def test_a_log_emptied_replaced_or_deleted_whole_is_reported_against_its_end_recorded_outside_it(
    logged: Path, how: str
) -> None:
    """Replacing the whole file takes its sealed head with it; guard's record of the end, outside the log, does not go."""
    if how == "emptied":
        tamper(logged, "DELETE FROM decisions", "DELETE FROM audit_head")
    else:
        for suffix in ("", "-wal", "-shm"):
            (logged / f"audit.db{suffix}").unlink(missing_ok=True)
    if how == "replaced by a fresh log":
        other = logged / "other"
        other.mkdir()
        (other / "guard.yaml").write_text(CONFIG)
        (other / "policy.py").write_text(POLICY)
        trust_config(other / "guard.yaml")
        call(other, "git push origin elsewhere")  # a log guard wrote, with an intact chain of its own
        (other / "audit.db").rename(logged / "audit.db")

    code, out = verify(logged)
    assert code == 1, out
    wanted = "no log at" if how == "deleted" else "the log ends at #"
    assert wanted in out and "#5" in out, out  # what guard recorded as the last row
    doctor = guard(logged, "doctor")
    assert doctor.returncode == 1 and any(line.startswith("FAIL  audit log") for line in doctor.stdout.splitlines()), (
        doctor.stdout
    )
    if how != "emptied":
        proc, url = start_view("--audit", str(logged / "audit.db"), cwd=logged)
        try:
            status, body = page(url + "/decisions")
        finally:
            proc.terminate()
            proc.communicate(timeout=30)
        assert status == 200 and 'id="integrity"' in body and "#5" in body, body

    call(logged, "git push origin after")  # the next decision restarts the chain and keeps the break on record
    code, out = verify(logged)
    assert code == 1 and "–#5 are missing" in out and "#6: audit chain restarted:" in out, out


def test_a_record_of_the_end_that_was_changed_is_reported(logged: Path) -> None:
    from guard.audit.chain import record_path

    record = record_path(logged / "audit.db")
    mac, body = record.read_text().split("\n")
    record.write_text(
        f"{mac}\n{body.replace('5 ', '3 ', 1)}"
    )  # the record moved back to #3 by hand: its seal no longer fits
    code, out = verify(logged)
    assert code == 1 and "does not verify" in out, out


def test_a_label_set_later_is_not_tampering(logged: Path) -> None:
    assert guard(logged, "log", "label", "2", "allow").returncode == 0
    assert verify(logged)[0] == 0


def test_an_older_log_counts_its_rows_as_unchained_not_broken(project: Path) -> None:
    db = sqlite3.connect(project / "audit.db")
    db.executescript(  # an audit log from before the chain: migrations m001–m003, two rows
        "CREATE TABLE decisions (id INTEGER PRIMARY KEY, time REAL NOT NULL, event TEXT, tool TEXT, session TEXT, decision TEXT NOT NULL,"
        " reason TEXT, latency_ms REAL, cost_usd REAL, hooks TEXT NOT NULL, payload TEXT NOT NULL, payload_truncated INTEGER NOT NULL DEFAULT 0,"
        " details TEXT, payload_shortened INTEGER, label TEXT);"
        "CREATE TABLE _guard_audit_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL);"
        "INSERT INTO _guard_audit_migrations VALUES ('m001_decisions', 0), ('m002_replay_and_label', 0);"
        "INSERT INTO decisions (time, decision, hooks, payload) VALUES (1, 'allow', '[]', '{}'), (2, 'deny', '[]', '{}');"
        "PRAGMA user_version = 2;"
    )
    db.close()
    call(project, "git push --force origin main")

    code, out = verify(project)

    assert code == 0 and "intact (1 sealed rows, 2 written before the chain existed (unchained))" in out, out
    tamper(project, "DELETE FROM decisions WHERE id = 1")  # an unchained row proves nothing either way
    assert verify(project)[0] == 0


def test_a_damaged_log_is_set_aside_and_the_next_decision_starts_a_new_one(logged: Path) -> None:
    (logged / "audit.db").write_bytes(b"this is not a database\n" * 512)
    for suffix in ("-wal", "-shm"):
        (logged / f"audit.db{suffix}").unlink(missing_ok=True)

    shown = guard(logged, "log")
    assert shown.returncode == 1 and "is not a readable audit log" in shown.stderr and "Traceback" not in shown.stderr
    done = call(logged, "git push --force origin main")

    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "set aside as audit.db.unreadable-" in done.stderr
    [aside] = sorted(logged.glob("audit.db.unreadable-*"))
    assert aside.read_bytes().startswith(b"this is not a database")
    [row] = json_lines(guard(logged, "log", "--json").stdout)
    assert row["decision"] == "deny" and any("set aside as audit.db.unreadable-" in w for w in row["warnings"])
    code, out = verify(logged)  # the rows guard wrote before are not in the new log: it says so, and where they went
    assert code == 1 and "#1–#5 are missing" in out and f"an unreadable log was set aside as {aside}" in out, out


def test_a_failed_write_is_noted_and_reported(project: Path) -> None:
    (project / "audit.db").mkdir()  # SQLite cannot open a folder: every write fails
    done = call(project, "git push --force origin main")
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"  # the decision stands
    assert "audit log write failed" in done.stderr
    (project / "audit.db").rmdir()
    call(project, "git push origin main")

    code, out = verify(project)

    assert code == 0 and "note: 1 audit write failed" in out and "those decisions are not in the log" in out, out
    proc, url = start_view("--audit", str(project / "audit.db"), cwd=project)
    try:
        status, body = page(url + "/decisions")
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert status == 200 and "1 decision was not logged: the audit write failed" in body, body


def page(url: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_guard_view_shows_a_broken_chain_and_failed_writes_on_the_decisions_page(logged: Path) -> None:
    proc, url = start_view("--audit", str(logged / "audit.db"), cwd=logged)
    try:
        status, body = page(url + "/decisions")
        assert status == 200 and 'id="integrity"' not in body  # whole: no banner
        tamper(logged, "DELETE FROM decisions WHERE id = 2")
        status, body = page(url + "/decisions")
        assert status == 200 and 'id="integrity"' in body and "#2 is missing: deleted from the log" in body, body
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_guard_view_says_what_is_wrong_with_a_damaged_log_without_a_server_error(project: Path) -> None:
    (project / "audit.db").write_bytes(b"this is not a database\n" * 512)
    proc, url = start_view("--audit", str(project / "audit.db"), cwd=project)
    try:
        status, body = page(url + "/decisions")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert status == 200 and "is not a readable audit log" in body and "sets it aside" in body, body
    assert "Traceback" not in body and "Traceback" not in err


def test_guard_doctor_fails_on_a_broken_chain_and_warns_of_a_log_set_aside(logged: Path) -> None:
    intact = guard(logged, "doctor", "--model-timeout", "1")
    assert any(
        line.startswith("ok    audit log:") and "sealed chain intact (5 rows)" in line
        for line in intact.stdout.splitlines()
    ), intact.stdout
    tamper(logged, "UPDATE decisions SET decision = 'allow' WHERE id = 2")
    broken = guard(logged, "doctor", "--model-timeout", "1")
    assert (
        broken.returncode == 1 and "FAIL  audit log:" in broken.stdout and "#2 does not match its seal" in broken.stdout
    ), broken.stdout
    (logged / "audit.db").write_bytes(b"not a database" * 100)
    call(logged, "git push origin main")
    aside = guard(logged, "doctor", "--model-timeout", "1")
    assert (
        "WARN  audit log: an unreadable audit log was set aside as" in aside.stdout and "Traceback" not in aside.stderr
    ), aside.stdout
