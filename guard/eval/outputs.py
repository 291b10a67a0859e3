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

from guard.eval.compare import NO_LIMITS, Limits, compare_to_baseline, pairwise
from guard.eval.gates import ROUTE_METRIC, Gate, evaluate_gates
from guard.eval.junit import render_junit
from guard.eval.metrics import compute_variants
from guard.eval.prices import PriceBook
from guard.eval.ranking import rank
from guard.eval.report_html import render_html
from guard.eval.report_md import render_markdown
from guard.eval.runner import Variant
from guard.eval.schema import BacktestSummary, BaselineComparison, DatasetInfo, MetricsReport, ResultRow, RouteCoverage, UnrecordedRule, VariantMetrics

__all__ = ["OUTPUT_FILES", "build_report", "write_outputs"]

OUTPUT_FILES = ("results.jsonl", "metrics.json", "report.md", "report.html", "junit.xml")


def _guard_version() -> str:
    try:
        return version("guard")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown"


def _listed(variants: Sequence[VariantMetrics], baseline: Sequence[BaselineComparison]) -> set[str]:
    """The cases a report lists: misjudged or flaky in any variant, or moved against the baseline."""
    keys = {key for v in variants for key, o in v.case_outcomes.items() if not o.correct or o.flakiness > 0}
    for b in baseline:
        keys.update(b.regressed, b.improved, b.new_denies, b.new_allows)
    return keys


def _endpoint_stub(variants: Sequence[VariantMetrics]) -> str | None:
    """Why the figures come from this machine, read from where the calls went."""
    from guard.judge.endpoint import locality

    found = next((e for v in variants for e in v.endpoints if locality(e.url) == "loopback"), None)
    return f"{found.model} was called at {found.url}, a loopback address: a stub or local server" if found else None


def build_report(
    rows: Sequence[ResultRow],
    datasets: Sequence[DatasetInfo],
    variants: Sequence[Variant],
    *,
    config: str | None,
    repeats: int,
    replayed: bool,
    stub: str | None,
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

    Rows without a recording are not judgements: they are left out of every figure,
    and while there are any, no gate and no baseline comparison is evaluated (the
    report says to re-record instead).
    """
    judged = [row for row in rows if row.error_kind != "unrecorded"]
    scored = compute_variants(judged, seed=seed, prevalence=prevalence, book=book)
    for variant in scored:  # route coverage is a metric of its variant, so gates and tables read it like any other
        found = next((r for r in routes if r.variant == variant.name), None)
        if found is not None:
            variant.metrics[ROUTE_METRIC] = found.coverage
    by_name = {v.name: v for v in scored}
    ordered = [by_name[v.name] for v in variants if v.name in by_name]
    comparisons = pairwise(ordered, seed=seed, metric=metric)
    evaluated = not unrecorded
    compared = compare_to_baseline(ordered, baseline[1], baseline[0], seed=seed, metric=metric, limits=limits) if baseline and ordered and evaluated else []
    clusters = {row.cluster if row.cluster is not None else f"\0{row.dataset}/{row.case_id}" for row in judged}
    named = {row.cluster for row in judged if row.cluster is not None}
    listed = _listed(ordered, compared)
    return MetricsReport(
        guard_version=_guard_version(),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        datasets=list(datasets),
        config=config,
        repeats=repeats,
        stub=bool(stub or _endpoint_stub(ordered)),
        stub_reason=stub or _endpoint_stub(ordered),
        replayed=replayed,
        variants=ordered,
        comparisons=comparisons,
        gates=evaluate_gates(gates, ordered) if evaluated else [],
        baseline=compared,
        backtest=backtest,
        ranking=rank(ordered, comparisons, metric),
        unrecorded=list(unrecorded),
        rerecord=rerecord if unrecorded else None,
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
