"""Scoring a run into ``MetricsReport`` and writing the files of ``--out``.

``results.jsonl`` is written by the runner as rows land; this module writes the
rest: ``metrics.json``, ``report.md``, ``report.html``, ``junit.xml``. Each file is
written whole to a temporary name and renamed, so a reader never sees half a report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from guard.core.extras import DISTRIBUTION
from guard.eval.compare import NO_LIMITS, Limits, compare_to_baseline, pairwise
from guard.eval.gates import ROUTE_METRIC, Gate, evaluate_gates
from guard.eval.junit import render_junit
from guard.eval.metrics import compute_variants
from guard.eval.prices import PriceBook
from guard.eval.ranking import rank
from guard.eval.report_html import render_html
from guard.eval.report_md import render_markdown
from guard.eval.runner import Variant
from guard.eval.schema import (
    NOT_JUDGED_KINDS,
    BacktestSummary,
    BaselineComparison,
    DatasetInfo,
    MetricsReport,
    NotJudged,
    ResultRow,
    RouteCoverage,
    UnrecordedRule,
    VariantMetrics,
)

__all__ = ["OUTPUT_FILES", "build_report", "guard_version", "write_outputs"]

OUTPUT_FILES = ("results.jsonl", "metrics.json", "report.md", "report.html", "junit.xml")


#: The distribution guard is installed as (the import package is ``guard``).


def guard_version() -> str:
    """The installed ``plainguard`` version that made a report ("unknown" from a checkout that was never installed)."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown"


def _listed(variants: Sequence[VariantMetrics], baseline: Sequence[BaselineComparison]) -> set[str]:
    """The cases a report lists: misjudged or flaky in any variant, or moved against the baseline."""
    keys = {key for v in variants for key, o in v.case_outcomes.items() if not o.correct or o.flakiness > 0}
    for b in baseline:
        keys.update(b.regressed, b.improved, b.new_denies, b.new_allows)
    return keys


def _stub(rows: Sequence[ResultRow]) -> str | None:
    """Why the figures are a stub's: a call guard's own stub answered (it says so), wherever it listened; None for a real model, a local one included."""
    models = list(dict.fromkeys(call.model for row in rows for call in row.calls if call.stub))
    if not models:
        return None
    named = models[0] if len(models) == 1 else f"{', '.join(models[:-1])} and {models[-1]}"
    return f"the answers of {named} came from guard's stub (its replies say so)"


def _not_judged(rows: Sequence[ResultRow]) -> list[NotJudged]:
    """One entry per case and variant that has a judgement that failed (a timeout, a provider error): the first error said."""
    seen: dict[tuple[str, str], NotJudged] = {}
    for row in rows:
        if row.error_kind in ("error", "infrastructure"):
            key = (f"{row.model} @ {row.depth}", f"{row.dataset}/{row.case_id}")
            seen.setdefault(key, NotJudged(variant=key[0], case=key[1], error=row.error or row.error_kind))
    return list(seen.values())


def build_report(
    rows: Sequence[ResultRow],
    datasets: Sequence[DatasetInfo],
    variants: Sequence[Variant],
    *,
    config: str | None,
    repeats: int,
    replayed: bool,
    gates: Sequence[Gate],
    baseline: tuple[str, list[VariantMetrics]] | None,
    seed: int = 0,
    prevalence: float | None = None,
    backtest: BacktestSummary | None = None,
    book: PriceBook | None = None,
    metric: str = "f1",
    limits: Limits = NO_LIMITS,
    unrecorded: Sequence[UnrecordedRule] = (),
    rerecord: str | None = None,
    inputs: Mapping[str, str] | None = None,
    routes: Sequence[RouteCoverage] = (),
) -> MetricsReport:
    """Metrics per (model, depth), the ranking and model-against-model tests, gates and the comparison with ``baseline`` (source, variants).

    Rows without a recording, and judgements that failed (a timeout, a provider
    error), are not verdicts: they are left out of every figure, so never a
    regression, and while there are any, no gate and no baseline comparison is
    evaluated (the report says to re-record, or that it could not judge them).
    """
    judged = [row for row in rows if row.error_kind not in NOT_JUDGED_KINDS]
    not_judged = _not_judged(rows)
    scored = compute_variants(judged, seed=seed, prevalence=prevalence, book=book)
    for variant in scored:
        variant.not_judged = sum(1 for entry in not_judged if entry.variant == variant.name)
    for variant in scored:  # route coverage is a metric of its variant, so gates and tables read it like any other
        found = next((r for r in routes if r.variant == variant.name), None)
        if found is not None:
            variant.metrics[ROUTE_METRIC] = found.coverage
    by_name = {v.name: v for v in scored}
    ordered = [by_name[v.name] for v in variants if v.name in by_name]
    comparisons = pairwise(ordered, seed=seed, metric=metric)
    evaluated = not unrecorded and not not_judged
    compared = (
        compare_to_baseline(ordered, baseline[1], baseline[0], seed=seed, metric=metric, limits=limits)
        if baseline and ordered and evaluated
        else []
    )
    clusters = {row.cluster if row.cluster is not None else f"\0{row.dataset}/{row.case_id}" for row in judged}
    named = {row.cluster for row in judged if row.cluster is not None}
    listed = _listed(ordered, compared)
    stub = _stub(rows)
    return MetricsReport(
        guard_version=guard_version(),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        datasets=list(datasets),
        config=config,
        repeats=repeats,
        stub=stub is not None,
        stub_reason=stub,
        replayed=replayed,
        variants=ordered,
        comparisons=comparisons,
        gates=evaluate_gates(gates, ordered) if evaluated else [],
        baseline=compared,
        backtest=backtest,
        ranking=rank(ordered, comparisons, metric),
        unrecorded=list(unrecorded),
        rerecord=rerecord if unrecorded else None,
        not_judged=not_judged,
        prompt_versions=sorted({call.prompt_version for row in rows for call in row.calls if call.prompt_version}),
        clusters=len(clusters) if named else None,
        case_inputs={key: text for key, text in (inputs or {}).items() if key in listed},
        routes=list(routes),
    )


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write_outputs(out: Path, report: MetricsReport) -> None:
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "metrics.json", report.model_dump_json(indent=2) + "\n")
    _write(out / "report.md", render_markdown(report))
    _write(out / "report.html", render_html(report))
    _write(out / "junit.xml", render_junit(report))
