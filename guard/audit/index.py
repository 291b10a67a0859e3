"""What the audit log keeps beside each decision so ``guard view`` answers from indexes, never by parsing every row's JSON.

- ``decision_hooks``: one row per hook per decision, keyed by (hook, decision):
  the decisions list filtered by a rule is a range of this key.
- ``rule_hours``: per rule and hour, the calls, verdicts, errors, fail-open
  allows, cache hits and cost, added to as rows are written: the rules page
  reads a few hundred rows whatever the size of the log. A shadow hook's
  verdicts count apart (``shadow_calls``, ``shadow_allow``…): what it would
  have done is never mixed into what was enforced.
- ``rule_latency``: per rule and hour, a histogram of judged (uncached) latencies
  in bins 20% wide, so p50/p95 come out within 20% without keeping every value sorted.
- ``decisions_text``: a trigram full-text index (contentless) of the tool,
  reason and stored payload, for substring search; a SQLite without FTS5's
  trigram tokenizer (before 3.34) makes the file without it, and search scans.

Written in the same transaction as the decision, on the ``guard hook`` path:
standard library only, a handful of small inserts.
"""

from __future__ import annotations

import json
import math
import sqlite3
from typing import Any

__all__ = [
    "LATENCY_STEP",
    "add_shadow",
    "backfill",
    "create",
    "has_text_index",
    "judged_from",
    "latency_bin",
    "latency_of_bin",
    "mark_unindexed",
    "write",
]

#: Width of a latency bin: each bin's upper bound is this factor above the one before.
LATENCY_STEP = 1.2
_LATENCY_FLOOR_MS = 0.1

_INSERT_HOOK = (  # OR REPLACE: rows left by a decision deleted by hand never block a new one
    "INSERT OR REPLACE INTO decision_hooks (hook, decision_id, position, type, decision, tier, model, cached, latency_ms, cost_usd, error, shadow)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_ADD_HOUR = (
    "INSERT INTO rule_hours (hook, hour, type, calls, allow, ask, deny, errors, fail_open, cached, cost_usd) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (hook, hour) DO UPDATE SET calls = calls + 1, allow = allow + excluded.allow, ask = ask + excluded.ask,"
    " deny = deny + excluded.deny, errors = errors + excluded.errors, fail_open = fail_open + excluded.fail_open,"
    " cached = cached + excluded.cached, cost_usd = coalesce(cost_usd + excluded.cost_usd, cost_usd, excluded.cost_usd), type = excluded.type"
)
_ADD_SHADOW_HOUR = (
    "INSERT INTO rule_hours (hook, hour, type, calls, allow, ask, deny, errors, fail_open, cached, cost_usd, shadow_calls, shadow_allow, shadow_ask, shadow_deny)"
    " VALUES (?, ?, ?, 0, 0, 0, 0, ?, 0, 0, ?, 1, ?, ?, ?)"
    " ON CONFLICT (hook, hour) DO UPDATE SET shadow_calls = shadow_calls + 1, shadow_allow = shadow_allow + excluded.shadow_allow,"
    " shadow_ask = shadow_ask + excluded.shadow_ask, shadow_deny = shadow_deny + excluded.shadow_deny, errors = errors + excluded.errors,"
    " cost_usd = coalesce(cost_usd + excluded.cost_usd, cost_usd, excluded.cost_usd), type = excluded.type"
)
_ADD_LATENCY = "INSERT INTO rule_latency (hook, hour, bin, n) VALUES (?, ?, ?, 1) ON CONFLICT (hook, hour, bin) DO UPDATE SET n = n + 1"


def create(db: sqlite3.Connection) -> None:
    """The tables and indexes (a migration step)."""
    db.execute(
        """CREATE TABLE decision_hooks (
            hook TEXT NOT NULL,
            decision_id INTEGER NOT NULL,
            position INTEGER NOT NULL,
            type TEXT,
            decision TEXT,
            tier TEXT,
            model TEXT,
            cached INTEGER NOT NULL,
            latency_ms REAL,
            cost_usd REAL,
            error TEXT,
            PRIMARY KEY (hook, decision_id, position)
        ) WITHOUT ROWID"""
    )
    db.execute(
        """CREATE TABLE rule_hours (
            hook TEXT NOT NULL, hour INTEGER NOT NULL, type TEXT, calls INTEGER NOT NULL, allow INTEGER NOT NULL,
            ask INTEGER NOT NULL, deny INTEGER NOT NULL, errors INTEGER NOT NULL, fail_open INTEGER NOT NULL,
            cached INTEGER NOT NULL, cost_usd REAL, PRIMARY KEY (hook, hour)
        ) WITHOUT ROWID"""
    )
    db.execute(
        "CREATE TABLE rule_latency (hook TEXT NOT NULL, hour INTEGER NOT NULL, bin INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (hook, hour, bin)) WITHOUT ROWID"
    )
    try:
        db.execute("CREATE VIRTUAL TABLE decisions_text USING fts5(text, content='', tokenize='trigram')")
    except (
        sqlite3.OperationalError
    ):  # no FTS5, or no trigram tokenizer (SQLite before 3.34): guard view's search scans instead
        pass
    for column in ("decision", "tool", "session", "client"):
        db.execute(f"CREATE INDEX decisions_{column} ON decisions ({column}, id)")


def add_shadow(db: sqlite3.Connection) -> None:
    """Shadow verdicts beside enforced ones (a migration step: older rows had no shadow hooks, so 0 is right for them)."""
    db.execute("ALTER TABLE decision_hooks ADD COLUMN shadow INTEGER NOT NULL DEFAULT 0")
    for column in ("shadow_calls", "shadow_allow", "shadow_ask", "shadow_deny"):
        db.execute(f"ALTER TABLE rule_hours ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0")


def latency_bin(ms: float) -> int:
    return max(0, math.ceil(math.log(max(ms, _LATENCY_FLOOR_MS) / _LATENCY_FLOOR_MS, LATENCY_STEP) - 1e-9))


def latency_of_bin(index: int) -> float:
    """The upper bound of bin ``index``: a percentile read off the histogram is at most 20% above the true one."""
    return _LATENCY_FLOOR_MS * LATENCY_STEP**index


def judged_from(hooks: list[dict[str, Any]], details: dict[str, Any]) -> bool:
    """Whether a decision was judged, read from what older rows kept: no fail_open failure, no gate failure."""
    return not any(h.get("error") and h.get("decision") is None for h in hooks) and "failure" not in details


def write(
    db: sqlite3.Connection,
    decision_id: int,
    when: float,
    tool: Any,
    reason: Any,
    payload: str,
    hooks: list[dict[str, Any]],
) -> None:
    """Index one decision row (inside the caller's transaction)."""
    hour = int(when // 3600)
    rows, hours, shadows, latencies = [], [], [], []
    for position, h in enumerate(hooks):
        hook, verdict, error, cached = str(h.get("id")), h.get("decision"), h.get("error"), bool(h.get("cached"))
        latency, cost, shadow = h.get("latency_ms"), h.get("cost_usd"), bool(h.get("shadow"))
        rows.append(
            (
                hook,
                decision_id,
                position,
                h.get("type"),
                verdict,
                h.get("tier"),
                h.get("model"),
                int(cached),
                latency,
                cost,
                error,
                int(shadow),
            )
        )
        verdicts = (int(verdict == "allow"), int(verdict == "ask"), int(verdict == "deny"))
        if shadow:
            shadows.append((hook, hour, h.get("type"), int(bool(error)), cost, *verdicts))
        else:
            hours.append(
                (
                    hook,
                    hour,
                    h.get("type"),
                    *verdicts,
                    int(bool(error)),
                    int(bool(error) and verdict is None),
                    int(cached),
                    cost,
                )
            )
        if not cached and isinstance(latency, int | float):
            latencies.append((hook, hour, latency_bin(latency)))
    db.executemany(_INSERT_HOOK, rows)
    db.executemany(_ADD_HOUR, hours)
    db.executemany(_ADD_SHADOW_HOUR, shadows)
    db.executemany(_ADD_LATENCY, latencies)
    if has_text_index(db):
        db.execute(
            "INSERT INTO decisions_text (rowid, text) VALUES (?, ?)",
            (decision_id, f"{tool or ''}\n{reason or ''}\n{payload}"),
        )


def has_text_index(db: sqlite3.Connection) -> bool:
    """Whether this file has the trigram index (a file made by a SQLite without it has none)."""
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = 'decisions_text'").fetchone() is not None


def mark_unindexed(db: sqlite3.Connection) -> None:
    """Note that the rows already in the file (ids up to the largest) are not indexed yet (a migration step: cheap).

    The hook path must not pay for indexing a big old log: ``guard view`` does it (:func:`backfill`) before it reads.
    """
    db.execute("CREATE TABLE audit_backfill (upto INTEGER NOT NULL)")
    db.execute("INSERT INTO audit_backfill SELECT coalesce(max(id), 0) FROM decisions")


def backfill(db: sqlite3.Connection, batch: int = 2000) -> int:
    """Index the rows written before the index existed, newest first, ``batch`` rows per transaction; how many were indexed.

    Whether each was judged is read back from its hooks and details. Short
    transactions let ``guard hook`` processes write between batches.
    """
    done = 0
    while db.execute("SELECT upto FROM audit_backfill").fetchone()[0] > 0:
        db.execute("BEGIN IMMEDIATE")
        try:
            upto = db.execute("SELECT upto FROM audit_backfill").fetchone()[0]
            rows = db.execute(
                "SELECT id, time, tool, reason, hooks, payload, details FROM decisions WHERE id > ? AND id <= ?",
                (max(upto - batch, 0), upto),
            ).fetchall()
            for row_id, when, tool, reason, hooks_json, payload, details in rows:
                hooks = json.loads(hooks_json)
                write(db, row_id, when, tool, reason, payload, hooks)
                db.execute(
                    "UPDATE decisions SET judged = ? WHERE id = ?",
                    (int(judged_from(hooks, json.loads(details) if details else {})), row_id),
                )
            db.execute("UPDATE audit_backfill SET upto = ?", (max(upto - batch, 0),))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        done += len(rows)
    return done
