"""One labeled tool call (a dataset case) and the JSONL reader that reports bad lines by file and line.

The format is CONTRACT's dataset JSONL. Choices the contract leaves open:

- Unknown fields are kept (``extra="allow"``) so datasets can carry their own metadata;
  ``guard datasets check`` warns about them so typos (``lable``) do not pass silently.
- JSONL has no comments and no blank lines: a ``#``/``//`` line or a blank line between
  cases is an error naming its line. Blank lines at the very end of a file (an editor's
  trailing newline) are tolerated.
- ``id`` must be a string and unique within a file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError, field_validator, model_validator

from guard.cache import canonical_json
from guard.core.decision import DECISIONS, DecisionName
from guard.core.errors import DatasetError
from guard.core.events.names import TOOL_EVENTS, canonical_event
from guard.session.context import SessionContext

__all__ = ["LABELS", "Case", "iter_cases", "iter_lines", "load_cases", "parse_case", "write_cases"]

LABELS: tuple[str, ...] = DECISIONS


class Case(BaseModel):
    """A pending agent action, what surrounds it, and the verdict a careful reviewer gives it."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: StrictStr = Field(min_length=1)
    event: StrictStr = "PreToolUse"
    tool_name: StrictStr | None = None
    tool_input: dict[str, Any] = Field(default_factory=dict)
    context: StrictStr | None = None
    session: dict[str, Any] | None = None  # {"user_messages": [...], "actions": [...]}: see guard.session.context
    rule: StrictStr | None = None
    label: DecisionName
    tags: list[StrictStr] = Field(default_factory=list)
    source: StrictStr | None = None
    notes: StrictStr | None = None
    cluster: StrictStr | None = (
        None  # cases sharing one (a session, a trajectory) are not independent: intervals resample them together
    )
    cwd: StrictStr | None = None  # the project folder the call runs in (the judge is told whether a path is inside it)
    files: dict[str, StrictStr] | None = (
        None  # absolute path → current content: the files the case's world holds (others do not exist)
    )

    @field_validator("event")
    @classmethod
    def _known_event(cls, value: str) -> str:
        canonical_event(value)  # ValueError names the bad value
        return value

    @field_validator("session")
    @classmethod
    def _session_shape(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            SessionContext.from_dict(value)  # SessionShapeError (a ValueError) names the field
        return value

    @model_validator(mode="after")
    def _tool_events_name_a_tool(self) -> Case:
        if self.canonical_event in TOOL_EVENTS and not self.tool_name:
            raise ValueError(f"tool_name is required for {self.event} cases")
        return self

    @property
    def canonical_event(self) -> str:
        """The snake_case event name (``PreToolUse`` → ``pre_tool_use``)."""
        return canonical_event(self.event)

    @property
    def extra_fields(self) -> tuple[str, ...]:
        """Fields the contract does not define, in file order."""
        return tuple(self.model_extra or ())

    def judged_text(self) -> str:
        """What a judge sees of this case (input, context, rule; never label, tags or notes),
        normalised so that cases a judge cannot tell apart compare equal."""
        context = " ".join((self.context or "").split())
        parts: tuple[str, ...] = (
            self.canonical_event,
            (self.tool_name or "").lower(),
            canonical_json(self.tool_input),
            context,
            self.rule or "",
        )
        if self.session is not None:
            parts += (canonical_json(self.session),)
        if self.cwd is not None or self.files is not None:
            parts += (self.cwd or "", canonical_json(self.files or {}))
        return "\n".join(parts)

    def judged_fields(self) -> dict[str, str]:
        """The judged input as named text fields (``tool_input.command``…), for similarity
        measures that must not confuse one field's words with another's (old vs new string)."""
        fields = {"event": self.canonical_event, "tool_name": (self.tool_name or "").lower()}
        fields.update(_flatten(self.tool_input, "tool_input"))
        fields["context"] = " ".join((self.context or "").split())
        fields["rule"] = self.rule or ""
        if self.session is not None:
            fields.update(_flatten(self.session, "session"))
        return fields

    def to_json(self) -> str:
        """One JSONL line: unset optional fields left out, non-ASCII kept readable."""
        return json.dumps(self.model_dump(mode="json", exclude_none=True), ensure_ascii=False)


def _flatten(value: object, path: str) -> dict[str, str]:
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _flatten(item, f"{path}.{key}").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in _flatten(item, f"{path}[{i}]").items()}
    return {path: value if isinstance(value, str) else json.dumps(value)}


def _validation_message(exc: ValidationError) -> str:
    """``field 'label': Input should be 'allow', 'deny' or 'ask'`` — one clause per problem."""
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        parts.append(f"field '{loc}': {msg}" if loc else msg)
    return "; ".join(parts)


def parse_case(text: str, *, file: str, line: int) -> Case:
    """One JSONL line → Case, or DatasetError naming ``file:line`` and the field."""
    stripped = text.strip()
    if not stripped:
        raise DatasetError("blank line (JSONL has one JSON object per line)", file=file, line=line)
    if stripped.startswith(("#", "//")):
        raise DatasetError("comment line (JSONL has no comments)", file=file, line=line)
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg} at column {exc.colno}", file=file, line=line) from exc
    if not isinstance(data, dict):
        raise DatasetError(f"expected a JSON object, got {type(data).__name__}", file=file, line=line)
    try:
        return Case.model_validate(data)
    except ValidationError as exc:
        case_id = data.get("id")
        prefix = f"case {case_id!r}: " if isinstance(case_id, str) and case_id else ""
        raise DatasetError(prefix + _validation_message(exc), file=file, line=line) from None


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line that should hold a case; trailing blank lines skipped."""
    name = str(path)
    pending_blank: list[int] = []
    try:
        with open(path, encoding="utf-8") as handle:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    pending_blank.append(number)
                    continue
                for blank in pending_blank:  # a blank line followed by a case is an error
                    yield blank, ""
                pending_blank.clear()
                yield number, text
    except FileNotFoundError:
        raise DatasetError("no such file", file=name) from None
    except IsADirectoryError:
        raise DatasetError("is a directory, expected a .jsonl file", file=name) from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not UTF-8 text (byte offset {exc.start})", file=name) from None


def iter_cases(path: str | Path) -> Iterator[Case]:
    """Stream the cases of one file; the first bad line or repeated id raises DatasetError."""
    name = str(path)
    first_seen: dict[str, int] = {}
    for number, text in iter_lines(path):
        case = parse_case(text, file=name, line=number)
        if case.id in first_seen:
            raise DatasetError(
                f"duplicate id {case.id!r} (first on line {first_seen[case.id]})", file=name, line=number
            )
        first_seen[case.id] = number
        yield case


def load_cases(path: str | Path) -> list[Case]:
    """Every case of one file, or DatasetError for the first bad line."""
    return list(iter_cases(path))


def write_cases(cases: Iterable[Case], handle: TextIO) -> int:
    """Write cases as JSONL to an open text handle; returns how many were written."""
    count = 0
    for case in cases:
        handle.write(case.to_json() + "\n")
        count += 1
    return count
