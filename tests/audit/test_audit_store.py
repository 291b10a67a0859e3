"""One audit store for every machine: real ``guard hook`` processes in two users' homes, one real Postgres, ``guard log --audit``
(docs/audit-store.md). Rows go on from the local log after the hook has answered, and nothing is lost while the store is down."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from fixtures.processes import SOURCE_ROOT, run_guard
from fixtures.team import RULE, Home, central_rows, wait_for_rows

pytestmark = pytest.mark.slow  # real guard processes by the dozen, waiting calls, a Postgres


def test_two_users_decisions_reach_one_postgres_and_guard_log_audit(postgres_url: str, tmp_path: Path) -> None:
    config = f"audit:\n  url: {postgres_url}\n{RULE}"
    alice, bob = Home(tmp_path, "alice", config), Home(tmp_path, "bob", config)
    assert alice.hook("rm -rf build") == "deny"
    assert alice.hook("ls") == ""
    assert bob.hook("rm -rf dist") == "deny"
    rows = wait_for_rows(postgres_url, 3)
    assert len(rows) == 3, "each hook's forked shipper sent its row after the hook answered"
    by_user = {(row["os_user"], row["row_id"]): row for row in rows}
    assert set(by_user) == {("alice", 1), ("alice", 2), ("bob", 1)}
    assert (
        by_user[("alice", 1)]["decision"] == "deny"
        and by_user[("alice", 1)]["reason"]
        and "no rm" in str(by_user[("alice", 1)]["reason"])
    )
    assert by_user[("alice", 1)]["machine"] == os.uname().nodename and by_user[("alice", 1)]["chain"], (
        "the machine and the chain position ride along"
    )
    assert by_user[("alice", 1)]["log_id"] != by_user[("bob", 1)]["log_id"], "each user's log is a log of its own"
    assert by_user[("alice", 1)]["payload"]["tool_input"] == {"command": "rm -rf build"}  # type: ignore[index]
    table = run_guard(["log", "--audit", postgres_url], tmp_path)
    assert table.returncode == 0 and "alice@" in table.stdout and "bob@" in table.stdout and "no rm" in table.stdout
    verify = run_guard(["log", "verify", "--audit", postgres_url], tmp_path)
    assert verify.returncode == 0 and "intact" in verify.stdout


def test_postgres_stopped_and_restarted_loses_no_row(own_postgres, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = own_postgres.create_database()
    carol = Home(tmp_path, "carol", f"audit:\n  url: {url}\n{RULE}")
    for n in range(3):
        carol.hook(f"echo {n}")
    assert len(wait_for_rows(url, 3)) == 3
    own_postgres.stop()
    for n in range(3, 8):
        assert carol.hook(f"rm -rf tmp{n}") == "deny", "the store being down changes no decision"
    waiting = carol.guard("log", "ship")
    assert waiting.returncode == 1 and "5 row(s) waiting" in waiting.stdout and "failing since" in waiting.stdout, (
        waiting.stdout
    )
    own_postgres.start()
    shipped = carol.guard("log", "ship")
    assert shipped.returncode == 0 and "0 row(s) waiting" in shipped.stdout, shipped.stdout
    rows = central_rows(url)
    assert sorted(row["row_id"] for row in rows) == list(range(1, 9))  # type: ignore[type-var]
    assert run_guard(["log", "verify", "--audit", url], tmp_path).returncode == 0


def test_rows_deleted_before_they_were_sent_and_a_replaced_log_show_as_gaps(postgres_url: str, tmp_path: Path) -> None:
    dave = Home(tmp_path, "dave", RULE)  # no store yet: the rows stay local
    for n in range(3):
        dave.hook(f"echo {n}")
    with sqlite3.connect(dave.log_file()) as db:
        db.execute("DELETE FROM decisions WHERE id = 2")  # what an agent that got around protection might do
    dave.configure(f"audit:\n  url: {postgres_url}\n{RULE}")
    assert dave.guard("log", "ship").returncode == 0
    verify = run_guard(["log", "verify", "--audit", postgres_url], tmp_path)
    assert verify.returncode == 1 and "#2 never arrived (deleted before they were sent)" in verify.stdout, verify.stdout
    local = dave.log_file()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{local}{suffix}").unlink(missing_ok=True)  # the whole local log reset
    dave.hook("echo after")
    assert dave.guard("log", "ship").returncode == 0
    verify = run_guard(["log", "verify", "--audit", postgres_url], tmp_path)
    assert verify.returncode == 1 and "replaced by a new log" in verify.stdout, verify.stdout


def test_the_hook_answers_without_postgres_and_a_missing_driver_is_named(tmp_path: Path) -> None:
    """An unreachable store (nothing listens on the port) changes nothing a hook answers; ``guard log ship`` says why rows wait."""
    erin = Home(tmp_path, "erin", f"audit:\n  url: postgresql://guard@127.0.0.1:9/nowhere\n{RULE}")
    assert erin.hook("rm -rf x") == "deny"
    waiting = erin.guard("log", "ship")
    assert waiting.returncode == 1 and "1 row(s) waiting" in waiting.stdout


def test_each_decision_reaches_an_otlp_collector_as_a_log_record(make_receiver, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A real OTLP/HTTP receiver on loopback decodes what the official exporter sent; a collector refusing loses nothing."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="pip install 'plainguard[otel]'")
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    up = {"now": True}
    collector = make_receiver(
        reply=lambda got: (200, b"", {"Content-Type": "application/x-protobuf"}) if up["now"] else (400, b"no", {})
    )
    frank = Home(tmp_path, "frank", f"audit:\n  otlp: {collector.url('')}\n{RULE}")
    assert frank.hook("rm -rf build") == "deny"
    assert collector.wait_for(1, timeout=60), "the hook's shipper exported the row after the hook answered"
    request = ExportLogsServiceRequest.FromString(collector.requests[0].body)
    assert collector.requests[0].path == "/v1/logs"
    resource_logs = request.resource_logs[0]
    resource = {a.key: a.value.string_value for a in resource_logs.resource.attributes}
    record = resource_logs.scope_logs[0].log_records[0]
    attributes = {a.key: a.value for a in record.attributes}
    assert (
        resource["service.name"] == "guard" and record.event_name == "guard.decision" and record.severity_text == "WARN"
    )
    assert "no rm" in record.body.string_value
    assert attributes["user.name"].string_value == "frank" and attributes["guard.decision"].string_value == "deny"
    assert attributes["guard.row_id"].int_value == 1 and attributes["guard.tool"].string_value == "Bash"
    up["now"] = False
    frank.hook("echo one")
    waiting = frank.guard("log", "ship")
    assert waiting.returncode == 1 and "1 row(s) waiting" in waiting.stdout
    up["now"] = True
    assert frank.guard("log", "ship").returncode == 0
    last = (
        ExportLogsServiceRequest.FromString(collector.requests[-1].body).resource_logs[0].scope_logs[0].log_records[-1]
    )
    assert {a.key: a.value for a in last.attributes}["guard.row_id"].int_value == 2


def test_guard_serves_audit_writer_ships_its_rows(postgres_url: str, tmp_path: Path) -> None:
    """A real ``guard serve``: its audit writer thread wakes the shipper after each batch, so its decisions reach the store too."""
    import urllib.request

    from fixtures.cache import start_serve

    gina = Home(tmp_path, "gina", f"audit:\n  url: {postgres_url}\n{RULE}")
    service, base = start_serve(
        gina.project / "guard.yaml", gina.project, {**os.environ, **gina.env, "PYTHONPATH": SOURCE_ROOT}
    )
    try:
        token = gina.guard("serve", "--print-token").stdout.strip()
        for command in ("rm -rf a", "ls", "rm -rf b"):
            event = {
                "session_id": "served",
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": command},
                "cwd": str(gina.project),
            }
            request = urllib.request.Request(
                f"{base}/v1/hooks",
                data=json.dumps(event).encode(),
                headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
            )
            with urllib.request.urlopen(request, timeout=60) as response:
                assert json.loads(response.read())["decision"] in ("allow", "deny")
        rows = wait_for_rows(postgres_url, 3)
        assert sorted(str(row["session"]) for row in rows) == ["served"] * 3 and {row["os_user"] for row in rows} == {
            "gina"
        }
    finally:
        service.terminate()
        service.wait(timeout=30)


def test_a_process_with_threads_hands_its_rows_to_a_fresh_shipper(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook whose hooks left a thread running (a model client's) must not fork: it starts ``python -m guard.audit.shipping``."""
    import threading

    from guard.audit import AuditLog
    from guard.audit.handoff import ship_after_exit
    from guard.core.decision import Decision, HookResult
    from guard.core.settings import Settings

    monkeypatch.setenv("PYTHONPATH", SOURCE_ROOT)
    path = tmp_path / "audit.db"
    log = AuditLog(path)
    log.record(
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}},
        Decision(hooks=[HookResult("r", "command")]),
        latency_ms=1.0,
    )
    log.close()
    stop = threading.Event()
    busy = threading.Thread(target=stop.wait)
    busy.start()
    try:
        forked = []
        monkeypatch.setattr(
            os, "fork", lambda: forked.append(1) or 0
        )  # a fork here would run the shipper in this very process
        ship_after_exit(Settings(audit_url=postgres_url, audit_path=str(path)), path)
        assert not forked
    finally:
        stop.set()
        busy.join()
    assert len(wait_for_rows(postgres_url, 1)) == 1


def test_a_password_in_the_urls_query_is_shown_nowhere(tmp_path: Path) -> None:
    """libpq takes ``?password=`` as well as ``user:password@``: neither reaches a message, guard doctor or the local log's
    shipping positions (which the agent may read)."""
    erin = Home(
        tmp_path,
        "erin",
        f"audit:\n  url: postgresql://guard_writer@127.0.0.1:9/guard?sslmode=disable&password=hunter2\n{RULE}",
    )
    erin.hook("rm -rf build")
    shown = [erin.guard("log", "ship"), erin.guard("doctor")]
    assert "guard_writer@127.0.0.1:9/guard?sslmode=disable" in shown[0].stdout, shown[0].stdout
    db = sqlite3.connect(erin.log_file())
    stored = json.dumps(db.execute("SELECT * FROM audit_shipping").fetchall())
    db.close()
    assert "guard_writer@127.0.0.1:9/guard" in stored
    for said in [*(done.stdout + done.stderr for done in shown), stored]:
        assert "hunter2" not in said, said


def test_a_log_emptied_under_its_own_id_does_not_hide_the_rows_that_follow(postgres_url: str, tmp_path: Path) -> None:
    """Rows sent, then the local log emptied under the same log id (what an agent that got around protection might do): the rows
    that follow reach the store beside the first ones, and the store says the log was rewritten. (The next rows continue after
    guard's record of the log's end, kept outside it, and restart the chain saying why.)"""
    gwen = Home(tmp_path, "gwen", f"audit:\n  url: {postgres_url}\n{RULE}")
    for n in range(3):
        gwen.hook(f"echo {n}")
    assert len(wait_for_rows(postgres_url, 3)) == 3
    with sqlite3.connect(gwen.log_file()) as db:
        db.execute("DELETE FROM decisions")  # the file, its id and the store's position kept
        db.execute("DELETE FROM audit_head")  # and the chain's head: the next rows are #1, #2, #3 again
    for n in range(3):
        assert gwen.hook(f"rm -rf evidence{n}") == "deny"
    assert gwen.guard("log", "ship").returncode == 0
    rows = central_rows(postgres_url)
    assert {f"rm -rf evidence{n}" for n in range(3)} <= {row["payload"]["tool_input"]["command"] for row in rows}, rows  # type: ignore[index]
    verify = run_guard(["log", "verify", "--audit", postgres_url], tmp_path)
    assert verify.returncode == 1 and "#4: audit chain restarted" in verify.stdout, verify.stdout


def test_a_writer_with_the_documented_grants_cannot_hide_a_machines_rows(postgres_url: str, tmp_path: Path) -> None:
    """The agent may hold the writer's password (GUARD_AUDIT_PASSWORD, ~/.pgpass): with docs/audit-store.md's grants it reads no
    row, lowers no log's report, and rows it plants under the ids a machine will send next do not keep that machine's rows out."""
    import re

    import psycopg

    from guard.audit.postgres import SCHEMA

    grants = re.search(r"```sql\n(.*?)```", (Path(SOURCE_ROOT) / "docs" / "audit-store.md").read_text(), re.S)
    assert grants is not None
    with psycopg.connect(
        postgres_url, autocommit=True
    ) as db:  # the admin makes the tables and the roles, as the page says
        for statement in [*SCHEMA, *grants.group(1).split(";")]:
            if statement.strip():
                db.execute(statement.replace("'…'", "'pw'"))
    writer = postgres_url.replace("://guard@", "://guard_writer:pw@")
    hana = Home(tmp_path, "hana", f"audit:\n  url: {writer}\n{RULE}")
    assert hana.hook("echo 1") == "" and len(wait_for_rows(postgres_url, 1)) == 1, (
        "the documented grants are enough to ship"
    )
    (log_id,) = {row["log_id"] for row in central_rows(postgres_url)}
    with psycopg.connect(writer, autocommit=True) as db:  # what the agent does with the password
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            db.execute("SELECT payload FROM guard_decisions")
        db.execute("UPDATE guard_audit_logs SET last_local_id = 0, last_sent_id = 0, os_user = 'mallory'")
        for row_id in (2, 3):
            db.execute(
                "INSERT INTO guard_decisions (log_id, row_id, machine, os_user, time, decision, hooks, payload, payload_truncated, digest)"
                " VALUES (%s, %s, %s, 'hana', 0, 'allow', '[]', 'null', false, 'planted')",
                (log_id, row_id, os.uname().nodename),
            )
    with psycopg.connect(postgres_url) as db:
        assert db.execute("SELECT os_user, last_local_id FROM guard_audit_logs").fetchall() == [("hana", 1)], (
            "a report only grows"
        )
    for n in range(2):
        assert hana.hook(f"rm -rf evidence{n}") == "deny"
    assert hana.guard("log", "ship").returncode == 0
    commands = [row["payload"]["tool_input"]["command"] for row in central_rows(postgres_url) if row["payload"]]  # type: ignore[index]
    assert "rm -rf evidence0" in commands and "rm -rf evidence1" in commands
    verify = run_guard(["log", "verify", "--audit", postgres_url], tmp_path)
    assert verify.returncode == 1 and "#2–#3 arrived twice with different contents" in verify.stdout, verify.stdout
