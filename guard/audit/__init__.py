"""The audit log: every decision guard made, appended to a SQLite file.

The engine records each decision here (by default a file per config in the
user's state directory, see :func:`guard.core.settings.default_audit_path`); ``guard
log`` reads it back. A row keeps what a person reviewing an incident asks for:
when, which event and tool, which session, what every hook said (verdict, tier,
model, cache hit, latency, cost, error) and the final decision. The event payload
is kept too, with configured fields redacted at any depth and long strings
shortened (then the whole cut at ``PAYLOAD_LIMIT``), so the log stays small and
secrets stay out of it. A row records whether its payload was shortened or cut,
because ``guard backtest`` replays only payloads kept whole; a person may label a
row (``guard log label``) so it becomes a regression case. Standard library only:
it is written on the ``guard hook`` path.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guard.audit import chain as audit_chain
from guard.audit import index as audit_index
from guard.core.decision import DECISIONS, REDACTED
from guard.core.events.names import canonical_event
from guard.core.logs import LazyLogger
from guard.storage.database import Migrations, connect

if TYPE_CHECKING:
    from guard.core.decision import Decision
    from guard.core.settings import Settings

__all__ = [
    "LABELS",
    "PAYLOAD_LIMIT",
    "REDACTED",
    "AuditLog",
    "open_audit",
    "parsed_row",
    "redacted",
    "redacted_details",
    "redacted_hook",
    "redacted_text",
]

#: Characters of payload JSON kept per row; the rest is cut and marked.
PAYLOAD_LIMIT = 4096
#: Verdicts a person can give a logged decision.
LABELS = DECISIONS  # what a user may label a logged decision with (guard log label)

migration = Migrations("_guard_audit_migrations")
log = LazyLogger("guard.audit")


@migration
def m001_decisions(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE decisions (
            id INTEGER PRIMARY KEY,
            time REAL NOT NULL,
            event TEXT,
            tool TEXT,
            session TEXT,
            decision TEXT NOT NULL,
            reason TEXT,
            latency_ms REAL,
            cost_usd REAL,
            hooks TEXT NOT NULL,
            payload TEXT NOT NULL,
            payload_truncated INTEGER NOT NULL DEFAULT 0,
            details TEXT
        )"""
    )
    db.execute("CREATE INDEX decisions_time ON decisions (time)")


@migration
def m002_replay_and_label(db: sqlite3.Connection) -> None:
    """Whether long strings were shortened (NULL on older rows: unknown), and a person's label."""
    db.execute("ALTER TABLE decisions ADD COLUMN payload_shortened INTEGER")
    db.execute("ALTER TABLE decisions ADD COLUMN label TEXT")


@migration
def m003_view_indexes(db: sqlite3.Connection) -> None:
    """The client format, whether the call was judged, its warnings; and what ``guard view`` queries by (:mod:`guard.audit.index`).

    Rows written before have no client and no warnings (NULL); they are indexed
    (and whether they were judged read back) by ``guard view``, not here: a
    ``guard hook`` process that migrates a big old log must still answer in time.
    """
    db.execute("ALTER TABLE decisions ADD COLUMN client TEXT")
    db.execute("ALTER TABLE decisions ADD COLUMN judged INTEGER")
    db.execute("ALTER TABLE decisions ADD COLUMN warnings TEXT")
    audit_index.create(db)
    audit_index.mark_unindexed(db)


@migration
def m004_sealed_chain(db: sqlite3.Connection) -> None:
    """Each new row sealed to the one before it, and a sealed head (:mod:`guard.audit.chain`); the rows already there stay unchained."""
    audit_chain.create(db)


@migration
def m005_shadow_verdicts(db: sqlite3.Connection) -> None:
    """Shadow hooks' verdicts indexed apart from enforced ones (:func:`guard.audit.index.add_shadow`)."""
    audit_index.add_shadow(db)


@migration
def m006_shipping(db: sqlite3.Connection) -> None:
    """The log's own id and each audit store's position in it (:mod:`guard.audit.shipping`)."""
    from guard.audit import shipping

    shipping.create(db)


@migration
def m007_shipped_digest(db: sqlite3.Connection) -> None:
    """What the row at each store's position held when it was sent: a log rewritten beneath the position is sent again."""
    db.execute("ALTER TABLE audit_shipping ADD COLUMN sent_digest TEXT")


def redacted(value: Any, names: frozenset[str]) -> Any:
    """``value`` with every dict entry whose key (case-insensitive) is in ``names`` replaced (``value`` itself when there are none)."""
    if not names:
        return value
    if isinstance(value, dict):
        return {k: REDACTED if str(k).lower() in names else redacted(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v, names) for v in value]
    return value


#: A ``"name":`` in JSON text, for JSON text that cannot be parsed (a payload cut mid-text, a hook's reason echoing its event).
_JSON_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*')


def _value_end(text: str, start: int) -> int:
    """Where the JSON value at ``start`` ends: a whole object or array, strings and nesting included (the end of a cut text)."""
    depth, quoted, at = 0, False, start
    while at < len(text):
        char = text[at]
        if quoted:
            if char == "\\":
                at += 1
            elif char == '"':
                quoted = False
                if depth == 0:
                    return at + 1
        elif char == '"':
            quoted = True
        elif char in "{[":
            depth += 1
        elif char in "}]" or (char == "," and depth == 0):
            if depth == 0:
                return at
            depth -= 1
            if depth == 0:
                return at + 1
        at += 1
    return len(text)


def redacted_text(text: str, names: frozenset[str]) -> str:
    """JSON text (possibly cut mid-way) with the whole value of every member named in ``names`` replaced, nested ones too."""
    if not names:
        return text
    kept, at = [], 0
    while (key := _JSON_KEY.search(text, at)) is not None:
        if key.group(1).lower() in names:
            kept.append(f'{text[at : key.end()]}"{REDACTED}"')
            at = _value_end(text, key.end())
        else:
            kept.append(text[at : key.end()])  # go on inside the value: a named member may be nested in it
            at = key.end()
    return "".join(kept) + text[at:]


def redacted_hook(
    hook: dict[str, Any], names: frozenset[str], texts: tuple[str, ...] = ("reason", "error")
) -> dict[str, Any]:
    """One hook's result (or a deciding rule, ``texts=("why",)``) with the named fields hidden, in its ``texts`` too:
    a hook may echo the event it was given, and a deciding rule's ``why`` is that hook's reason."""
    if not names:
        return hook
    clean: dict[str, Any] = redacted(hook, names)
    for key in texts:
        if isinstance(clean.get(key), str):
            clean[key] = redacted_text(clean[key], names)
    return clean


def redacted_details(details: dict[str, Any], names: frozenset[str]) -> dict[str, Any]:
    """A decision's details with the named fields hidden, in the deciding rules' reasons too (for rows logged before a name was added)."""
    if not names:
        return details
    clean: dict[str, Any] = redacted(details, names)
    if isinstance(clean.get("decided_by"), list):
        clean["decided_by"] = [
            redacted_hook(rule, names, ("why",)) if isinstance(rule, dict) else rule for rule in clean["decided_by"]
        ]
    return clean


def _event_name(name: Any) -> str | None:
    """The canonical event name, or the raw one if it is not a known spelling."""
    if not isinstance(name, str):
        return None
    try:
        return canonical_event(name)
    except ValueError:
        return name


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


def _clip(value: Any, longest: int) -> Any:
    """``value`` with strings over ``longest`` characters cut, saying how much was dropped.

    Cutting each long string (a whole file in ``tool_input.content``) keeps the
    payload's other fields and its JSON shape, where cutting the text would not.
    """
    if isinstance(value, str) and len(value) > longest:
        return f"{value[:longest]}…[{len(value) - longest} more characters]"
    if isinstance(value, dict):
        return {k: _clip(v, longest) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip(v, longest) for v in value]
    return value


def parsed_row(row: dict[str, Any]) -> dict[str, Any]:
    """A ``decisions`` row with its JSON columns read back (a payload cut mid-text stays text)."""
    row["hooks"] = json.loads(row["hooks"])
    row["details"] = json.loads(row["details"]) if row["details"] else {}
    row["warnings"] = json.loads(row["warnings"]) if row.get("warnings") else []
    row["payload_truncated"] = bool(row["payload_truncated"])
    if not row["payload_truncated"]:
        row["payload"] = json.loads(row["payload"])
    return row


class AuditLog:
    """Append-only decision log in SQLite; the file is created on the first record."""

    def __init__(
        self, path: str | os.PathLike[str], redact: Iterable[str] = (), *, payload_limit: int = PAYLOAD_LIMIT
    ) -> None:
        self.path = Path(path)
        self.redact = frozenset(name.lower() for name in redact)
        self.payload_limit = payload_limit
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = connect(self.path, migration)
        return self._db

    def _reading(self) -> sqlite3.Connection:
        """The connection for a reader: a file that is not a readable log is a clear error, never a traceback."""
        try:
            return self._connection()
        except sqlite3.DatabaseError as exc:
            raise _unreadable(self.path, exc) from exc

    def _payload_text(self, payload: dict[str, Any]) -> tuple[str, bool, bool]:
        """The redacted payload as JSON within the limit, whether it had to be cut mid-text, and whether strings were shortened."""
        clean = redacted(payload, self.redact)
        text = _compact(clean)
        if len(text) <= self.payload_limit:
            return text, False, False
        text = _compact(_clip(clean, self.payload_limit // 4))
        if len(text) > self.payload_limit:
            return text[: self.payload_limit], True, True
        return text, False, True

    def record(
        self, payload: dict[str, Any], decision: Decision, *, latency_ms: float, client: str | None = None
    ) -> None:
        """Append one decision: the event payload (redacted, shortened), every hook's result, and the ``client`` format it came in."""
        self.record_many([(payload, decision, latency_ms, client)])

    def record_many(
        self, entries: Sequence[tuple[dict[str, Any], Decision, float, str | None]], *, note: bool = True
    ) -> None:
        """Append (payload, decision, latency_ms, client) entries in one transaction: the audit writer batches what queued.

        Each row is sealed into the chain in that transaction. A file that is not
        a readable database is set aside and the rows go to a new log (its first
        row says so); any failure is noted beside the log (unless ``note`` is off:
        the writer retries a failed batch row by row and notes each row lost), then raised.
        """
        rows = [self._row(*entry) for entry in entries]
        with self._lock:
            try:
                self._append(rows)
            except Exception as exc:
                from guard.audit import recovery  # here: only a write that failed needs it

                try:
                    if not recovery.is_damaged(exc):
                        raise
                    self.close_unlocked()
                    self._start_anew(rows, exc, recovery.set_aside(self.path))
                except Exception as failed:
                    if note:
                        recovery.note_failure(self.path, failed)
                    raise

    def _start_anew(
        self, rows: list[tuple[tuple[Any, ...], list[dict[str, Any]]]], exc: BaseException, moved: Path
    ) -> None:
        """Write ``rows`` to a new log (the damaged one closed and set aside as ``moved``), its first row saying why."""
        warning = f"the audit log {self.path} could not be read ({exc}); it was set aside as {moved.name} and this log started anew"
        log.warning("%s", warning)
        first, hooks = rows[0]
        rows = [(_with_warning(first, warning), hooks), *rows[1:]]
        self._append(rows)

    def _append(self, rows: list[tuple[tuple[Any, ...], list[dict[str, Any]]]]) -> None:
        db = self._connection()
        recorded = audit_chain.read_record(self.path)
        db.execute("BEGIN IMMEDIATE")
        try:
            chain = audit_chain.ChainWriter(db, recorded)
            if chain.restart and rows:
                first, hooks = rows[0]
                rows = [(_with_warning(first, f"audit chain restarted: {chain.restart}"), hooks), *rows[1:]]
            for row, hooks in rows:
                row_id, link = chain.seal(row)
                db.execute(
                    "INSERT INTO decisions (id, time, event, tool, session, decision, reason, latency_ms, cost_usd, hooks, payload,"
                    " payload_truncated, payload_shortened, details, client, judged, warnings, chain) VALUES"
                    " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (row_id, *row, link),
                )
                audit_index.write(db, row_id, row[0], row[2], row[5], row[9], hooks)
            chain.finish()
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        if chain.sealed:  # after the commit: the record never names a row the log has yet to show
            audit_chain.write_record(self.path, chain.next_id - 1, chain.previous)

    def _row(
        self, payload: dict[str, Any], decision: Decision, latency_ms: float, client: str | None
    ) -> tuple[tuple[Any, ...], list[dict[str, Any]]]:
        """The ``decisions`` row for one decision, and its hooks' results (redacted) for the index."""
        hooks = [redacted_hook(h.to_dict(), self.redact) for h in decision.hooks]
        costs = [h.cost_usd for h in decision.hooks if h.cost_usd is not None]
        text, truncated, shortened = self._payload_text(payload)
        details = {**decision.details}
        if decision.updated_input is not None:
            details["updated_input"] = redacted(decision.updated_input, self.redact)
        if decision.additional_context:
            details["additional_context"] = decision.additional_context
        if decision.decided_by:  # which rules decided, who, and whether final: what the agent and the user were told
            details["decided_by"] = [
                redacted_hook(rule.to_dict(), self.redact, ("why",)) for rule in decision.decided_by
            ]
        row = (
            time.time(),
            _event_name(payload.get("hook_event_name")),
            payload.get("tool_name"),
            payload.get("session_id"),
            decision.decision,
            redacted_text(decision.reason, self.redact) if decision.reason else decision.reason,
            latency_ms,
            sum(costs) if costs else None,
            _compact(hooks),
            text,
            int(truncated),
            int(shortened),
            _compact(details) if details else None,
            client,
            int(decision.judged),
            _compact([redacted_text(w, self.redact) for w in decision.warnings]) if decision.warnings else None,
        )
        return row, hooks

    def _select(self, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        """Rows of ``sql`` with their JSON columns read back (a cut payload stays text)."""
        if not self.path.exists():
            return []
        with self._lock:
            try:
                cursor = self._reading().execute(sql, params)
            except sqlite3.DatabaseError as exc:
                raise _unreadable(self.path, exc) from exc
            names = [column[0] for column in cursor.description]
            rows = [dict(zip(names, row)) for row in cursor.fetchall()]
        return [parsed_row(row) for row in rows]

    def tail(self, limit: int = 20) -> list[dict[str, Any]]:
        """The latest ``limit`` decisions, oldest first (as ``tail`` prints them)."""
        return self._select("SELECT * FROM (SELECT * FROM decisions ORDER BY id DESC LIMIT ?) ORDER BY id", (limit,))

    def rows(
        self, *, since: float | None = None, session: str | None = None, labeled: bool = False
    ) -> list[dict[str, Any]]:
        """Every decision at or after ``since`` (epoch seconds), of one ``session``, or only labeled ones; oldest first."""
        clauses: list[str] = ["1"]
        params: list[float | str] = []
        if since is not None:
            clauses.append("time >= ?")
            params.append(since)
        if session is not None:
            clauses.append("session = ?")
            params.append(session)
        if labeled:
            clauses.append("label IS NOT NULL")
        return self._select(f"SELECT * FROM decisions WHERE {' AND '.join(clauses)} ORDER BY id", tuple(params))

    def set_label(self, row_id: int, label: str) -> bool:
        """Store a person's verdict on row ``row_id``; False when there is no such row."""
        if label not in LABELS:
            raise ValueError(f"label must be one of {', '.join(LABELS)}, got {label!r}")
        if not self.path.exists():
            return False
        with self._lock:
            try:
                cursor = self._reading().execute("UPDATE decisions SET label = ? WHERE id = ?", (label, row_id))
            except sqlite3.DatabaseError as exc:
                raise _unreadable(self.path, exc) from exc
        return cursor.rowcount == 1

    def verify(self) -> audit_chain.ChainReport:
        """Check the sealed chain of every row and that the log continues its end as recorded outside it
        (:func:`guard.audit.chain.verify_chain`); a file that cannot be read is a GuardError."""
        with self._lock:
            recorded = audit_chain.read_record(self.path)
            db = self._reading()
            factory = db.text_factory
            db.text_factory = lambda data: data.decode("utf-8", "replace")  # a row written by hand may hold any bytes
            try:
                return audit_chain.verify_chain(db, recorded=recorded)
            except sqlite3.DatabaseError as exc:
                raise _unreadable(self.path, exc) from exc
            finally:
                db.text_factory = factory

    def close(self) -> None:
        with self._lock:
            self.close_unlocked()

    def close_unlocked(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def _with_warning(row: tuple[Any, ...], warning: str) -> tuple[Any, ...]:
    """``row`` (the ``decisions`` values) with ``warning`` added to its warnings column."""
    at = audit_chain.WARNINGS
    kept = json.loads(row[at]) if row[at] else []
    return (*row[:at], _compact([warning, *kept]), *row[at + 1 :])


def _unreadable(path: Path, exc: BaseException) -> Exception:
    from guard.audit.recovery import is_damaged  # here: only a log that could not be read needs it
    from guard.core.errors import GuardError

    what = "is not a readable audit log" if is_damaged(exc) else "cannot be read"
    return GuardError(
        f"{path} {what} ({exc}); guard hook sets a damaged log aside and starts a new one on its next decision"
    )


def open_audit(settings: Settings) -> AuditLog:
    """The audit log a config names (callers check ``settings.audit_path`` is set)."""
    assert settings.audit_path is not None
    return AuditLog(settings.path(settings.audit_path), redact=settings.audit_redact)
