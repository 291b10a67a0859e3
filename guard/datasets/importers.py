"""Converters from published labeled trajectories to dataset cases.

A trajectory is labeled as a whole; a case is one pending call. The conversion is a heuristic
and says so in every case's notes:

- R-Judge and ASSEBench: the pending call is the LAST tool call of the trajectory, the context
  is every turn before it plus the agent's thought for it; label 1 → deny, 0 → allow.
  ASSEBench's ``ambiguous = 1`` keeps its label and gets the tag ``ambiguous``. The same turns
  also become the case's structured ``session``: the user's messages and the earlier tool
  calls (observations stay in ``context`` only).
- AgentHarm: every prompt is harmful, so EVERY tool call the agent made is a case labeled deny
  (the trajectory label only says whether the agent refused later: tag ``agent-refused`` or
  ``agent-complied``).

Explanation fields (``risk_description``, ``failure_mode``) and the judge instructions
(``goal``) are never read. Records whose pending call and context are identical are kept
once, or dropped when their labels conflict. Rows whose tool name occurs under both labels are tagged
``tool-name-ambiguous``; the others can be answered from the tool name alone.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from guard.core.errors import DatasetError
from guard.datasets.case import Case
from guard.datasets.trajectory import ToolCall, Turn, parse_action, render_context

__all__ = ["IMPORT_FORMATS", "ImportReport", "ImportSource", "import_path"]

AMBIGUOUS_TOOL_TAG = "tool-name-ambiguous"


@dataclass
class ImportReport:
    """What an import produced and what it left out, with counts per reason."""

    format: str
    path: str
    records: int = 0
    cases: int = 0
    labels: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    tool_name_ambiguous: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "path": self.path,
            "records": self.records,
            "cases": self.cases,
            "labels": dict(self.labels),
            "skipped": dict(self.skipped),
            "tool_name_ambiguous": self.tool_name_ambiguous,
        }

    def lines(self) -> list[str]:
        """A short human summary (the CLI prints it on stderr)."""
        labels = ", ".join(f"{k} {v}" for k, v in sorted(self.labels.items())) or "none"
        out = [
            f"{self.format}: {self.records} records → {self.cases} cases ({labels}) from {self.path}",
            f"  {self.tool_name_ambiguous} cases tagged {AMBIGUOUS_TOOL_TAG} (tool name seen under both labels)",
        ]
        if self.skipped:
            out.append(f"  skipped {sum(self.skipped.values())} records:")
            out.extend(f"    {count:5d}  {reason}" for reason, count in self.skipped.most_common())
        return out


class _Skip(Exception):
    """A record that yields no case; the message is the reason counted in the report."""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _turns(record: dict[str, Any]) -> list[Turn]:
    contents = record.get("contents")
    if not isinstance(contents, list):
        raise _Skip("malformed record (no contents list)")
    turns: list[Turn] = []
    for conversation in contents:
        if not isinstance(conversation, list):
            raise _Skip("malformed record (conversation is not a list)")
        for raw in conversation:
            if not isinstance(raw, dict) or raw.get("role") not in ("user", "agent", "environment"):
                raise _Skip("malformed record (turn without a known role)")
            turns.append(
                Turn(
                    role=raw["role"],
                    text=str(raw.get("content") or ""),
                    thought=str(raw.get("thought") or ""),
                    action=str(raw.get("action") or ""),
                )
            )
    return turns


def _calls(turns: list[Turn]) -> Iterator[tuple[int, ToolCall | str]]:
    """(turn index, parsed call or reason) for every agent turn, in order."""
    for index, turn in enumerate(turns):
        if turn.role == "agent":
            yield index, parse_action(turn.action)


def _context(turns: list[Turn], index: int, max_chars: int) -> str:
    """Turns before the call at ``index`` plus the agent's own thought that led to it."""
    before = [*turns[:index], Turn("agent", thought=turns[index].thought)]
    return render_context(before, max_chars=max_chars)


def _session(turns: list[Turn], index: int) -> dict[str, Any] | None:
    """The turns before the call at ``index`` as a structured session: the user's messages and the earlier tool calls."""
    before = turns[:index]
    messages = [t.text.strip() for t in before if t.role == "user" and t.text.strip()]
    actions = [
        {"tool_name": call.name, "tool_input": call.input} for _, call in _calls(before) if isinstance(call, ToolCall)
    ]
    return {"user_messages": messages, "actions": actions} if messages or actions else None


def _binary_label(record: dict[str, Any]) -> Literal["allow", "deny"]:
    label = record.get("label")
    if label in (0, 1) and not isinstance(label, bool):
        return "deny" if label == 1 else "allow"
    raise _Skip(f"label is not 0 or 1 ({label!r})")


_UNPARSABLE_LAST = "last tool call has unparsable arguments"


def _last_call(turns: list[Turn]) -> tuple[int, ToolCall]:
    """The last tool call; an unparsable final attempt skips the record rather than fall back."""
    last: tuple[int, ToolCall] | None = None
    reason = "no agent turn"
    for index, parsed in _calls(turns):
        if isinstance(parsed, ToolCall):
            last = (index, parsed)
        elif parsed == "unparsable arguments":
            last, reason = None, _UNPARSABLE_LAST
        elif last is None and reason != _UNPARSABLE_LAST:
            reason = f"no tool call (agent: {parsed})"
    if last is None:
        raise _Skip(reason)
    return last


@dataclass(frozen=True)
class ImportSource:
    """One published format: how its records become cases."""

    default_file: str
    convert: Callable[[dict[str, Any], int], list[Case]]


def _trajectory_case(record: dict[str, Any], prefix: str, source: str, tags: list[str], max_chars: int) -> Case:
    label = _binary_label(record)
    turns = _turns(record)
    index, call = _last_call(turns)
    if any(t.role == "agent" for t in turns[index + 1 :]):
        tags = [*tags, "call-not-final"]
    return Case(
        id=f"{prefix}-{record.get('id')}",
        tool_name=call.name,
        tool_input=call.input,
        context=_context(turns, index, max_chars),
        session=_session(turns, index),
        label=label,
        tags=tags,
        source=source,
        notes=(
            f"Imported from {prefix} record {record.get('id')}: trajectory label {record.get('label')}; "
            "pending call = the last tool call (heuristic: the label is per trajectory)."
        ),
    )


_RJUDGE_SOURCE = "R-Judge (arXiv 2401.10019) via AgentAuditor-ASSEBench; Apache-2.0 copy, upstream licence unconfirmed"


def _rjudge(record: dict[str, Any], max_chars: int) -> list[Case]:
    scenario = _slug(str(record.get("scenario") or ""))
    tags = ["rjudge", *([f"scenario:{scenario}"] if scenario else [])]
    return [_trajectory_case(record, "rjudge", _RJUDGE_SOURCE, tags, max_chars)]


_ASSEBENCH_SOURCE = "ASSEBench security split (AgentAuditor, arXiv 2506.00641); Apache-2.0"


def _assebench(record: dict[str, Any], max_chars: int) -> list[Case]:
    tags = ["assebench"]
    for prefix, key in (("app", "application_scenario"), ("risk", "risk_type")):
        value = _slug(str(record.get(key) or ""))
        if value:
            tags.append(f"{prefix}:{value}")
    if record.get("ambiguous") == 1:
        tags.append("ambiguous")
    return [_trajectory_case(record, "assebench", _ASSEBENCH_SOURCE, tags, max_chars)]


_AGENTHARM_SOURCE = "AgentHarm (arXiv 2410.09024) via AgentAuditor-ASSEBench; upstream licence: MIT plus extra terms"


def _agentharm(record: dict[str, Any], max_chars: int) -> list[Case]:
    outcome = "agent-refused" if _binary_label(record) == "allow" else "agent-complied"
    turns = _turns(record)
    calls = [(i, c) for i, c in _calls(turns) if isinstance(c, ToolCall)]
    if not calls:
        raise _Skip("no tool call (the agent refused or only answered)")
    return [
        Case(
            id=f"agentharm-{record.get('id')}-{n}",
            tool_name=call.name,
            tool_input=call.input,
            context=_context(turns, index, max_chars),
            label="deny",
            tags=["agentharm", "harmful-request", outcome],
            source=_AGENTHARM_SOURCE,
            notes=(
                f"Imported from AgentHarm record {record.get('id')}, tool call {n}: the user's request is "
                "harmful, so every call that advances it is denied."
            ),
        )
        for n, (index, call) in enumerate(calls, start=1)
    ]


IMPORT_FORMATS: dict[str, ImportSource] = {
    "rjudge": ImportSource("rjudge.json", _rjudge),
    "assebench": ImportSource("AgentJudge-security.json", _assebench),
    "agentharm": ImportSource("agentharm.json", _agentharm),
}


def _read_records(path: Path) -> list[Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError("no such file", file=str(path)) from None
    except UnicodeDecodeError:
        raise DatasetError("not UTF-8 text", file=str(path)) from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
    if not isinstance(data, list):
        raise DatasetError(f"expected a JSON list of records, got {type(data).__name__}", file=str(path))
    return data


def _tag_ambiguous_tools(cases: list[Case]) -> tuple[list[Case], int]:
    labels_by_tool: dict[str, set[str]] = {}
    for case in cases:
        labels_by_tool.setdefault(case.tool_name or "", set()).add(case.label)
    shared = {tool for tool, labels in labels_by_tool.items() if len(labels) > 1}
    tagged = [
        case.model_copy(update={"tags": [*case.tags, AMBIGUOUS_TOOL_TAG]}) if case.tool_name in shared else case
        for case in cases
    ]
    return tagged, sum(1 for case in cases if case.tool_name in shared)


def _drop_indistinguishable(cases: list[Case], report: ImportReport) -> list[Case]:
    """Cases a judge cannot tell apart: keep one when the labels agree, none when they conflict
    (then the label concerns turns after the pending call, not the call)."""
    groups: dict[str, list[Case]] = {}
    for case in cases:
        groups.setdefault(case.judged_text(), []).append(case)
    kept: list[Case] = []
    for same in groups.values():
        if len({case.label for case in same}) > 1:
            report.skipped["same pending call and context under both labels"] += len(same)
            continue
        kept.append(same[0])
        if len(same) > 1:
            report.skipped["same pending call and context as an earlier record"] += len(same) - 1
    return kept


def import_path(format_name: str, path: str | Path, *, max_context: int = 4000) -> tuple[list[Case], ImportReport]:
    """Convert one published file (or the folder holding it) into cases, with a report of what was skipped."""
    source = IMPORT_FORMATS.get(format_name)
    if source is None:
        raise DatasetError(f"unknown import format {format_name!r} (choose from {', '.join(IMPORT_FORMATS)})")
    path = Path(path)
    if path.is_dir():
        path = path / source.default_file
    report = ImportReport(format=format_name, path=str(path))
    cases: list[Case] = []
    seen: set[str] = set()
    for record in _read_records(path):
        report.records += 1
        try:
            if not isinstance(record, dict):
                raise _Skip("malformed record (not an object)")
            converted = source.convert(record, max_context)
        except _Skip as skip:
            report.skipped[str(skip)] += 1
            continue
        if any(case.id in seen for case in converted):
            report.skipped["duplicate record id"] += 1
            continue
        seen.update(case.id for case in converted)
        cases.extend(converted)
    cases, report.tool_name_ambiguous = _tag_ambiguous_tools(_drop_indistinguishable(cases, report))
    report.cases = len(cases)
    report.labels = Counter(case.label for case in cases)
    return cases, report
