"""Finding the eval runs in the view's ``--evals`` folders, and reading what each run wrote.

A run is a folder holding ``metrics.json`` (``guard eval --out DIR``): a configured
folder itself, or one of its sub-folders. Pages name a run by its id (``"0"`` for the
first configured folder, ``"0/NAME"`` for its sub-folder NAME), and an id is only
ever looked up among the runs found by listing the configured folders, so no URL can
make the view read a path of its choosing.

A run that cannot be read (missing, half-written, not a guard ``metrics.json``) is a
run with an ``error``, listed like the others. Files are parsed once per change
(cached on path, size and modification time).
"""

from __future__ import annotations

import errno
import functools
import hashlib
import io
import json
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from guard.audit import redacted
from guard.datasets import Case
from guard.datasets.check import CheckReport, read_rows
from guard.eval.schema import DatasetInfo, MetricsReport, ResultRow, VariantMetrics

__all__ = ["CaseInput", "EvalRun", "case_input", "find_runs", "load_results"]

METRICS = "metrics.json"
RESULTS = "results.jsonl"
#: Largest metrics.json read: a real report is a few MB (3,000 cases × 2 models: 1.9 MB); a run folder the agent wrote may hold anything.
MAX_REPORT_BYTES = 256 << 20


@dataclass(frozen=True)
class EvalRun:
    """One run folder: its report, or why there is none."""

    id: str
    folder: Path
    modified: float
    report: MetricsReport | None = None
    error: str | None = None

    @property
    def created(self) -> float:
        """When the run was scored (``created_at``), else when its folder last changed: the list's order."""
        if self.report is not None:
            try:
                return datetime.fromisoformat(self.report.created_at).timestamp()
            except ValueError:
                pass
        return self.modified

    @property
    def name(self) -> str:
        return self.folder.name or str(self.folder)

    def variant(self, index: int) -> VariantMetrics | None:
        variants = self.report.variants if self.report else []
        return variants[index] if 0 <= index < len(variants) else None


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


def _open_regular(path: Path) -> io.BufferedReader:
    """``path`` opened for reading when it is a regular file, else OSError.

    A run folder is written by whoever ran the eval, perhaps the agent: a FIFO
    named ``metrics.json`` would block the read for ever, a link to ``/dev/zero``
    never end. Checked on the open file, so swapping the file after a check cannot help.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


@functools.lru_cache(maxsize=64)
def _read_report(path: Path, stamp: tuple[int, int]) -> MetricsReport | str:
    """The parsed report, or a one-line reason it cannot be read (``stamp`` keys the cache)."""
    if stamp[1] > MAX_REPORT_BYTES:
        return f"{METRICS}: {stamp[1] >> 20} MB, over the {MAX_REPORT_BYTES >> 20} MB a guard eval report could be"
    try:
        with _open_regular(path) as file:
            text = file.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"{METRICS}: cannot read: {getattr(exc, 'strerror', None) or exc}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"{METRICS}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); the run may still be writing it"
    except RecursionError:
        return f"{METRICS}: nested too deeply to be a guard eval report"
    try:
        return MetricsReport.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        return f"{METRICS}: not a guard eval report: field {where}: {first['msg']}"


def _run(run_id: str, folder: Path) -> EvalRun:
    metrics = folder / METRICS
    stamp = _stamp(metrics)
    if stamp is None:
        modified = (_stamp(folder / RESULTS) or (0, 0))[0] / 1e9
        return EvalRun(
            run_id,
            folder,
            modified,
            error=f"no {METRICS} (only {RESULTS}): the run is still going, or stopped before scoring",
        )
    loaded = _read_report(metrics, stamp)
    if isinstance(loaded, str):
        return EvalRun(run_id, folder, stamp[0] / 1e9, error=loaded)
    return EvalRun(run_id, folder, stamp[0] / 1e9, report=loaded)


def _is_run(folder: Path) -> bool:
    return (folder / METRICS).is_file() or (folder / RESULTS).is_file()


def _runs_in(index: int, folder: Path) -> list[EvalRun]:
    if not folder.is_dir():
        return [EvalRun(str(index), folder, 0.0, error="folder not found")]
    if _is_run(folder):
        return [_run(str(index), folder)]
    try:
        children = sorted(child for child in folder.iterdir() if child.is_dir() and _is_run(child))
    except OSError as exc:
        return [EvalRun(str(index), folder, 0.0, error=f"cannot list the folder: {exc.strerror or exc}")]
    if not children:
        return [EvalRun(str(index), folder, 0.0, error=f"no eval run here (guard eval --out DIR writes DIR/{METRICS})")]
    return [_run(f"{index}/{child.name}", child) for child in children]


def find_runs(folders: Sequence[Path]) -> list[EvalRun]:
    """Every run of the configured folders, newest first (``created_at`` is to the second: runs scored in the same
    second are in the order their reports were written)."""
    runs = [run for index, folder in enumerate(folders) for run in _runs_in(index, folder)]
    return sorted(runs, key=lambda run: (run.created, run.modified), reverse=True)


@functools.lru_cache(maxsize=16)
def _read_results(path: Path, stamp: tuple[int, int]) -> tuple[ResultRow, ...]:
    rows = []
    with io.TextIOWrapper(_open_regular(path), encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                rows.append(ResultRow.model_validate_json(line))
            except ValidationError:
                continue  # a torn last line (a run stopped mid-write) or a blank one; the scored report still stands
    return tuple(rows)


def load_results(run: EvalRun, variant: VariantMetrics) -> list[ResultRow]:
    """The ``results.jsonl`` rows of one variant of the run; none when the file is gone."""
    path = run.folder / RESULTS
    stamp = _stamp(path)
    if stamp is None:
        return []
    try:
        rows = _read_results(path, stamp)
    except OSError:
        return []
    return [r for r in rows if r.model == variant.model and r.depth == variant.depth]


@dataclass(frozen=True)
class CaseInput:
    """A case from the dataset file the run names, its inputs as indented JSON with the audit log's names redacted; or why it is not shown."""

    event: str | None = None
    tool_name: str | None = None
    tool_input: str | None = None
    context: str | None = None
    session: str | None = None
    rule: str | None = None
    tags: tuple[str, ...] = ()
    notes: str | None = None
    source: str | None = None
    missing: str | None = None


def _pretty(value: object, redact: frozenset[str]) -> str:
    return json.dumps(redacted(value, redact), indent=2, ensure_ascii=False, default=str)


def _dataset_file(run: EvalRun, info: DatasetInfo) -> Path | None:
    """The dataset file as it was judged: its recorded path (absolute, or relative to here, the run folder or one above it) with the same sha256."""
    recorded = Path(info.path)
    bases = [Path.cwd(), run.folder, *run.folder.resolve().parents]
    for candidate in [recorded] if recorded.is_absolute() else [base / recorded for base in bases]:
        stamp = _stamp(candidate)
        if stamp is not None and candidate.is_file() and _sha256(candidate, stamp) == info.sha256:
            return candidate
    return None


@functools.lru_cache(maxsize=16)
def _sha256(path: Path, stamp: tuple[int, int]) -> str | None:
    try:
        with _open_regular(path) as file:
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError:
        return None


@functools.lru_cache(maxsize=8)
def _cases(path: Path, stamp: tuple[int, int]) -> dict[str, Case]:
    return {row.case.id: row.case for row in read_rows(path, CheckReport())}


def case_input(run: EvalRun, key: str, redact: frozenset[str] = frozenset()) -> CaseInput:
    """Case ``key`` (``dataset/case_id``) of ``run`` as the judge saw it, with the fields people keep beside it."""
    dataset, _, case_id = key.partition("/")
    info = next((d for d in (run.report.datasets if run.report else []) if d.name == dataset), None)
    if info is None:
        return CaseInput(missing=f"the run names no dataset {dataset!r}")
    path = _dataset_file(run, info)
    stamp = _stamp(path) if path else None
    if path is None or stamp is None:
        return CaseInput(
            missing=f"dataset {info.path} is not found with the content the run judged (sha256 {info.sha256[:12]}…)"
        )
    case = _cases(path, stamp).get(case_id)
    if case is None:
        return CaseInput(missing=f"case {case_id!r} is not in {info.path}")
    return CaseInput(
        event=case.event,
        tool_name=case.tool_name,
        tool_input=_pretty(case.tool_input, redact),
        context=case.context,
        session=None if case.session is None else _pretty(case.session, redact),
        rule=case.rule,
        tags=tuple(case.tags),
        notes=case.notes,
        source=os.fspath(path),
    )
