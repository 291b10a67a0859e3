"""The Postgres audit store (``audit.url``): every machine's decisions in one table, and what reads them back.

Written by the shipper (:mod:`guard.audit.shipping`) through psycopg 3 (the
``team`` extra), one transaction per batch: the rows (``ON CONFLICT DO NOTHING``,
so a batch sent twice after a lost acknowledgement counts once) and the log's
report (its newest local row and the newest sent), which is how the store knows
rows it has not received. Each row keeps the machine, the user and the local
log's id with its chain position (row id and seal); ``db_role`` is the Postgres
role that inserted it, the identity the store itself vouches for (give each
machine or user a role of its own with INSERT on ``guard_decisions`` and INSERT,
UPDATE on ``guard_audit_logs``). A row is keyed by its log, its id and the digest
of what it holds: a row id sent twice with different contents (a log emptied and
numbered again, or rows planted with a writer's password under ids a machine will
send) keeps both, and :meth:`AuditStore.gaps` names it. A log's report only grows
(a trigger): no writer lowers it to hide rows a machine named and never sent.

:class:`AuditStore` reads it for ``guard log --audit`` and ``guard view --audit``,
and :func:`AuditStore.gaps` says where the record is not whole: rows missing
inside a log, rows a log reported but never sent, and logs that were replaced.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from guard.audit.chain import restart_reason
from guard.audit.shipping import SHIPPED
from guard.core.errors import GuardError

if TYPE_CHECKING:
    from guard.audit.shipping import Identity

__all__ = ["AuditStore", "PostgresTarget", "SCHEMA"]

CONNECT_TIMEOUT_S = 5
SCHEMA = (
    """CREATE TABLE IF NOT EXISTS guard_audit_logs (
        log_id text PRIMARY KEY,
        machine text NOT NULL,
        os_user text NOT NULL,
        log_path text NOT NULL,
        created double precision NOT NULL,
        last_local_id bigint NOT NULL DEFAULT 0,
        last_sent_id bigint NOT NULL DEFAULT 0,
        last_report timestamptz NOT NULL DEFAULT now(),
        db_role text NOT NULL DEFAULT current_user)""",
    """CREATE TABLE IF NOT EXISTS guard_decisions (
        seq bigserial UNIQUE,
        log_id text NOT NULL,
        row_id bigint NOT NULL,
        machine text NOT NULL,
        os_user text NOT NULL,
        time double precision NOT NULL,
        event text,
        tool text,
        session text,
        decision text NOT NULL,
        reason text,
        latency_ms double precision,
        cost_usd double precision,
        hooks text NOT NULL,
        payload text NOT NULL,
        payload_truncated boolean NOT NULL,
        details text,
        client text,
        judged boolean,
        warnings text,
        chain text,
        digest text NOT NULL,
        received timestamptz NOT NULL DEFAULT now(),
        db_role text NOT NULL DEFAULT current_user,
        PRIMARY KEY (log_id, row_id, digest))""",
    "CREATE INDEX IF NOT EXISTS guard_decisions_time ON guard_decisions (time)",
    # a writer may UPDATE the reports (its batches raise them) but never lower one nor rename a log: a lowered report would
    # hide rows a machine named and never sent, and every writer can reach every log's report
    """CREATE OR REPLACE FUNCTION guard_audit_logs_only_grow() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.log_id := OLD.log_id; NEW.machine := OLD.machine; NEW.os_user := OLD.os_user; NEW.log_path := OLD.log_path;
        NEW.created := OLD.created; NEW.db_role := OLD.db_role;
        NEW.last_local_id := greatest(OLD.last_local_id, NEW.last_local_id);
        NEW.last_sent_id := greatest(OLD.last_sent_id, NEW.last_sent_id);
        NEW.last_report := greatest(OLD.last_report, NEW.last_report);
        RETURN NEW;
    END $$""",
    """CREATE OR REPLACE TRIGGER guard_audit_logs_only_grow BEFORE UPDATE ON guard_audit_logs
        FOR EACH ROW EXECUTE FUNCTION guard_audit_logs_only_grow()""",
)
_ROW = ("log_id", "row_id", "machine", "os_user", *SHIPPED, "digest")
_INSERT = (
    f"INSERT INTO guard_decisions ({', '.join(_ROW)}) VALUES ({', '.join(['%s'] * len(_ROW))})"
    " ON CONFLICT (log_id, row_id, digest) DO NOTHING"
)
_REPORT = (
    "INSERT INTO guard_audit_logs (log_id, machine, os_user, log_path, created, last_local_id, last_sent_id) VALUES (%s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (log_id) DO UPDATE SET last_local_id = greatest(guard_audit_logs.last_local_id, excluded.last_local_id),"
    " last_sent_id = greatest(guard_audit_logs.last_sent_id, excluded.last_sent_id), last_report = now()"
)
#: What a reader selects: the row and where it came from.
_READ = ("seq", "machine", "os_user", "log_id", "row_id", *SHIPPED, "db_role")


def _connect(url: str) -> Any:
    from guard.core.extras import require

    require("team", "the Postgres audit store (audit.url)", ("psycopg",))
    import psycopg

    return psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, application_name="guard audit")


def _clean(value: Any) -> Any:
    """Text Postgres accepts: no NUL character (it ends a C string there), no lone surrogate (not UTF-8)."""
    if isinstance(value, str):
        return value.replace("\x00", "\\u0000").encode("utf-8", "replace").decode("utf-8")
    return value


def _params(row: dict[str, Any], source: Identity) -> tuple[Any, ...]:
    from guard.audit.shipping import digest

    values = {
        **row,
        "log_id": source.log_id,
        "row_id": row["id"],
        "machine": source.machine,
        "os_user": source.user,
        "digest": digest(row),
        "payload_truncated": bool(row["payload_truncated"]),
        "judged": None if row["judged"] is None else bool(row["judged"]),
    }
    return tuple(_clean(values[name]) for name in _ROW)


def ensure_schema(db: Any) -> None:
    """Create the tables unless they are there (under an advisory lock: two machines' first rows may race)."""
    with db.transaction():
        if db.execute(
            "SELECT to_regclass('guard_decisions') IS NOT NULL AND to_regclass('guard_audit_logs') IS NOT NULL"
        ).fetchone()[0]:
            return
        db.execute("SELECT pg_advisory_xact_lock(hashtext('guard audit schema'))")
        for statement in SCHEMA:
            db.execute(statement)


class PostgresTarget:
    """Sends batches to the store; a connection kept while it works, dropped on any error (the next batch reconnects)."""

    def __init__(self, url: str, name: str) -> None:
        self.url = url
        self.name = name
        self._db: Any = None

    def _connection(self) -> Any:
        if self._db is None:
            self._db = _connect(self.url)
            ensure_schema(self._db)
        return self._db

    def send(self, rows: list[dict[str, Any]], source: Identity) -> None:
        import psycopg

        db = self._connection()
        params = [_params(row, source) for row in rows]
        try:
            try:
                with db.transaction():
                    db.cursor().executemany(_INSERT, params)
                    self._report(db, source, rows)
            except psycopg.DataError:
                self._one_by_one(db, params, source, rows)
        except Exception:
            self.close()
            raise

    @staticmethod
    def _report(db: Any, source: Identity, rows: list[dict[str, Any]]) -> None:
        db.execute(
            _REPORT,
            (
                source.log_id,
                source.machine,
                source.user,
                source.log_path,
                source.created,
                source.last_id,
                rows[-1]["id"],
            ),
        )

    def _one_by_one(self, db: Any, params: list[tuple[Any, ...]], source: Identity, rows: list[dict[str, Any]]) -> None:
        """A batch the store refused as data: each row alone, and one it refuses stored as a stub naming why (never a gap that blocks the queue)."""
        import psycopg

        for values in params:
            try:
                with db.transaction():
                    db.execute(_INSERT, values)
            except psycopg.DataError as exc:
                stub = dict(zip(_ROW, values))
                stub.update(
                    reason=f"(the audit store refused this row: {exc})",
                    hooks="[]",
                    payload="null",
                    details=None,
                    warnings=None,
                )
                with db.transaction():
                    db.execute(_INSERT, tuple(stub[name] for name in _ROW))
        with db.transaction():
            self._report(db, source, rows)

    def close(self) -> None:
        if self._db is not None:
            try:
                self._db.close()
            finally:
                self._db = None


def _row(values: tuple[Any, ...]) -> dict[str, Any]:
    row = dict(zip(_READ, values))
    for name in ("hooks", "details", "warnings"):
        try:
            row[name] = json.loads(row[name]) if row[name] else ([] if name != "details" else {})
        except ValueError:
            pass
    if not row["payload_truncated"]:
        try:
            row["payload"] = json.loads(row["payload"])
        except ValueError:
            pass
    return row


class AuditStore:
    """Reads the store: rows from every machine, and where the record has gaps."""

    def __init__(self, url: str) -> None:
        try:
            self.db = _connect(url)
        except GuardError:
            raise
        except Exception as exc:
            from guard.audit.handoff import without_password

            raise GuardError(
                f"cannot reach the audit store {without_password(url)}: {type(exc).__name__}: {exc}"
            ) from exc
        self._ready = False

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if not self._ready:
            ensure_schema(self.db)
            self._ready = True
        with self.db.transaction():
            return list(self.db.execute(sql, params).fetchall())

    def latest(self, limit: int) -> list[dict[str, Any]]:
        """The newest ``limit`` rows of every machine, newest first."""
        return [
            _row(r)
            for r in self._query(
                f"SELECT {', '.join(_READ)} FROM guard_decisions ORDER BY time DESC, seq DESC LIMIT %s", (limit,)
            )
        ]

    def after(self, seq: int, limit: int) -> list[dict[str, Any]]:
        """Rows in the order they arrived, after arrival number ``seq`` (what a mirror copies next)."""
        return [
            _row(r)
            for r in self._query(
                f"SELECT {', '.join(_READ)} FROM guard_decisions WHERE seq > %s ORDER BY seq LIMIT %s", (seq, limit)
            )
        ]

    def gaps(self) -> list[str]:
        """Where the record is not whole, one line each (empty: every log's rows arrived in one unbroken run)."""
        logs = self._query(
            "SELECT l.log_id, l.machine, l.os_user, l.log_path, l.created, l.last_local_id, extract(epoch FROM l.last_report),"
            " count(d.row_id), min(d.row_id), max(d.row_id) FROM guard_audit_logs l LEFT JOIN guard_decisions d USING (log_id)"
            " GROUP BY l.log_id ORDER BY l.machine, l.os_user, l.log_path, l.created"
        )
        holes = self._query(
            "SELECT log_id, prev + 1, row_id - 1 FROM (SELECT log_id, row_id, lag(row_id) OVER (PARTITION BY log_id ORDER BY row_id) AS prev"
            " FROM guard_decisions) AS runs WHERE row_id - prev > 1 ORDER BY log_id, row_id"
        )
        twice: dict[str, list[int]] = {}
        for log_id, row_id in self._query(
            "SELECT log_id, row_id FROM guard_decisions GROUP BY log_id, row_id HAVING count(*) > 1 ORDER BY log_id, row_id"
        ):
            twice.setdefault(str(log_id), []).append(int(row_id))
        restarted: dict[str, list[tuple[int, str]]] = {}
        for log_id, row_id, warnings in self._query(
            "SELECT log_id, row_id, warnings FROM guard_decisions WHERE row_id > 1 AND strpos(warnings, 'audit chain restarted') > 0 ORDER BY log_id, row_id"
        ):
            restarted.setdefault(str(log_id), []).append((int(row_id), restart_reason(warnings)))
        inside: dict[str, list[tuple[int, int]]] = {}
        for log_id, first, last in holes:
            inside.setdefault(str(log_id), []).append((int(first), int(last)))
        newer: dict[tuple[str, str, str], float] = {}
        lines = []
        for log_id, machine, user, path, created, last_local, reported, count, first, last in reversed(logs):
            where = f"{user}@{machine} {path} (log {str(log_id)[:8]})"
            replaced = newer.get((machine, user, path))
            newer[(machine, user, path)] = float(created)
            if count and int(first) > 1:
                lines.append(f"{where}: {_span(1, int(first) - 1)} never arrived (deleted before they were sent)")
            for start, end in inside.get(str(log_id), []):
                lines.append(f"{where}: {_span(start, end)} never arrived (deleted before they were sent)")
            for start, end in _runs(twice.get(str(log_id), [])):
                lines.append(
                    f"{where}: {_span(start, end)} arrived twice with different contents (the local log was emptied or cut back"
                    " and numbered again under its id)"
                )
            for row_id, reason in restarted.get(str(log_id), []):
                lines.append(f"{where}: #{row_id}: {reason}")
            sent_up_to = int(last or 0)
            if int(last_local) > sent_up_to:
                span = _span(sent_up_to + 1, int(last_local))
                if replaced is not None:
                    lines.append(
                        f"{where}: {span} never arrived: the log was replaced (a new log began {_when(replaced)}) before they were sent"
                    )
                else:
                    lines.append(
                        f"{where}: {span} have not arrived yet (the machine's last report {_when(float(reported))})"
                    )
            if replaced is not None:
                lines.append(
                    f"{where}: replaced by a new log at {_when(replaced)} (the local log was deleted, reset or set aside)"
                )
        return list(reversed(lines))

    def close(self) -> None:
        self.db.close()


def _runs(ids: list[int]) -> list[tuple[int, int]]:
    """Sorted ids as (first, last) runs of consecutive ones."""
    runs: list[tuple[int, int]] = []
    for row_id in ids:
        if runs and runs[-1][1] == row_id - 1:
            runs[-1] = (runs[-1][0], row_id)
        else:
            runs.append((row_id, row_id))
    return runs


def _span(first: int, last: int) -> str:
    return f"#{first}" if first == last else f"#{first}–#{last}"


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))
