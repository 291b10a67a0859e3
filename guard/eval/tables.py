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
    "backtest_tables",
    "base_rate_table",
    "baseline_tables",
    "confusion_table",
    "gate_table",
    "headline_tables",
    "misjudged_table",
    "notices",
    "operating_point_table",
    "pairwise_table",
    "result_line",
    "slice_table",
    "summary_table",
    "title",
    "usage_table",
]

#: How many case ids or rows a summary lists before it says "and N more".
LIST_LIMIT = 25
#: How many flipped events a backtest report lists (metrics.json has them all).
FLIP_LIMIT = 200


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


def title(report: MetricsReport) -> str:
    """What ran, for the report's heading: ``guard eval`` on datasets or ``guard backtest`` on an audit log."""
    if report.backtest:
        return f"guard backtest: {report.backtest.config} against {report.backtest.reference}, {report.backtest.events} event(s)"
    datasets = ", ".join(f"{d.name} ({d.cases} cases)" for d in report.datasets)
    return f"guard eval: {datasets}, {report.repeats} repeat(s)"


def notices(report: MetricsReport) -> list[str]:
    """Warnings a reader must see before any figure."""
    lines = []
    if report.backtest:
        lines.append(
            f"Each event's label is the reference decision ({report.backtest.reference}): "
            "a 'misjudged' case is an event the new config decides the other way, and accuracy is agreement."
        )
        if report.backtest.redacted_events:
            lines.append(f"{report.backtest.redacted_events} event(s) were replayed with [redacted] where the agent sent a value (audit.redact).")
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
        *backtest_tables(report),
        summary_table(report),
        *([base_rate_table(report)] if any(v.at_prevalence for v in report.variants) else []),
        *([operating_point_table(report)] if any(v.operating_points for v in report.variants) and not report.backtest else []),
        *([gate_table(report)] if report.gates else []),
        *baseline_tables(report),
        *([pairwise_table(report)] if report.comparisons else []),
        usage_table(report),
    ]


def result_line(report: MetricsReport) -> str | None:
    """FAILED / passed with counts, or None when the run had no gate and no baseline."""
    failed = sum(1 for g in report.gates if not g.passed) + bool(report.backtest and report.backtest.gate_failed)
    dropped = sum(1 for b in report.baseline if b.significant_drop)
    if failed or dropped:
        return f"Result: FAILED ({failed} gate(s) failed, {dropped} significant drop(s) against the baseline)"
    if report.gates or report.baseline or (report.backtest and report.backtest.max_new_denies is not None):
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


def base_rate_table(report: MetricsReport) -> Table:
    rows = [
        [
            v.name,
            f"{p.prevalence:g}",
            fmt_estimate(p.precision),
            fmt_estimate(p.alerts_per_1k),
            fmt_estimate(p.false_denies_per_1k),
        ]
        for v in report.variants
        if (p := v.at_prevalence) is not None
    ]
    headers = ["model @ depth", "prevalence", "precision", "calls stopped /1k", "false denies /1k"]
    return Table("At the stated base rate (intervals: Wilson bounds of recall and FPR carried through)", headers, rows)


def operating_point_table(report: MetricsReport) -> Table:
    rows = []
    for v in report.variants:
        for p in v.operating_points:
            fine = "" if p.negatives * p.target_fpr >= 1 else f" (only {p.negatives} negatives: finer than one case)"
            rows.append([v.name, f"{p.target_fpr:g}{fine}", fmt_estimate(p.recall), "none reaches it" if p.threshold is None else f"≥ {p.threshold:.3f}", fmt(p.fpr)])
    headers = ["model @ depth", "FPR budget", "recall", "stop when P(deny)", "FPR reached"]
    return Table("Recall at a fixed false-positive rate (from verdict confidences)", headers, rows)


def backtest_tables(report: MetricsReport) -> list[Table]:
    """What the new config would change on past traffic: counts, cost, and every flipped event with both reasons (latency: the usage table)."""
    b = report.backtest
    if b is None:
        return []
    skipped = ", ".join(f"{count} {why}" for why, count in b.skipped.items()) or "none"
    gate = "–" if b.max_new_denies is None else f"{'FAIL' if b.gate_failed else 'pass'} (at most {b.max_new_denies})"
    summary = [
        ["audit log", b.audit_log],
        ["events replayed", str(b.events)],
        ["skipped (not replayable faithfully)", skipped],
        ["allow → deny (new denies)", str(b.new_denies)],
        ["deny → allow (new allows)", str(b.new_allows)],
        ["McNemar p (new config vs reference)", f"{b.mcnemar_p:.4f}"],
        ["new denies gate", gate],
        ["model cost: new / reference", f"{fmt_cost(report.variants[0].cost_total_usd if report.variants else None)} / {fmt_cost(b.reference_cost_usd)}"],
        ["cache: hook verdicts reused / events with no model call", f"{b.cache_hits} / {b.cached_events}"],
        ["events where a new hook failed", str(b.errors)],
    ]
    flips = [
        [str(f.audit_id), f.direction, f.tool or "-", f.summary, f"{f.before}: {f.before_reason or '-'}", f"{f.after}: {f.after_reason or '-'}"]
        for f in b.flips[:FLIP_LIMIT]
    ]
    if len(b.flips) > FLIP_LIMIT:
        flips.append(["…", "", "", "", "", f"{len(b.flips) - FLIP_LIMIT} more in metrics.json"])
    return [
        Table(f"Backtest: {b.config} against {b.reference}", ["", ""], summary),
        Table(f"Flipped events ({len(b.flips)})", ["audit id", "flip", "tool", "event", "before", "after"], flips),
    ]


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
