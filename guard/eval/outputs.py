"""Scoring a run into ``MetricsReport`` and writing the files of ``--out``.

``results.jsonl`` is written by the runner as rows land; this module writes the
rest: ``metrics.json``, ``report.md``, ``report.html``, ``junit.xml``. Each file is
written whole to a temporary name and renamed, so a reader never sees half a report.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from guard.eval.compare import compare_to_baseline, pairwise
from guard.eval.gates import Gate, evaluate_gates
from guard.eval.junit import render_junit
from guard.eval.metrics import compute_variants
from guard.eval.report_html import render_html
from guard.eval.report_md import render_markdown
from guard.eval.runner import Variant
from guard.eval.schema import BacktestSummary, DatasetInfo, MetricsReport, ResultRow, VariantMetrics

__all__ = ["OUTPUT_FILES", "build_report", "write_outputs"]

OUTPUT_FILES = ("results.jsonl", "metrics.json", "report.md", "report.html", "junit.xml")


def _guard_version() -> str:
    try:
        return version("guard")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown"


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
) -> MetricsReport:
    """Metrics per (model, depth), model-against-model tests, gates and the comparison with ``baseline`` (source, variants)."""
    scored = compute_variants(rows, seed=seed, prevalence=prevalence)
    by_name = {v.name: v for v in scored}
    ordered = [by_name[v.name] for v in variants if v.name in by_name]
    return MetricsReport(
        guard_version=_guard_version(),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        datasets=list(datasets),
        config=config,
        repeats=repeats,
        stub=stub is not None,
        stub_reason=stub,
        replayed=replayed,
        variants=ordered,
        comparisons=pairwise(ordered, seed=seed),
        gates=evaluate_gates(gates, ordered),
        baseline=compare_to_baseline(ordered, baseline[1], baseline[0], seed=seed) if baseline and ordered else [],
        backtest=backtest,
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
