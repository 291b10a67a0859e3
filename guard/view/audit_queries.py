"""The view's read-only queries on the audit log, shaped so 100,000 rows answer in milliseconds.

Lists are keyset-paginated on ``id`` (newest first: ``id < before``), never
``OFFSET``: page 200 costs what page 1 costs. Filters use the indexes migration
``m003_view_indexes`` adds (decision, tool, session, time; a rule through
``decision_hooks``; text through the trigram index ``decisions_text``). An
older file is migrated once when the view first opens it; after that the view
only reads (``PRAGMA query_only``).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guard.audit import migration, parsed_row
from guard.cache.database import connect

__all__ = ["MIN_SEARCH", "AuditQueries", "DecisionFilters", "RuleStats"]

#: The trigram index finds substrings of at least three characters.
MIN_SEARCH = 3
_FILTER_VERDICTS = ("allow", "ask", "deny", "unjudged")


@dataclass(frozen=True)
class DecisionFilters:
    """What the decisions list is narrowed to; every field is optional and they combine with AND."""

    decision: str | None = None  # allow, ask, deny, or unjudged (a fail-open or warning allow)
    rule: str | None = None
    tool: str | None = None
    session: str | None = None
    client: str | None = None
    since: float | None = None  # epoch seconds, inclusive
    until: float | None = None  # epoch seconds, exclusive
    text: str | None = None

    def __post_init__(self) -> None:
        if self.decision is not None and self.decision not in _FILTER_VERDICTS:
            raise ValueError(f"decision must be one of {', '.join(_FILTER_VERDICTS)}, got {self.decision!r}")
        if self.text is not None and len(self.text) < MIN_SEARCH:
            raise ValueError(f"search for at least {MIN_SEARCH} characters")

    def where(self) -> tuple[list[str], list[Any]]:
        """SQL conditions on ``d`` (the decisions table) and their parameters."""
        clauses: list[str] = []
        params: list[Any] = []
        if self.decision == "unjudged":
            clauses.append("d.judged = 0")
        elif self.decision is not None:
            clauses.append("d.decision = ?")
            params.append(self.decision)
        for column in ("tool", "session", "client"):
            value = getattr(self, column)
            if value is not None:
                clauses.append(f"d.{column} = ?")
                params.append(value)
        if self.since is not None:
            clauses.append("d.time >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append("d.time < ?")
            params.append(self.until)
        if self.rule is not None:
            clauses.append("d.id IN (SELECT decision_id FROM decision_hooks WHERE hook = ?)")
            params.append(self.rule)
        if self.text is not None:
            clauses.append("d.id IN (SELECT rowid FROM decisions_text WHERE decisions_text MATCH ?)")
            params.append('"' + self.text.replace('"', '""') + '"')  # one phrase: a substring, whatever its characters
        return clauses, params


@dataclass
class RuleStats:
    """One rule's (hook's) record over the chosen time range."""

    hook: str
    type: str | None
    calls: int
    allow: int
    ask: int
    deny: int
    abstain: int
    errors: int
    fail_open: int
    cached: int
    cost_usd: float | None
    p50_ms: float | None = None
    p95_ms: float | None = None
    #: Per time bucket: counts of allow, ask, deny, abstain.
    buckets: list[dict[str, int]] = field(default_factory=list)

    def rate(self, count: int) -> float:
        return count / self.calls if self.calls else 0.0


def _row_dict(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> dict[str, Any]:
    return {column[0]: value for column, value in zip(cursor.description, row)}


class AuditQueries:
    """Read-only access to one audit log file (absent file: every list is empty)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._migrated = False

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection | None]:
        if self.path is None or not self.path.exists():
            yield None
            return
        if not self._migrated:
            connect(self.path, migration).close()  # an older file gains the view's tables and indexes, once
            self._migrated = True
        db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA query_only = 1")
            db.row_factory = _row_dict
            yield db
        finally:
            db.close()

    def decisions(self, filters: DecisionFilters, *, before: int | None = None, after: int | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Up to ``limit`` matching rows, newest first, older than ``before`` or newer than ``after`` (ids)."""
        clauses, params = filters.where()
        if before is not None:
            clauses.append("d.id < ?")
            params.append(before)
        if after is not None:
            clauses.append("d.id > ?")
            params.append(after)
        where = " AND ".join(clauses) or "1"
        sql = f"SELECT d.* FROM decisions d WHERE {where} ORDER BY d.id DESC LIMIT ?"
        with self._db() as db:
            if db is None:
                return []
            return [parsed_row(row) for row in db.execute(sql, (*params, limit))]

    def decision(self, row_id: int) -> dict[str, Any] | None:
        with self._db() as db:
            if db is None:
                return None
            row = db.execute("SELECT * FROM decisions WHERE id = ?", (row_id,)).fetchone()
            return parsed_row(row) if row else None

    def choices(self) -> dict[str, list[str]]:
        """The values the filter menus offer: every rule, tool and client seen (from their indexes)."""
        with self._db() as db:
            if db is None:
                return {"rule": [], "tool": [], "client": []}
            return {
                "rule": [r["hook"] for r in db.execute("SELECT DISTINCT hook FROM decision_hooks ORDER BY hook")],
                "tool": [r["tool"] for r in db.execute("SELECT DISTINCT tool FROM decisions WHERE tool IS NOT NULL ORDER BY tool")],
                "client": [r["client"] for r in db.execute("SELECT DISTINCT client FROM decisions WHERE client IS NOT NULL ORDER BY client")],
            }

    def rules(self, *, since: float | None = None, buckets: int = 30) -> tuple[list[RuleStats], tuple[float, float] | None]:
        """Every rule's counts, rates, latency percentiles and per-bucket verdicts; and the time span the buckets cover."""
        window, params = ("WHERE time >= ?", (since,)) if since is not None else ("", ())
        with self._db() as db:
            if db is None:
                return [], None
            span = db.execute(f"SELECT min(time) AS first, max(time) AS last FROM decision_hooks {window}", params).fetchone()
            if span["first"] is None:
                return [], None
            stats = [
                RuleStats(**row)
                for row in db.execute(
                    "SELECT hook, max(type) AS type, count(*) AS calls, sum(decision IS 'allow') AS allow, sum(decision IS 'ask') AS ask,"
                    " sum(decision IS 'deny') AS deny, sum(decision IS NULL) AS abstain, sum(error IS NOT NULL) AS errors,"
                    " sum(error IS NOT NULL AND decision IS NULL) AS fail_open, sum(cached) AS cached, sum(cost_usd) AS cost_usd"
                    f" FROM decision_hooks {window} GROUP BY hook ORDER BY calls DESC",
                    params,
                )
            ]
            first, last = (since if since is not None else span["first"]), span["last"]
            width = max((last - first) / buckets, 1e-6)
            for rule in stats:
                rule.p50_ms, rule.p95_ms = _percentiles(db, rule.hook, since)
                rule.buckets = [{"allow": 0, "ask": 0, "deny": 0, "abstain": 0} for _ in range(buckets)]
                for row in db.execute(
                    "SELECT min(CAST((time - ?) / ? AS INTEGER), ?) AS b, coalesce(decision, 'abstain') AS verdict, count(*) AS n"
                    " FROM decision_hooks WHERE hook = ? AND time >= ? GROUP BY b, verdict",
                    (first, width, buckets - 1, rule.hook, first),
                ):
                    rule.buckets[row["b"]][row["verdict"]] += row["n"]
            return stats, (first, last)


def _percentiles(db: sqlite3.Connection, hook: str, since: float | None) -> tuple[float | None, float | None]:
    """p50 and p95 of the hook's uncached latencies, read off the (hook, cached, latency_ms) index."""
    window, params = ("AND time >= ?", (since,)) if since is not None else ("", ())
    base = f"FROM decision_hooks WHERE hook = ? AND cached = 0 AND latency_ms IS NOT NULL {window}"
    n = db.execute(f"SELECT count(*) AS n {base}", (hook, *params)).fetchone()["n"]
    if not n:
        return None, None

    def at(q: float) -> float:
        offset = min(n - 1, max(0, math.ceil(q * n) - 1))
        return float(db.execute(f"SELECT latency_ms {base} ORDER BY latency_ms LIMIT 1 OFFSET ?", (hook, *params, offset)).fetchone()["latency_ms"])

    return at(0.50), at(0.95)

