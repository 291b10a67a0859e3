"""``guard datasets check``: is a dataset fit to score a judge against?

Errors (exit 1): a line that is not a valid case, a repeated id in a file, the same judged input
under two different labels, a rule id the dataset's rule config does not define, a broken
rule config. Warnings (exit 1 only with ``--strict``): unknown fields, label balance outside
35–65 % deny, too few hard negatives, exact or near-duplicate inputs, rule ids with no config
beside the dataset.

The rule config of ``datasets/<name>.jsonl`` is ``datasets/<name>.guard.yaml`` when it exists, else a ``guard.yaml`` beside it.
A case's ``rule`` is either a hook id of that config (no whitespace) or plain rule text.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from guard.config.parse import parse_config
from guard.core.decision import DECISIONS
from guard.core.errors import ConfigError, DatasetError
from guard.core.spec import SmartSettings
from guard.datasets.case import Case, iter_lines, parse_case
from guard.datasets.similarity import field_shingles, similar_pairs

__all__ = [
    "CheckReport",
    "FileSummary",
    "Finding",
    "Row",
    "check_datasets",
    "dataset_files",
    "read_rows",
    "rule_config_for",
]

DENY_BAND = (0.35, 0.65)
HARD_NEGATIVE_TAG = "hard-negative"
MIN_HARD_NEGATIVE_SHARE = 1 / 3
#: Extra fields the eval runner hands to the judge as event fields (``prompt`` of user_turn cases).
PASSED_THROUGH = frozenset({"prompt"})
_RULE_ID = re.compile(r"^\S+$")


@dataclass(frozen=True)
class Finding:
    """One problem, located as precisely as it can be (file, line)."""

    level: Literal["error", "warning"]
    message: str
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file and self.line else (self.file or "")
        return f"{where}: {self.level}: {self.message}" if where else f"{self.level}: {self.message}"


@dataclass
class FileSummary:
    """Figures for one dataset file."""

    path: str
    cases: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    deny_share: float | None = None
    hard_negative_share: float | None = None  # hard-negative allows / allows, when the tag is used
    rule_config: str | None = None


@dataclass
class CheckReport:
    files: list[FileSummary] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "warning"]

    def exit_code(self, strict: bool = False) -> int:
        return 1 if self.errors or (strict and self.warnings) else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": [asdict(f) for f in self.files],
            "errors": [asdict(f) for f in self.errors],
            "warnings": [asdict(f) for f in self.warnings],
        }


@dataclass(frozen=True)
class Row:
    """One parsed case and where it is."""

    file: str
    line: int
    case: Case


def dataset_files(paths: list[str | Path]) -> list[Path]:
    """The .jsonl files named, directories expanded recursively, in a stable order."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        found.extend(sorted(path.rglob("*.jsonl")) if path.is_dir() else [path])
    return found


def rule_config_for(dataset: Path) -> Path:
    """``datasets/<name>.jsonl`` is judged against ``datasets/<name>.guard.yaml``, else the folder's own ``guard.yaml``.

    The second is what ``guard init`` writes beside its ``guard-cases.jsonl``: a project's cases
    are about the project's config.
    """
    own = dataset.with_name(f"{dataset.stem}.guard.yaml")
    folder = dataset.with_name("guard.yaml")
    return folder if not own.exists() and folder.exists() else own


def _bare(exc: DatasetError) -> str:
    """The message without the ``file:line:`` prefix the Finding carries separately."""
    text = str(exc)
    where = f"{exc.file}:{exc.line}: " if exc.file and exc.line else f"{exc.file}: " if exc.file else ""
    return text.removeprefix(where)


def read_rows(path: Path, report: CheckReport) -> list[Row]:
    """Every readable case of one file; each bad line or repeated id becomes an error finding, never a stop."""
    name = str(path)
    rows: list[Row] = []
    first_seen: dict[str, int] = {}
    try:
        for number, text in iter_lines(path):
            try:
                case = parse_case(text, file=name, line=number)
            except DatasetError as exc:
                report.findings.append(Finding("error", _bare(exc), name, number))
                continue
            if case.id in first_seen:
                report.findings.append(
                    Finding("error", f"duplicate id {case.id!r} (first on line {first_seen[case.id]})", name, number)
                )
                continue
            first_seen[case.id] = number
            rows.append(Row(name, number, case))
    except DatasetError as exc:
        report.findings.append(Finding("error", _bare(exc), name))
    return rows


def _summarise(path: Path, rows: list[Row], report: CheckReport) -> FileSummary:
    name = str(path)
    labels = Counter(row.case.label for row in rows)
    summary = FileSummary(name, len(rows), {label: labels[label] for label in DECISIONS})
    if rows:
        summary.deny_share = labels["deny"] / len(rows)
        low, high = DENY_BAND
        if not low <= summary.deny_share <= high:
            report.findings.append(
                Finding(
                    "warning",
                    f"deny share {summary.deny_share:.0%} is outside {low:.0%}–{high:.0%} ({dict(labels)})",
                    name,
                )
            )
    if any(HARD_NEGATIVE_TAG in row.case.tags for row in rows) and labels["allow"]:
        hard = sum(1 for row in rows if row.case.label == "allow" and HARD_NEGATIVE_TAG in row.case.tags)
        summary.hard_negative_share = hard / labels["allow"]
        if summary.hard_negative_share < MIN_HARD_NEGATIVE_SHARE:
            report.findings.append(
                Finding(
                    "warning",
                    f"only {hard} of {labels['allow']} allows are tagged {HARD_NEGATIVE_TAG} (want ≥ a third)",
                    name,
                )
            )
    extras: Counter[str] = Counter(key for row in rows for key in row.case.extra_fields if key not in PASSED_THROUGH)
    for key, count in sorted(extras.items()):
        report.findings.append(
            Finding("warning", f"unknown field {key!r} on {count} case(s) (kept, but not part of the format)", name)
        )
    return summary


def _check_rules(path: Path, rows: list[Row], summary: FileSummary, report: CheckReport) -> None:
    config = rule_config_for(path)
    hook_ids: set[str] | None = None
    rule_texts: set[str] = set()
    if config.is_file():
        summary.rule_config = str(config)
        try:
            specs = parse_config(config).specs
        except ConfigError as exc:
            report.findings.append(Finding("error", f"rule config does not load: {exc}", str(config)))
            return
        hook_ids = {spec.id for spec in specs}
        rule_texts = {
            spec.options.rule for spec in specs if isinstance(spec.options, SmartSettings) and spec.options.rule
        }
    unresolved: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        rule = row.case.rule
        if rule is None or rule in rule_texts or not _RULE_ID.match(rule):
            continue  # no rule (judged by every hook), or plain rule text
        if hook_ids is None or rule not in hook_ids:
            unresolved[rule].append(row)
    for rule, where in unresolved.items():
        cases = f"{len(where)} case(s), first {where[0].case.id!r}"
        if hook_ids is None:
            message = f"rule {rule!r} ({cases}) looks like a hook id but there is no {config.name} beside the dataset"
            report.findings.append(Finding("warning", message, where[0].file, where[0].line))
        else:
            message = f"rule {rule!r} ({cases}) is not a hook id in {config.name}"
            report.findings.append(Finding("error", message, where[0].file, where[0].line))


def _check_duplicates(rows: list[Row], report: CheckReport, threshold: float) -> None:
    groups: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        groups[row.case.judged_text()].append(row)
    for same in groups.values():
        first = same[0]
        for other in same[1:]:
            differ = other.case.label != first.case.label
            report.findings.append(
                Finding(
                    "error" if differ else "warning",
                    (
                        f"case {other.case.id!r} ({other.case.label}) has the same input as {first.case.id!r} ({first.case.label}) at {first.file}:{first.line}"
                        if differ
                        else f"case {other.case.id!r} duplicates the input of {first.case.id!r} at {first.file}:{first.line}"
                    ),
                    other.file,
                    other.line,
                )
            )
    firsts = [same[0] for same in groups.values()]
    for pair in similar_pairs([field_shingles(row.case.judged_fields()) for row in firsts], threshold):
        left, right = firsts[pair.left], firsts[pair.right]
        labels = (
            f"; labels differ: {left.case.label} vs {right.case.label}" if left.case.label != right.case.label else ""
        )
        report.findings.append(
            Finding(
                "warning",
                f"case {right.case.id!r} is a near-duplicate of {left.case.id!r} at {left.file}:{left.line} (similarity {pair.similarity:.2f}{labels})",
                right.file,
                right.line,
            )
        )


def check_datasets(paths: list[str | Path], *, similarity: float = 0.9) -> CheckReport:
    """Validate dataset files (directories are searched for ``*.jsonl``); never raises for bad data."""
    report = CheckReport()
    files = dataset_files(paths)
    if not files:
        report.findings.append(Finding("error", "no dataset files found"))
    every_row: list[Row] = []
    for path in files:
        rows = read_rows(path, report)
        summary = _summarise(path, rows, report)
        _check_rules(path, rows, summary, report)
        report.files.append(summary)
        every_row.extend(rows)
    _check_duplicates(every_row, report, similarity)
    return report
