"""The view's side of the audit log: redaction at display, keyset pages, filters, rule rollups, and an old file migrated in place."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.processes import run_guard
from starlette.testclient import TestClient

from guard.audit import REDACTED, AuditLog
from guard.core.decision import Decision, HookResult, merge
from guard.view import ViewSources, create_view
from guard.view.decisions import PAGE_SIZE

SECRET = "sk-live-0123456789"


def _client(path: Path, redact: frozenset[str] = frozenset()) -> TestClient:
    return TestClient(create_view(ViewSources(path, redact=redact)))


def _ids(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<tr class="row-\w+" data-id="(\d+)"', html)]


def _event(command: str, *, session: str = "s1", tool: str = "Bash", **extra: object) -> dict[str, object]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": session,
        "tool_name": tool,
        "tool_input": {"command": command, **extra},
    }


def test_a_name_added_to_redact_later_is_hidden_on_every_page(tmp_path: Path) -> None:
    """The row was logged before ``api_key`` was redacted: the view hides it anyway, in the list, the detail and a cut payload."""
    log = AuditLog(tmp_path / "audit.db")
    hooks = [HookResult("rw", "callable", "allow", updated_input={"command": "x", "api_key": SECRET})]
    log.record(_event("deploy", api_key=SECRET), merge(hooks), latency_ms=1.0)
    AuditLog(tmp_path / "audit.db", payload_limit=200).record(
        _event("deploy " + "y" * 300, Api_Key=SECRET, more="z" * 300), Decision(), latency_ms=1.0
    )
    assert SECRET in json.dumps(log.tail())  # logged in the clear, as configured then
    client = _client(tmp_path / "audit.db", frozenset({"api_key"}))
    pages = [
        client.get("/decisions"),
        client.get("/decisions/1"),
        client.get("/decisions/2"),
        client.get("/decisions/newer?after=0"),
    ]
    for page in pages:
        assert page.status_code == 200 and SECRET not in page.text
    assert REDACTED in pages[1].text and REDACTED in pages[2].text
    assert (
        SECRET in _client(tmp_path / "audit.db").get("/decisions/1").text
    )  # the test would notice a page that never shows payloads


def test_pages_are_keyset_pages_newest_first(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db")
    for i in range(2 * PAGE_SIZE + 20):
        log.record(_event(f"cmd {i}"), merge([HookResult("r", "callable", "allow")]), latency_ms=1.0)
    client = _client(tmp_path / "audit.db")
    first = client.get("/decisions").text
    assert _ids(first) == list(range(120, 70, -1))
    older = re.search(r'<a rel="next" href="([^"]+)"', first)
    assert older and "before=71" in older.group(1)
    second = client.get(older.group(1).replace("&amp;", "&")).text
    assert _ids(second) == list(range(70, 20, -1))
    last = client.get("/decisions?before=21").text
    assert _ids(last) == list(range(20, 0, -1)) and 'rel="next"' not in last
    log.record(_event("cmd new"), merge([HookResult("r", "callable", "allow")]), latency_ms=1.0)
    live = client.get("/decisions/newer?after=120").json()
    assert (live["top"], live["count"]) == (121, 1) and "cmd new" in live["html"]


def test_filters_combine_and_a_bad_one_is_named(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db")
    deny = [HookResult("no-curl", "command", "deny", "no curl"), HookResult("audit", "command")]
    log.record(_event("curl a", session="alpha"), merge(deny), latency_ms=1.0, client="codex")
    log.record(_event("curl b", session="beta"), merge(deny), latency_ms=1.0, client="claude")
    log.record(_event("ls", session="alpha"), merge([HookResult("audit", "command")]), latency_ms=1.0, client="claude")
    failed = HookResult("judge", "smart", None, error="model timed out")
    log.record(_event("rm x", session="alpha"), merge([failed]), latency_ms=1.0, client="claude")
    client = _client(tmp_path / "audit.db")
    assert _ids(client.get("/decisions?decision=deny").text) == [2, 1]
    assert _ids(client.get("/decisions?decision=deny&session=alpha").text) == [1]
    assert _ids(client.get("/decisions?rule=audit").text) == [3, 2, 1]
    assert _ids(client.get("/decisions?client=codex").text) == [1]
    assert _ids(client.get("/decisions?decision=unjudged").text) == [4]
    assert _ids(client.get("/decisions?q=CURL+B").text) == [2]  # a case-insensitive substring
    assert (
        _ids(client.get("/decisions?q=timed+out").text) == []
    )  # the reason of a failed hook is not the decision's reason
    future = time.strftime("%Y-%m-%dT%H:%M", time.localtime(time.time() + 3600))
    assert (
        _ids(client.get(f"/decisions?since={future}").text) == []
        and len(_ids(client.get(f"/decisions?until={future}").text)) == 4
    )
    for bad, message in (
        ("since=yesterday", "since: &#39;yesterday&#39; is not a date"),
        ("q=ab", "at least 3 characters"),
        ("decision=maybe", "decision must be one of"),
    ):
        page = client.get(f"/decisions?{bad}")
        assert page.status_code == 400 and message in page.text and "Traceback" not in page.text
    assert "not judged" in client.get("/decisions/4").text


def test_the_rules_page_counts_from_the_rollups(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db")
    for i in range(10):
        verdict = "deny" if i < 3 else "allow"
        judge = HookResult("judge", "smart", verdict, cached=i >= 8, latency_ms=100.0 * (i + 1), cost_usd=0.001)
        log.record(_event(f"c{i}"), merge([judge]), latency_ms=1.0)
    log.record(_event("x"), merge([HookResult("judge", "smart", None, error="boom")]), latency_ms=1.0)
    page = _client(tmp_path / "audit.db").get("/rules").text
    row = page[page.index('data-rule="judge"') :]
    cells = re.findall(r'<td class="num[^"]*">([^<]*)', row)
    calls, allow, ask, deny, abstain, errors, fail_open, cache, cost, p50, p95 = (c.strip() for c in cells[:11])
    assert (calls, allow, ask, deny, abstain, errors, fail_open, cache) == ("11", "7", "0", "3", "1", "1", "1", "18%")
    assert cost == "$0.0100"
    # uncached latencies 100..800 ms: p50 400 ms, p95 800 ms, each reported at its bin's upper bound (≤ 20% over)
    assert 400 <= float(p50.split()[0]) <= 480 and 800 <= float(p95.split()[0]) <= 960


def _old_audit_file(path: Path) -> None:
    """An audit log as guard wrote it before ``guard view`` (migrations m001 and m002 only)."""
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE _guard_audit_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL);
        INSERT INTO _guard_audit_migrations VALUES ('m001_decisions', 0), ('m002_replay_and_label', 0);
        CREATE TABLE decisions (id INTEGER PRIMARY KEY, time REAL NOT NULL, event TEXT, tool TEXT, session TEXT, decision TEXT NOT NULL,
            reason TEXT, latency_ms REAL, cost_usd REAL, hooks TEXT NOT NULL, payload TEXT NOT NULL, payload_truncated INTEGER NOT NULL DEFAULT 0,
            details TEXT, payload_shortened INTEGER, label TEXT);
        CREATE INDEX decisions_time ON decisions (time);
        PRAGMA user_version = 2;
        """
    )
    hooks = [
        {
            "id": "old-rule",
            "type": "smart",
            "decision": "deny",
            "reason": "old deny",
            "cached": False,
            "latency_ms": 50.0,
            "cost_usd": 0.002,
        }
    ]
    failed = [{"id": "old-rule", "type": "smart", "decision": None, "cached": False, "error": "timed out"}]
    for when, decision, reason, hook_list, command in (
        (time.time() - 60, "deny", "old deny", hooks, "curl old"),
        (time.time() - 30, "allow", None, failed, "ls old"),
    ):
        payload = json.dumps(
            {
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "session_id": "old",
                "tool_input": {"command": command},
            }
        )
        db.execute(
            "INSERT INTO decisions (time, event, tool, session, decision, reason, latency_ms, cost_usd, hooks, payload, payload_truncated, details, payload_shortened)"
            " VALUES (?, 'pre_tool_use', 'Bash', 'old', ?, ?, 1.0, NULL, ?, ?, 0, NULL, 0)",
            (when, decision, reason, json.dumps(hook_list), payload),
        )
    db.commit()
    db.close()


def test_an_old_audit_file_is_migrated_and_shown_whole(tmp_path: Path) -> None:
    path = tmp_path / "audit.db"
    _old_audit_file(path)
    log = AuditLog(path)
    log.record(_event("new"), merge([HookResult("new-rule", "callable", "allow")]), latency_ms=1.0, client="gemini")
    indexed = sqlite3.connect(path)
    assert [r[0] for r in indexed.execute("SELECT DISTINCT hook FROM decision_hooks")] == [
        "new-rule"
    ]  # guard hook migrates, never back-fills
    client = _client(path)
    assert _ids(client.get("/decisions").text) == [3, 2, 1]
    assert _ids(client.get("/decisions?rule=old-rule&decision=deny").text) == [1]  # back-filled by the view: hook rows
    assert _ids(client.get("/decisions?q=curl+old").text) == [1]  # backfilled text index
    assert _ids(client.get("/decisions?decision=unjudged").text) == [2]  # judged read back from its failed hook
    rules = client.get("/rules").text
    assert 'data-rule="old-rule"' in rules and re.search(r'<td class="num calls">2</td>', rules)
    rows = log.tail()
    assert [r["id"] for r in rows] == [1, 2, 3] and rows[2]["client"] == "gemini" and rows[0]["client"] is None
    migrated = sqlite3.connect(path)
    assert [r[0] for r in migrated.execute("SELECT name FROM _guard_audit_migrations ORDER BY name")][
        -1
    ] == "m007_shipped_digest"


def test_no_audit_log_yet_is_an_empty_page_not_an_error(tmp_path: Path) -> None:
    client = _client(tmp_path / "missing.db")
    for path in ("/decisions", "/rules", "/decisions/newer?after=0"):
        assert client.get(path).status_code == 200
    assert client.get("/decisions/7").status_code == 404
    assert not (tmp_path / "missing.db").exists()  # the view never creates the log


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["claude", "gemini"])
def test_guard_hook_records_its_client_format(tmp_path: Path, fmt: str) -> None:
    import os

    (tmp_path / "guard.yaml").write_text(
        'audit: {path: audit.db}\nhooks:\n  PreToolUse:\n    - id: any\n      command: "cat > /dev/null"\n'
    )
    trust_config(tmp_path / "guard.yaml")
    event = {
        "hook_event_name": "PreToolUse" if fmt == "claude" else "BeforeTool",
        "session_id": "s",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
    env = {**os.environ, "GUARD_CONFIG": str(tmp_path / "guard.yaml")}
    done = run_guard(["hook", "--format", fmt], tmp_path, stdin=json.dumps(event), env=env, inherit_env=False)
    assert done.returncode == 0, done.stderr
    [row] = AuditLog(tmp_path / "audit.db").tail()
    assert row["client"] == fmt and row["judged"] == 1


def test_a_file_that_is_not_an_audit_log_is_named_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "audit.db"
    path.write_text("this is not a database\n" * 100)
    page = TestClient(create_view(ViewSources(path)), raise_server_exceptions=False).get("/decisions")
    assert (
        page.status_code == 200 and f"{path} is not a readable audit log" in page.text and "Traceback" not in page.text
    )


@pytest.mark.slow
def test_guard_view_indexes_an_old_log_before_it_listens_and_says_so(tmp_path: Path) -> None:
    import urllib.request

    from fixtures.browser import start_view

    path = tmp_path / "audit.db"
    _old_audit_file(path)
    proc, url = start_view("--audit", str(path), cwd=tmp_path)
    try:
        indexed = sqlite3.connect(path)
        assert (
            indexed.execute("SELECT count(DISTINCT decision_id) FROM decision_hooks").fetchone()[0] == 2
        )  # before any page was asked for
        with urllib.request.urlopen(url + "/decisions?rule=old-rule", timeout=30) as r:
            assert _ids(r.read().decode()) == [2, 1]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "indexed 2 decision(s) logged before this version" in err


@pytest.mark.slow
def test_a_log_made_by_a_sqlite_without_the_trigram_tokenizer_is_written_by_guard_hook_and_searched_by_scanning(
    tmp_path: Path,
) -> None:
    """SQLite before 3.34 (Ubuntu 20.04, RHEL 8) has no trigram tokenizer: the log must still be written, and search must still find."""
    import os
    import urllib.parse
    import urllib.request

    from fixtures.browser import start_view

    (tmp_path / "guard.yaml").write_text(
        'audit: {path: audit.db}\nhooks:\n  PreToolUse:\n    - id: any\n      command: "cat > /dev/null"\n'
    )
    trust_config(tmp_path / "guard.yaml")
    env = {**os.environ, "GUARD_CONFIG": str(tmp_path / "guard.yaml")}

    def hook(command: str) -> None:
        event = {
            "hook_event_name": "PreToolUse",
            "session_id": "s",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
        done = run_guard(["hook"], tmp_path, stdin=json.dumps(event), env=env, inherit_env=False)
        assert done.returncode == 0 and "audit" not in done.stderr, done.stderr

    hook("ls first")
    with sqlite3.connect(tmp_path / "audit.db") as db:
        db.execute("DROP TABLE decisions_text")  # as create() leaves a file on such a SQLite
    hook("cat 50%_off.txt")
    hook("ls third")
    assert [r["id"] for r in AuditLog(tmp_path / "audit.db").tail()] == [1, 2, 3]
    proc, url = start_view("--audit", str(tmp_path / "audit.db"), cwd=tmp_path)
    try:
        for query, ids in (("50%_OFF", [2]), ("%_o", [2]), ("LS T", [3]), ("Bash", [3, 2, 1]), ("zzz", [])):
            with urllib.request.urlopen(url + "/decisions?" + urllib.parse.urlencode({"q": query}), timeout=30) as r:
                assert _ids(r.read().decode()) == ids, query
    finally:
        proc.kill()
        proc.wait()
