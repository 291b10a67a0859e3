"""The view's read-only queries on the audit log, shaped so 100,000 rows answer in milliseconds.

Lists are keyset-paginated on ``id`` (newest first: ``id < before``), never
``OFFSET``: page 200 costs what page 1 costs. Filters use the indexes migration
``m003_view_indexes`` adds (decision, tool, session, client, time; a rule
through ``decision_hooks``; text through the trigram index ``decisions_text``);
the rules page reads hourly rollups (see :mod:`guard.audit.index`). An
older file is migrated and its rows indexed once when the view first opens it;
after that the view only reads (``PRAGMA query_only``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guard.audit import index as audit_index
from guard.audit import migration
from guard.audit.index import latency_of_bin
from guard.core.decision import ABSTAIN, BY_STRICTNESS, STOPS
from guard.storage.database import connect
from guard.view.audit_rows import checked_row

__all__ = ["MIN_SEARCH", "AuditQueries", "DecisionFilters", "RuleStats"]

#: The trigram index finds substrings of at least three characters.
MIN_SEARCH = 3
_FILTER_VERDICTS = (*BY_STRICTNESS, "unjudged")
_VERDICTS = (*BY_STRICTNESS, ABSTAIN)


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
        if self.text is not None and "\x00" in self.text:
            raise ValueError("search text cannot hold a NUL character (SQLite's full-text query ends at one)")

    def select(
        self, *, before: int | None, after: int | None, limit: int, text_index: bool = True
    ) -> tuple[str, list[Any]]:
        """The SQL for up to ``limit`` matching rows, newest first, between the ids ``after`` and ``before``.

        A search or a rule drives the query from its own index in id order
        (``CROSS JOIN`` keeps SQLite from reordering), so the first page of a
        term found in every row reads a page of rows, not every match; other
        filters use their ``(column, id)`` indexes.
        """
        source, key = "decisions d", "d.id"
        clauses: list[str] = []
        params: list[Any] = []
        if self.text is not None and text_index:
            source, key = "decisions_text t CROSS JOIN decisions d ON d.id = t.rowid", "t.rowid"
            clauses.append("decisions_text MATCH ?")
            params.append('"' + self.text.replace('"', '""') + '"')  # one phrase: a substring, whatever its characters
        elif (
            self.text is not None
        ):  # a file without the trigram index: the same text, scanned (case-insensitive, as trigram is)
            clauses.append(
                "(coalesce(d.tool, '') || char(10) || coalesce(d.reason, '') || char(10) || d.payload) LIKE ? ESCAPE '\\'"
            )
            params.append("%" + self.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        if self.rule is not None and source == "decisions d":
            source, key = "decision_hooks h CROSS JOIN decisions d ON d.id = h.decision_id", "h.decision_id"
            clauses.append("h.hook = ?")
            params.append(self.rule)
        elif self.rule is not None:
            clauses.append("d.id IN (SELECT decision_id FROM decision_hooks WHERE hook = ?)")
            params.append(self.rule)
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
        for bound, op, value in (
            ("d.time", ">=", self.since),
            ("d.time", "<", self.until),
            (key, "<", before),
            (key, ">", after),
        ):
            if value is not None:
                clauses.append(f"{bound} {op} ?")
                params.append(value)
        return f"SELECT d.* FROM {source} WHERE {' AND '.join(clauses) or '1'} ORDER BY {key} DESC LIMIT ?", [
            *params,
            limit,
        ]


@dataclass
class RuleStats:
    """One rule's (hook's) record over the chosen time range."""

    hook: str
    type: str | None
    calls: int = 0
    allow: int = 0
    ask: int = 0
    deny: int = 0
    errors: int = 0
    fail_open: int = 0
    cached: int = 0
    cost_usd: float | None = None
    #: Of judged (uncached) calls, read off a histogram: at most 20% above the true value.
    p50_ms: float | None = None
    p95_ms: float | None = None
    #: Per time bucket: counts of allow, ask, deny, abstain.
    buckets: list[dict[str, int]] = field(default_factory=list)
    #: What the rule would have done while in shadow mode (never part of an answer).
    shadow_calls: int = 0
    shadow_allow: int = 0
    shadow_ask: int = 0
    shadow_deny: int = 0
    #: The latest calls it would have denied or asked about in shadow: decision id, time, tool, verdict, reason.
    shadow_examples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def abstain(self) -> int:
        return self.calls - self.allow - self.ask - self.deny

    def rate(self, count: int) -> float:
        return count / self.calls if self.calls else 0.0

    def add(self, hour: dict[str, Any]) -> None:
        """Count one hour's rollup row in."""
        for name in (
            "calls",
            "allow",
            "ask",
            "deny",
            "errors",
            "fail_open",
            "cached",
            "shadow_calls",
            "shadow_allow",
            "shadow_ask",
            "shadow_deny",
        ):
            setattr(self, name, getattr(self, name) + hour[name])
        if hour["cost_usd"] is not None:
            self.cost_usd = (self.cost_usd or 0.0) + hour["cost_usd"]


def _row_dict(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> dict[str, Any]:
    return {column[0]: value for column, value in zip(cursor.description, row)}


class AuditQueries:
    """Read-only access to one audit log file (absent file: every list is empty)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._migrated = False

    def index_older_rows(self) -> int:
        """Give an older file the view's tables and index its rows (once; ``guard view`` does it before it listens); how many were indexed."""
        if self.path is None or not self.path.exists():
            return 0
        writer = connect(self.path, migration)
        try:
            indexed = audit_index.backfill(writer)
        finally:
            writer.close()
        self._migrated = True
        return indexed

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection | None]:
        if self.path is None or not self.path.exists():
            yield None
            return
        if not self._migrated:
            self.index_older_rows()
        db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA query_only = 1")
            db.text_factory = lambda data: data.decode("utf-8", "replace")  # a row written by hand may hold any bytes
            db.row_factory = _row_dict
            yield db
        finally:
            db.close()

    def decisions(
        self, filters: DecisionFilters, *, before: int | None = None, after: int | None = None, limit: int = 50
    ) -> list[dict[str, Any]]:
        """Up to ``limit`` matching rows, newest first, older than ``before`` or newer than ``after`` (ids)."""
        with self._db() as db:
            if db is None:
                return []
            sql, params = filters.select(
                before=before, after=after, limit=limit, text_index=audit_index.has_text_index(db)
            )
            return [checked_row(row) for row in db.execute(sql, params)]

    def decision(self, row_id: int) -> dict[str, Any] | None:
        with self._db() as db:
            if db is None:
                return None
            row = db.execute("SELECT * FROM decisions WHERE id = ?", (row_id,)).fetchone()
            return checked_row(row) if row else None

    def choices(self) -> dict[str, list[str]]:
        """The values the filter menus offer: every rule, tool and client seen (from their indexes)."""
        with self._db() as db:
            if db is None:
                return {"rule": [], "tool": [], "client": []}
            return {
                "rule": _distinct(db, "decision_hooks", "hook"),
                "tool": _distinct(db, "decisions", "tool"),
                "client": _distinct(db, "decisions", "client"),
            }

    def rules(
        self, *, since: float | None = None, buckets: int = 30
    ) -> tuple[list[RuleStats], tuple[float, float] | None]:
        """Every rule's counts, latency percentiles and verdicts per time bucket, from the hourly rollups; and the span covered.

        Hour-grained: ``since`` starts at the top of its hour.
        """
        window, params = ("WHERE hour >= ?", (int(since // 3600),)) if since is not None else ("", ())
        with self._db() as db:
            if db is None:
                return [], None
            hours = db.execute(f"SELECT * FROM rule_hours {window} ORDER BY hook, hour", params).fetchall()
            if not hours:
                return [], None
            latency = db.execute(
                f"SELECT hook, bin, sum(n) AS n FROM rule_latency {window} GROUP BY hook, bin ORDER BY hook, bin",
                params,
            ).fetchall()
        last = max(h["hour"] for h in hours)
        first = (
            int(since // 3600) if since is not None else min(min(h["hour"] for h in hours), last - 23)
        )  # a chart spans a day at least
        count = min(buckets, last - first + 1)
        width = (last - first + 1) / count
        stats: dict[str, RuleStats] = {}
        for h in hours:
            rule = stats.get(h["hook"])
            if rule is None:
                rule = stats[h["hook"]] = RuleStats(
                    h["hook"], h["type"], buckets=[dict.fromkeys(_VERDICTS, 0) for _ in range(count)]
                )
            rule.add(h)
            bucket = rule.buckets[min(int((h["hour"] - first) / width), count - 1)]
            for verdict in _VERDICTS:
                bucket[verdict] += h[verdict] if verdict != ABSTAIN else h["calls"] - h["allow"] - h["ask"] - h["deny"]
        bins: dict[str, list[tuple[int, int]]] = {}
        for row in latency:
            bins.setdefault(row["hook"], []).append((row["bin"], row["n"]))
        for hook, histogram in bins.items():
            if hook in stats:
                stats[hook].p50_ms, stats[hook].p95_ms = _percentile(histogram, 0.50), _percentile(histogram, 0.95)
        with self._db() as db:
            for rule in stats.values():
                if rule.shadow_ask or rule.shadow_deny:
                    rule.shadow_examples = _shadow_examples(db, rule.hook, since)
        return sorted(stats.values(), key=lambda r: -(r.calls + r.shadow_calls)), (first * 3600.0, (last + 1) * 3600.0)


def _shadow_examples(
    db: sqlite3.Connection | None, hook: str, since: float | None, limit: int = 3
) -> list[dict[str, Any]]:
    """The latest calls ``hook`` would have denied or asked about in shadow, with its reason (from the row's hooks)."""
    if db is None:
        return []
    rows = db.execute(
        "SELECT d.* FROM decision_hooks h CROSS JOIN decisions d ON d.id = h.decision_id"
        f" WHERE h.hook = ? AND h.shadow = 1 AND h.decision IN ({', '.join('?' * len(STOPS))}) AND d.time >= ? ORDER BY h.decision_id DESC LIMIT ?",
        (hook, *STOPS, since or 0.0, limit),
    ).fetchall()
    examples = []
    for row in map(checked_row, rows):
        result = next((h for h in row["hooks"] if isinstance(h, dict) and h.get("id") == hook and h.get("shadow")), {})
        examples.append(
            {
                "id": row["id"],
                "time": row["time"],
                "tool": row["tool"],
                "verdict": result.get("decision"),
                "reason": result.get("reason"),
                "enforced": row["decision"],
            }
        )
    return examples


def _percentile(histogram: list[tuple[int, int]], q: float) -> float:
    """The upper bound of the latency bin holding quantile ``q`` of a (bin, count) histogram in bin order."""
    total = sum(n for _, n in histogram)
    seen = 0
    for index, n in histogram:
        seen += n
        if seen >= q * total:
            return latency_of_bin(index)
    return latency_of_bin(histogram[-1][0])


def _distinct(db: sqlite3.Connection, table: str, column: str) -> list[str]:
    """The distinct values of an indexed column, in order: one index seek per value, not a scan of the table."""
    sql = (
        f"WITH RECURSIVE seen(value) AS (SELECT min({column}) FROM {table}"
        f" UNION ALL SELECT (SELECT min({column}) FROM {table} WHERE {column} > seen.value) FROM seen WHERE seen.value IS NOT NULL)"
        " SELECT value FROM seen WHERE value IS NOT NULL"
    )
    return [row["value"] for row in db.execute(sql)]
