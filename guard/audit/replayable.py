"""Audit rows as events to replay, and why a row cannot be replayed faithfully.

A backtest is only as honest as its inputs: a payload the audit log cut at its size
limit, or whose long strings it shortened, is not the event the agent sent, so its
replay would judge a different call. Such rows are counted and skipped, never
replayed partially. Rows whose recorded decision was not a judgement (the config did
not load, the payload was unreadable) are skipped too: a flip there would say
nothing about the rules. Redacted fields are replayed as ``[redacted]`` and counted.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from guard.audit import REDACTED
from guard.core.decision import STOPS, DecisionName, is_decision

__all__ = ["RecordedEvent", "keep_replayable", "replay_blocker", "sample", "split_replayable"]

T = TypeVar("T")

#: The marker AuditLog._clip leaves in a shortened string (rows written before the shortened flag existed).
_SHORTENED = re.compile(r"…\[\d+ more characters\]")
#: Recorded failures that were not judgements of the event.
_NOT_JUDGED = {"config": "recorded when the config did not load", "payload": "recorded payload was unreadable"}


@dataclass(frozen=True)
class RecordedEvent:
    """One audit row that can be decided again."""

    audit_id: int
    time: float
    event: str | None
    tool: str | None
    session: str | None
    decision: DecisionName
    reason: str | None
    cost_usd: float | None
    hooks: tuple[str, ...]
    payload: dict[str, Any]
    stopped_by: tuple[str, ...] = ()  # the enforced hooks whose recorded verdict was deny or ask
    shadow_stops: tuple[
        str, ...
    ] = ()  # the shadow hooks that would have denied or asked (data: never part of the recorded answer)

    @property
    def redacted(self) -> bool:
        return f'"{REDACTED}"' in json.dumps(self.payload, ensure_ascii=False)


def replay_blocker(row: dict[str, Any]) -> str | None:
    """Why ``row`` (from :meth:`AuditLog.rows`) cannot be replayed faithfully, or None."""
    if row["payload_truncated"]:
        return "payload cut at the audit size limit"
    if row.get("payload_shortened") or (
        row.get("payload_shortened") is None and _SHORTENED.search(json.dumps(row["payload"], ensure_ascii=False))
    ):
        return "long strings shortened in the audit log"
    failure = row["details"].get("failure")
    if failure in _NOT_JUDGED:
        return _NOT_JUDGED[failure]
    if not isinstance(row["payload"], dict) or not isinstance(row["payload"].get("hook_event_name"), str):
        return "no event name in the recorded payload"
    return None


def keep_replayable(
    rows: Iterable[dict[str, Any]], convert: Callable[[dict[str, Any]], T]
) -> tuple[list[T], dict[str, int]]:
    """``convert`` of each row that can be replayed faithfully, and how many rows were left out for each reason.

    ``convert`` may raise ValueError to leave a row out; its first line is the reason.
    """
    kept, skipped = [], Counter[str]()
    for row in rows:
        blocker = replay_blocker(row)
        if blocker is None:
            try:
                kept.append(convert(row))
                continue
            except ValueError as exc:
                blocker = str(exc).splitlines()[0]
        skipped[blocker] += 1
    return kept, dict(skipped)


def _recorded(row: dict[str, Any]) -> RecordedEvent:
    return RecordedEvent(
        audit_id=row["id"],
        time=row["time"],
        event=row["event"],
        tool=row["tool"],
        session=row["session"],
        decision=row["decision"] if is_decision(row["decision"]) else "deny",  # the log only writes decisions
        reason=row["reason"],
        cost_usd=row["cost_usd"],
        hooks=tuple(h["id"] for h in row["hooks"]),
        payload=row["payload"],
        stopped_by=tuple(h["id"] for h in row["hooks"] if h.get("decision") in STOPS and not h.get("shadow")),
        shadow_stops=tuple(h["id"] for h in row["hooks"] if h.get("decision") in STOPS and h.get("shadow")),
    )


def split_replayable(rows: Iterable[dict[str, Any]]) -> tuple[list[RecordedEvent], dict[str, int]]:
    """The replayable events, and how many rows were skipped for each reason."""
    return keep_replayable(rows, _recorded)


def sample(events: list[RecordedEvent], size: int | None, seed: int) -> list[RecordedEvent]:
    """``size`` events drawn at random (seeded), kept in log order; all of them without a size."""
    if size is None or size >= len(events):
        return events
    chosen = set(random.Random(seed).sample(range(len(events)), size))
    return [event for index, event in enumerate(events) if index in chosen]
