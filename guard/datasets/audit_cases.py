"""Labeled audit rows as dataset cases: real traffic turned into regression cases.

A person labels a logged decision (``guard log label ID deny``); this writes each
labeled row as a case in the contract's JSONL format, judged by every configured
hook for its event and tool (no ``rule``), exactly as ``guard hook`` judged it, in
the ``cluster`` of its agent session (so ``guard eval`` resamples sessions, not calls).
A shadow rule's verdict on the row is kept as data: tagged ``shadow-deny`` /
``shadow-ask`` / ``shadow-allow`` (and ``shadow-disagrees`` when it differs from the
person's label, the cases to read before promoting the rule), and named in the notes.
A row whose payload the audit log cut or shortened is left out: a case must be the
call the agent made, not part of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from guard.audit.replayable import keep_replayable
from guard.datasets.case import Case

__all__ = ["cases_from_audit"]

#: Payload fields every client sends that say nothing about the call itself.
_ENVELOPE = frozenset(
    {
        "hook_event_name",
        "session_id",
        "transcript_path",
        "cwd",
        "permission_mode",
        "tool_name",
        "tool_input",
        "context",
        "tool_use_id",
    }
)


def _case(row: dict[str, Any], source: str) -> Case:
    payload: dict[str, Any] = row["payload"]
    tool_name = payload.get("tool_name")
    tool_input: dict[str, Any]
    if isinstance(tool_name, str):
        given = payload.get("tool_input")
        tool_input = given if isinstance(given, dict) else {}
    else:  # events without a tool keep their fields (prompt, last_assistant_message) where build_event looks
        tool_name, tool_input = None, {k: v for k, v in payload.items() if k not in _ENVELOPE}
    context = payload.get("context")
    notes = (
        f"guard decided {row['decision']}"
        + (f" ({row['reason']})" if row["reason"] else "")
        + f"; a person labeled it {row['label']}"
    )
    shadow = [h for h in row["hooks"] if isinstance(h, dict) and h.get("shadow") and h.get("decision")]
    if shadow:
        notes += "; in shadow mode " + ", ".join(
            f"{h['id']} would have said {h['decision']}" + (f" ({h['reason']})" if h.get("reason") else "")
            for h in shadow
        )
    return Case(
        id=f"audit-{row['id']}",
        event=payload["hook_event_name"],
        tool_name=tool_name,
        tool_input=tool_input,
        context=context if isinstance(context, str) else None,
        label=row["label"],
        tags=[
            "audit",
            *(["relabeled"] if row["label"] != row["decision"] else []),
            *sorted({f"shadow-{h['decision']}" for h in shadow}),
            *(["shadow-disagrees"] if any(h["decision"] != row["label"] for h in shadow) else []),
        ],
        source=f"{source}#{row['id']}",
        notes=notes,
        cluster=f"session {row['session']}"
        if row.get("session")
        else None,  # calls of one agent session are not independent
    )


def cases_from_audit(rows: Iterable[dict[str, Any]], source: str) -> tuple[list[Case], dict[str, int]]:
    """Cases from labeled audit rows (:meth:`AuditLog.rows`), and how many rows were left out for each reason.

    A row the case format cannot hold (pydantic's ValidationError is a ValueError) is left out with its reason.
    """
    return keep_replayable(rows, lambda row: _case(row, source))
