"""``guard datasets check|import|from-audit``: validate labeled datasets, convert published ones, turn labeled traffic into cases.

``check`` exits 0 when the datasets are usable, 1 on errors (or on warnings with ``--strict``).
``import`` writes JSONL to ``--out`` (or stdout) and its report on stderr; exit 1 when the
file cannot be read or yields no case.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from guard.audit import AuditLog
from guard.config.loading import load_config
from guard.core.errors import DatasetError, GuardError
from guard.datasets.audit_cases import cases_from_audit
from guard.datasets.case import write_cases
from guard.datasets.check import check_datasets
from guard.datasets.importers import import_path

if TYPE_CHECKING:
    from guard.datasets.case import Case
    from guard.datasets.check import CheckReport

__all__ = ["register", "run"]

_IMPORT_FORMATS = ("rjudge", "assebench", "agentharm")
_SHOWN_PER_LEVEL = 50  # findings printed per level in the human output; --json has them all


def _fraction(text: str) -> float:
    """argparse type for a threshold in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError("must be in (0, 1]")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "datasets",
        help="validate labeled datasets, import published ones",
        description="Check labeled datasets (guard eval's input) for what makes figures wrong, convert published "
        "trajectory sets into dataset cases, or turn decisions labeled with guard log label into cases.",
    )
    inner = p.add_subparsers(dest="datasets_command", metavar="SUBCOMMAND", required=True)

    check = inner.add_parser("check", help="schema, duplicate ids, label balance, near-duplicates, rule ids")
    check.add_argument("paths", nargs="+", metavar="PATH", help="dataset .jsonl files or folders holding them")
    check.add_argument("--strict", action="store_true", help="fail (exit 1) on warnings too")
    check.add_argument("--json", action="store_true", help="print the full report as JSON")
    check.add_argument(
        "--similarity", type=_fraction, default=0.9, help="near-duplicate Jaccard threshold (default 0.9)"
    )

    imp = inner.add_parser("import", help="convert R-Judge, ASSEBench or AgentHarm trajectories to dataset JSONL")
    imp.add_argument("format", choices=_IMPORT_FORMATS, help="which published set the file comes from")
    imp.add_argument("path", metavar="PATH", help="the published JSON file, or the folder holding it")
    imp.add_argument("--out", metavar="FILE", help="write JSONL here (default: stdout)")
    imp.add_argument(
        "--max-context", type=int, default=4000, metavar="CHARS", help="trim each case's context to this size"
    )

    audit = inner.add_parser("from-audit", help="write the audit rows labeled with guard log label as dataset JSONL")
    audit.add_argument("--out", metavar="FILE", help="write JSONL here (default: stdout)")
    audit.add_argument(
        "--config", help="config whose audit log is read (default: $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml)"
    )
    audit.add_argument("--log", metavar="FILE", help="audit database to read instead of the config's")
    p.set_defaults(func=run)


def _print_check(report: CheckReport) -> None:
    for summary in report.files:
        labels = " ".join(f"{k}={v}" for k, v in summary.labels.items())
        share = f"deny {summary.deny_share:.0%}" if summary.deny_share is not None else "empty"
        hard = (
            f", hard negatives {summary.hard_negative_share:.0%} of allows"
            if summary.hard_negative_share is not None
            else ""
        )
        rules = f", rules {summary.rule_config}" if summary.rule_config else ""
        print(f"{summary.path}: {summary.cases} cases ({labels}; {share}{hard}{rules})")
    for findings in (report.errors, report.warnings):
        for finding in findings[:_SHOWN_PER_LEVEL]:
            print(finding)
        if len(findings) > _SHOWN_PER_LEVEL:
            print(f"… and {len(findings) - _SHOWN_PER_LEVEL} more {findings[0].level}s (--json lists them all)")
    print(f"{len(report.errors)} error(s), {len(report.warnings)} warning(s)")


def _check(args: argparse.Namespace) -> int:
    report = check_datasets(args.paths, similarity=args.similarity)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        _print_check(report)
    return report.exit_code(strict=args.strict)


def _import(args: argparse.Namespace) -> int:
    if args.max_context < 200:
        raise DatasetError("--max-context must be at least 200 characters")
    cases, report = import_path(args.format, args.path, max_context=args.max_context)
    for line in report.lines():
        print(line, file=sys.stderr)
    if not cases:
        raise DatasetError(f"no tool calls found: is this a {args.format} file?", file=report.path)
    _write(cases, args.out)
    return 0


def _write(cases: list[Case], out: str | None) -> None:
    """JSONL to ``out``, or to stdout (the report goes to stderr either way)."""
    if out:
        try:
            with open(out, "w", encoding="utf-8") as handle:
                write_cases(cases, handle)
        except OSError as exc:
            raise DatasetError(f"cannot write: {exc.strerror}", file=out) from exc
        print(f"wrote {len(cases)} cases to {out}", file=sys.stderr)
    else:
        write_cases(cases, sys.stdout)


def _from_audit(args: argparse.Namespace) -> int:
    if args.log:
        path = Path(args.log)
    else:
        settings = load_config(args.config).settings
        if settings.audit_path is None:
            raise GuardError("the audit log is off (audit.enabled: false): name one with --log")
        path = settings.path(settings.audit_path)
    if not path.is_file():
        raise GuardError(f"no audit log at {path}")
    cases, skipped = cases_from_audit(AuditLog(path).rows(labeled=True), str(path))
    for why, count in skipped.items():
        print(f"left out {count} labeled row(s): {why}", file=sys.stderr)
    if not cases:
        raise GuardError(f"no usable labeled decision in {path}: label some with guard log label ID allow|deny|ask")
    _write(cases, args.out)
    return 0


def run(args: argparse.Namespace) -> int:
    commands = {"check": _check, "import": _import, "from-audit": _from_audit}
    return commands[args.datasets_command](args)
