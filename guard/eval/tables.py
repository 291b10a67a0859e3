"""The report's tables as plain rows, so Markdown and HTML render the same content.

Each function returns ``Table(title, headers, rows)`` of strings; the renderers
only format. Numbers are rounded for people here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

from guard.eval.metrics import PREDICTIONS
from guard.eval.schema import Estimate, MetricsReport, VariantMetrics

__all__ = [
    "Table",
    "baseline_tables",
    "confusion_table",
    "gate_table",
    "headline_tables",
    "misjudged_table",
    "notices",
    "pairwise_table",
    "result_line",
    "slice_table",
    "summary_table",
    "usage_table",
]

#: How many case ids or rows a summary lists before it says "and N more".
LIST_LIMIT = 25


@dataclass(frozen=True)
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]


def fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def fmt_estimate(est: Estimate) -> str:
    if est.value is None:
        return "–"
    if est.low is None or est.high is None:
        return fmt(est.value)
    return f"{est.value:.3f} [{est.low:.3f}, {est.high:.3f}]"


def fmt_cost(value: float | None) -> str:
    return "–" if value is None else f"${value:.4f}"


def notices(report: MetricsReport) -> list[str]:
    """Warnings a reader must see before any figure."""
    lines = []
    if report.stub:
        lines.append(
            f"These figures come from a STUB model ({report.stub_reason}), not a real judge: "
            "they prove the harness, gates and replay work, and say nothing about judgement quality."
        )
    if report.replayed:
        lines.append("Replayed from recorded cassettes: verdicts, tokens and cost are as recorded; latency is not measured.")
    for variant in report.variants:
        if variant.infrastructure_errors:
            lines.append(f"{variant.name}: {variant.infrastructure_errors} judgement(s) could not run (infrastructure errors); the run exits 1.")
    return lines


def headline_tables(report: MetricsReport) -> list[Table]:
    """The tables at the top of every report, in order: summary, gates, baseline, pairs, usage."""
    return [
        summary_table(report),
        *([gate_table(report)] if report.gates else []),
        *baseline_tables(report),
        *([pairwise_table(report)] if report.comparisons else []),
        usage_table(report),
    ]


def result_line(report: MetricsReport) -> str | None:
    """FAILED / passed with counts, or None when the run had no gate and no baseline."""
    failed = sum(1 for g in report.gates if not g.passed)
    dropped = sum(1 for b in report.baseline if b.significant_drop)
    if failed or dropped:
        return f"Result: FAILED ({failed} gate(s) failed, {dropped} significant drop(s) against the baseline)"
    if report.gates or report.baseline:
        return "Result: passed (every gate holds, no significant drop)"
    return None


def summary_table(report: MetricsReport) -> Table:
    rows = []
    for v in report.variants:
        m = v.metrics
        rows.append(
            [
                v.name,
                str(v.cases),
                fmt_estimate(m["accuracy"]),
                fmt_estimate(m["precision"]),
                fmt_estimate(m["recall"]),
                fmt_estimate(m["f1"]),
                fmt_estimate(m["fpr"]),
                fmt_estimate(m["kappa"]),
                f"{v.errors} ({v.unparsed} unparsed)",
            ]
        )
    headers = ["model @ depth", "cases", "accuracy", "precision", "recall", "F1", "FPR", "kappa", "errors"]
    return Table("Summary (95% intervals: Wilson; F1 and kappa: bootstrap)", headers, rows)


def usage_table(report: MetricsReport) -> Table:
    rows = []
    for v in report.variants:
        latency = f"{fmt(v.latency_p50_ms, 0)} / {fmt(v.latency_p95_ms, 0)}" if v.latency_live_rows else "not measured"
        rows.append(
            [
                v.name,
                latency,
                str(v.latency_live_rows),
                fmt(v.tokens_in_per_1k, 0),
                fmt(v.tokens_out_per_1k, 0),
                fmt_cost(v.cost_per_1k_usd),
                fmt_cost(v.cost_total_usd),
                f"{v.cost_unknown_rows} of {v.rows}",
                fmt(v.flip_rate),
                fmt(v.brier),
                fmt(v.ece),
            ]
        )
    headers = ["model @ depth", "latency p50 / p95 ms", "live rows", "tokens in /1k", "tokens out /1k", "cost /1k", "cost total", "rows without a price", "flip rate", "Brier", "ECE"]
    title = "Cost, latency, stability, calibration (a row has no price when LiteLLM cannot price its model or its endpoint is a custom api_base; costs cover priced rows)"
    return Table(title, headers, rows)


def confusion_table(variant: VariantMetrics) -> Table:
    headers = ["label ↓ / verdict →", *PREDICTIONS]
    rows = [[label, *(str(counts.get(p, 0)) for p in PREDICTIONS)] for label, counts in variant.confusion.items()]
    return Table(f"Confusion matrix: {variant.name}", headers, rows)


def pairwise_table(report: MetricsReport) -> Table:
    rows = [
        [
            f"{c.a} vs {c.b}",
            str(c.cases),
            str(c.a_only_correct),
            str(c.b_only_correct),
            f"{c.mcnemar_p:.4f}",
            fmt(c.f1_diff),
            "–" if c.f1_diff_low is None else f"[{c.f1_diff_low:.3f}, {fmt(c.f1_diff_high)}]",
        ]
        for c in report.comparisons
    ]
    headers = ["a vs b", "cases", "only a right", "only b right", "McNemar p", "ΔF1 (a−b)", "95% interval"]
    return Table("Model against model (paired)", headers, rows)


def gate_table(report: MetricsReport) -> Table:
    rows = [[g.metric, g.variant, fmt(g.value), f"≥ {g.threshold:g}", "pass" if g.passed else "FAIL"] for g in report.gates]
    return Table("Gates", ["metric", "model @ depth", "value", "threshold", "result"], rows)


def _ids(keys: list[str]) -> str:
    shown = ", ".join(keys[:LIST_LIMIT])
    return shown + (f" … and {len(keys) - LIST_LIMIT} more" if len(keys) > LIST_LIMIT else "") if keys else "none"


def baseline_tables(report: MetricsReport) -> list[Table]:
    tables = []
    for b in report.baseline:
        c = b.comparison
        rows = [
            ["verdict", "SIGNIFICANT DROP" if b.significant_drop else "no significant drop"],
            ["why", b.why],
            ["F1 now / baseline", f"{fmt(c.f1_a)} / {fmt(c.f1_b)}"],
            ["ΔF1 95% interval", "–" if c.f1_diff_low is None else f"[{c.f1_diff_low:.3f}, {fmt(c.f1_diff_high)}]"],
            [f"regressed ({len(b.regressed)})", _ids(b.regressed)],
            [f"improved ({len(b.improved)})", _ids(b.improved)],
        ]
        tables.append(Table(f"Baseline: {b.current} against {b.baseline} ({b.source})", ["", ""], rows))
    return tables


def slice_table(variant: VariantMetrics) -> Table:
    rows = [
        [s.kind, s.name, str(s.cases), fmt_estimate(s.accuracy), fmt(s.precision.value), fmt(s.recall.value), fmt(s.f1.value), fmt(s.fpr.value)]
        for s in sorted(variant.slices, key=lambda s: (s.accuracy.value if s.accuracy.value is not None else 2, s.kind, s.name))
    ]
    return Table(f"Slices: {variant.name} (worst accuracy first)", ["by", "slice", "cases", "accuracy", "precision", "recall", "F1", "FPR"], rows)


def misjudged_table(variant: VariantMetrics, limit: int = LIST_LIMIT) -> Table:
    wrong = [(key, o) for key, o in variant.case_outcomes.items() if not o.correct]
    rows = [[key, o.label, o.predicted, (o.reason or "").replace("\n", " ")[:200]] for key, o in wrong[:limit]]
    if len(wrong) > limit:
        rows.append(["…", "", "", f"{len(wrong) - limit} more in results.jsonl"])
    return Table(f"Misjudged cases: {variant.name} ({len(wrong)})", ["case", "label", "verdict", "reason"], rows)
