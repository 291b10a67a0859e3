"""The report's content as plain text, so Markdown, HTML and ``guard view`` render the same thing.

A report is a list of :class:`Section` (an id, a title, sentences, tables of
strings), in reading order: what happened first (the result, who wins, gates,
the baseline), then the details. A section with nothing to say is left out, so a
renderer only formats. Numbers are rounded for people here and nowhere else, with
units that read: USD per 1,000 decisions, tokens per decision, milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from guard.core.decision import REDACTED
from guard.eval.compare import METRIC_NAMES
from guard.eval.diff import word_diff
from guard.eval.metrics import PREDICTIONS
from guard.eval.schema import BaselineComparison, Estimate, MetricsReport, RouteCoverage, VariantMetrics

__all__ = [
    "LIST_LIMIT",
    "Section",
    "Table",
    "case_lines",
    "confusion_table",
    "detail_sections",
    "failure_lines",
    "fmt",
    "fmt_cost",
    "fmt_estimate",
    "fmt_usd",
    "headline_tables",
    "not_judged_line",
    "notices",
    "rerecord_line",
    "result_line",
    "route_lines",
    "sections",
    "slice_table",
    "split_result",
    "summary_sections",
    "title",
    "verdict_lines",
]

#: What a latency figure includes, said beside it.
LATENCY_NOTE = (
    "Latency is the provider's: each model call's HTTP exchange, request sent → answer read (a hook's calls added up), "
    "timed after every model's client was loaded and warmed. Not included: guard's start-up, opening a connection, "
    "the client's own per-call work (building the request, parsing, LiteLLM's logging), retries' back-off and waiting for a concurrency slot."
)
#: How many cases or rows a table lists before it says "and N more".
LIST_LIMIT = 25
#: How many flipped events a backtest report lists (metrics.json has them all).
FLIP_LIMIT = 200
#: The metrics the summary shows with intervals (the rest are in "More metrics").
SUMMARY_METRICS = (("f1", "F1"), ("accuracy", "accuracy"), ("recall", "recall"), ("fpr", "FPR"))


@dataclass(frozen=True)
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]
    diff_column: int | None = None  # a column holding a word diff (``[-old-]{+new+}``), shown as such in HTML
    nowrap: tuple[int, ...] = ()  # columns HTML keeps on one line (case ids, labels)
    marks: list[list[str]] | None = None  # per cell: "right", "wrong" or "" (HTML colours the verdicts)


@dataclass(frozen=True)
class Section:
    """One part of a report: ``lines`` are sentences shown before its tables; ``fold`` hides it behind a summary in Markdown."""

    id: str
    title: str
    lines: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    fold: bool = False


def _number(value: float, digits: int) -> str:
    shown = f"{value:.{digits}f}"
    return shown.lstrip("-") if float(shown) == 0 else shown  # -0.000 reads as a sign that is not there


def fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else _number(value, digits)


def fmt_estimate(est: Estimate) -> str:
    if est.value is None:
        return "–"
    if est.low is None or est.high is None:
        return fmt(est.value)
    return f"{_number(est.value, 3)} [{_number(est.low, 3)}, {_number(est.high, 3)}]"


def fmt_usd(value: float | None) -> str:
    """Dollars with the digits that matter: $1,234 / $12.50 / $0.183 / $0.000183; "no price" when unknown, never $0."""
    if value is None:
        return "no price"
    if value >= 100:
        return f"${value:,.0f}"
    if value >= 1:
        return f"${value:.2f}"
    return f"${value:.3g}"


def fmt_cost(value: float | None) -> str:
    return "–" if value is None else fmt_usd(value)


def _per_decision(per_1k: float | None) -> str:
    return "–" if per_1k is None else f"{per_1k / 1000:,.0f}"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _cell(text: str | None, limit: int = 200) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


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
            lines.append(
                f"{report.backtest.redacted_events} event(s) were replayed with {REDACTED} where the agent sent a value (audit.redact)."
            )
    if report.stub:
        lines.append(
            f"These figures come from a STUB model ({report.stub_reason}), not a real judge: "
            "they prove the harness, gates and replay work, and say nothing about judgement quality."
        )
    if report.replayed:
        lines.append(
            "Replayed from recorded cassettes: verdicts, tokens and cost are as recorded; latency is not measured."
        )

    if report.clusters is not None:
        cases = max((v.cases for v in report.variants), default=0)
        lines.append(
            f"The {cases} cases form {report.clusters} clusters (their `cluster` field): every interval and test resamples whole clusters, since cases of one cluster are not independent."
        )
    for variant in report.variants:
        if variant.infrastructure_errors:
            lines.append(
                f"{variant.name}: {variant.infrastructure_errors} judgement(s) could not run (infrastructure errors); the run exits 1."
            )
    if report.prompt_versions:
        lines.append(f"Judged by guard {report.guard_version} with prompts {', '.join(report.prompt_versions)}.")
    return lines


def not_judged_line(report: MetricsReport) -> str | None:
    """``could not judge N cases (…)`` with what to do, or None when every case was judged."""
    if not report.not_judged:
        return None
    first = report.not_judged[0]
    return (
        f"could not judge {_plural(report.not_judged_cases, 'case')} (e.g. {first.case} by {first.variant}: {first.error}); "
        "they count in no figure and as no regression: run the same command again to judge only them"
    )


def rerecord_line(report: MetricsReport) -> str | None:
    """``re-record (N cases of rule X have no recording)`` with the command, or None when every case was judged."""
    if not report.unrecorded:
        return None
    groups = ", ".join(f"{_plural(len(g.cases), 'case')} of rule {g.rule}" for g in report.unrecorded)
    verb = "has" if report.unrecorded_cases == 1 else "have"
    line = f"re-record ({groups} {verb} no recording)"
    return line + (f": {report.rerecord}" if report.rerecord else "")


def _baseline_failures(b: BaselineComparison) -> list[str]:
    return [*b.limits_exceeded, *(["a significant drop"] if b.significant_drop else [])]


def result_line(report: MetricsReport) -> str | None:
    """The run's outcome in one line: NOT JUDGED (re-record), FAILED or passed with what decided it; None with no gate, limit or baseline."""
    if report.unrecorded:
        return f"Result: NOT JUDGED — {rerecord_line(report)}; no gate or baseline was evaluated"
    if report.not_judged:
        return f"Result: NOT JUDGED — {not_judged_line(report)}; no gate or baseline was evaluated"
    if report.backtest:
        b = report.backtest
        compared = f"{b.config} against {b.reference}"
        if b.gate_failed:
            return f"Result: FAILED ({compared}: {'; '.join(b.limits_exceeded)})"
        if b.max_new_denies is not None or b.max_new_allows is not None:
            limits = [
                f"{_plural(b.new_denies, 'new deny', 'new denies')} ≤ {b.max_new_denies}"
                if b.max_new_denies is not None
                else "",
                f"{_plural(b.new_allows, 'new allow')} ≤ {b.max_new_allows}" if b.max_new_allows is not None else "",
            ]
            return f"Result: passed ({compared}: {', '.join(x for x in limits if x)})"
        return None
    failed_gates = sum(1 for g in report.gates if not g.passed)
    failures = ([_plural(failed_gates, "gate") + " failed"] if failed_gates else []) + [
        f"{b.current}: {x}" if len(report.baseline) > 1 else x for b in report.baseline for x in _baseline_failures(b)
    ]
    if failures:
        return f"Result: FAILED ({'; '.join(failures)})"
    if report.gates or report.baseline:
        held = ["every gate holds"] if report.gates else []
        held += [
            f"{_plural(len(b.regressed), 'regression')} against the baseline, at most {b.max_regressions}; no significant drop"
            if b.max_regressions is not None
            else "no significant drop against the baseline"
            for b in report.baseline[:1]
        ]
        return f"Result: passed ({'; '.join(held)})"
    return None


def split_result(line: str) -> tuple[str, str]:
    """``Result: FAILED (…)`` → ("Result: FAILED", " (…)"), so a renderer can make the outcome bold."""
    for outcome in ("NOT JUDGED", "FAILED", "passed"):
        head = f"Result: {outcome}"
        if line.startswith(head):
            return head, line[len(head) :]
    return line, ""


def verdict_lines(report: MetricsReport) -> list[str]:
    """The sentences under the result: who wins and how sure that is, or what the baseline comparison found."""
    lines = []
    if report.ranking:
        lines.append(report.ranking.headline)
        if report.ranking.power:
            lines.append(report.ranking.power)
    for b in report.baseline:
        lines.append(_baseline_sentence(b))
    return lines


def _baseline_sentence(b: BaselineComparison) -> str:
    moved = f"{_plural(len(b.regressed), 'case')} regressed, {len(b.improved)} improved, {_plural(len(b.new_denies), 'new deny', 'new denies')}, {_plural(len(b.new_allows), 'new allow')}"
    power = (
        f" With {b.comparison.cases} cases, a drop in {METRIC_NAMES.get(b.metric, b.metric)} smaller than {b.detectable * 100:.1f} points cannot be detected "
        "(80% power at α = 0.05): --max-regressions holds each case instead."
        if b.detectable
        else ""
    )
    return f"Against {b.source} ({b.baseline}): {moved}; {b.why}.{power}"


def _summary_table(report: MetricsReport) -> Table:
    """One row per variant, in ranking order: the headline metrics with intervals, cost, latency, errors."""
    variants = _ranked(report)
    ranked = bool(report.ranking)
    rows = []
    for i, v in enumerate(variants, start=1):
        latency = f"{_ms(v.latency_p50_ms)} / {_ms(v.latency_p95_ms)}" if v.latency_live_rows else "not measured"
        cost = fmt_usd(v.cost_per_1k_usd) + (
            f" ({v.cost_unknown_rows} of {v.rows} rows without a price)"
            if v.cost_unknown_rows and v.cost_per_1k_usd is not None
            else ""
        )
        errors = f"{v.errors} ({v.unparsed} unparsed)" if v.unparsed else str(v.errors)
        rows.append(
            [
                *([str(i)] if ranked else []),
                v.name,
                str(v.cases),
                *(fmt_estimate(v.metrics[m]) for m, _ in SUMMARY_METRICS),
                cost,
                latency,
                errors,
            ]
        )
    headers = [
        *(["rank"] if ranked else []),
        "model @ depth",
        "cases",
        *(label for _, label in SUMMARY_METRICS),
        "USD per 1,000 decisions",
        "latency p50 / p95 ms",
        "errors",
    ]
    return Table("Ranking" if ranked else "Summary", headers, rows, nowrap=(1,) if ranked else (0,))


def _more_metrics_table(report: MetricsReport) -> Table:
    rows = [
        [
            v.name,
            fmt_estimate(v.metrics["precision"]),
            fmt_estimate(v.metrics["specificity"]),
            fmt_estimate(v.metrics["kappa"]),
            fmt_estimate(v.metrics["exact_accuracy"]),
            fmt(v.brier),
            fmt(v.ece),
            "–" if v.flip_rate is None else f"{v.flip_rate:.0%} of {v.cases_with_repeats}",
        ]
        for v in _ranked(report)
    ]
    headers = [
        "model @ depth",
        "precision",
        "specificity",
        "kappa (vs labels)",
        "exact accuracy",
        "Brier",
        "ECE",
        "cases whose repeats differ",
    ]
    return Table("More metrics", headers, rows)


def _interval_note(report: MetricsReport) -> str:
    methods = {e.method for v in report.variants for e in v.metrics.values() if e.low is not None}
    if "cluster-bootstrap" in methods:
        return "Intervals: 95%, cluster bootstrap over the dataset's clusters."
    return "Intervals: 95%; proportions Wilson, F1 and kappa a seeded bootstrap over cases."


def _cost_table(report: MetricsReport) -> Table:
    """Where each model was called, at what price, with what usage: the provenance of every cost cell."""
    rows = []
    for v in _ranked(report):
        endpoints = ", ".join(f"{e.url}{' (local)' if e.local else ''}" for e in v.endpoints) or "no call recorded"
        prices = (
            "; ".join(
                f"{p.model}: ${p.input_per_mtok:g} in / ${p.output_per_mtok:g} out ({p.source})"
                if p.input_per_mtok is not None
                else f"{p.model}: no price (add --price or prices:)"
                for p in v.prices
            )
            or "–"
        )
        served = ", ".join(v.served_models) or "–"
        modes = ", ".join(f"{mode} ×{count}" for mode, count in v.response_modes.items()) or "–"
        rows.append(
            [
                v.name,
                endpoints,
                served,
                modes,
                prices,
                f"{_per_decision(v.tokens_in_per_1k)} / {_per_decision(v.tokens_out_per_1k)}",
                fmt_cost(v.cost_total_usd),
                f"{v.cost_unknown_rows} of {v.rows}",
            ]
        )
    headers = [
        "model @ depth",
        "called at",
        "answered as",
        "verdict asked as",
        "price (USD per million tokens)",
        "tokens in / out per decision",
        "total cost",
        "rows without a price",
    ]
    return Table("Cost and provenance", headers, rows)


def _gate_table(report: MetricsReport) -> Table:
    rows = [
        [g.metric, g.variant, fmt(g.value), f"≥ {g.threshold:g}", "pass" if g.passed else "FAIL"] for g in report.gates
    ]
    return Table("Gates", ["metric", "model @ depth", "value", "threshold", "result"], rows)


def _case_table(
    report: MetricsReport,
    name: str,
    keys: Sequence[str],
    variants: Sequence[VariantMetrics],
    *,
    baseline: BaselineComparison | None = None,
) -> Table:
    """Cases with their input and each variant's verdict and reason (after the baseline's verdict, when given)."""
    heads = ([f"baseline ({baseline.baseline})"] if baseline else []) + [v.name for v in variants]
    rows, marks = [], []
    for key in keys[:LIST_LIMIT]:
        outcomes = [v.case_outcomes.get(key) for v in variants]
        label = next((o.label for o in outcomes if o), "")
        before = [baseline.baseline_verdicts.get(key, "–")] if baseline else []
        rows.append(
            [
                key,
                _cell(report.case_inputs.get(key), 120),
                label,
                *before,
                *(_cell(f"{o.predicted}: {o.reason or 'no reason given'}", 140) if o else "–" for o in outcomes),
            ]
        )
        marks.append(
            ["", "", "", *([""] * len(before)), *(("right" if o.correct else "wrong") if o else "" for o in outcomes)]
        )
    if len(keys) > LIST_LIMIT:
        rows.append(["…", "", "", *([""] * (len(heads) - 1)), f"{len(keys) - LIST_LIMIT} more in results.jsonl"])
        marks.append([""] * (3 + len(heads)))
    return Table(f"{name} ({len(keys)})", ["case", "input", "label", *heads], rows, nowrap=(0, 2), marks=marks)


def case_lines(report: MetricsReport, variant: VariantMetrics, keys: Sequence[str], what: str) -> list[str]:
    """One line per case, for a test failure or a terminal: ``what key [label → verdict]: input — reason``."""
    lines = []
    for key in keys[:LIST_LIMIT]:
        o = variant.case_outcomes.get(key)
        if o is None:
            continue
        lines.append(
            f"{what} {key} [{o.label} → {o.predicted}]: {_cell(report.case_inputs.get(key), 120) or '(input not recorded)'} — {_cell(o.reason, 160) or 'no reason given'}"
        )
    if len(keys) > LIST_LIMIT:
        lines.append(f"… and {len(keys) - LIST_LIMIT} more in report.md")
    return lines


def failure_lines(report: MetricsReport) -> list[str]:
    """Why the run did not pass, and the cases behind it: what ``assert_passed`` and ``guard eval`` print."""
    lines = [line for line in (rerecord_line(report),) if line]
    lines += [
        f"gate failed: {g.metric} = {fmt(g.value)} < {g.threshold:g} for {g.variant}"
        for g in report.gates
        if not g.passed
    ]
    by_name = {v.name: v for v in report.variants}
    for b in report.baseline:
        if not b.failed:
            continue
        lines.append(f"baseline {b.current}: {'; '.join(_baseline_failures(b))}")
        lines += case_lines(report, by_name[b.current], b.regressed, "regressed")
    for g in report.gates:
        if not g.passed and g.metric == "route_coverage":
            found = [c for c in report.routes if c.variant == g.variant]
            lines += [
                f"  {r.rule}: not seen: {_top(r.holes)}; judged differently: {_top(r.differently)}"
                for c in found
                for r in c.rules
                if r.stopped < r.generated
            ]
        elif not g.passed and g.variant in by_name and not report.baseline:
            variant = by_name.pop(g.variant)
            lines += case_lines(
                report, variant, [k for k, o in variant.case_outcomes.items() if not o.correct], "misjudged"
            )
    return lines


def _baseline_section(report: MetricsReport, b: BaselineComparison) -> Section:
    c = b.comparison
    current = next((v for v in report.variants if v.name == b.current), None)
    limits = [
        f"{name}: {len(keys)} (at most {limit}: {'FAIL' if len(keys) > limit else 'pass'})"
        if limit is not None
        else f"{name}: {len(keys)}"
        for name, keys, limit in (
            ("regressions", b.regressed, b.max_regressions),
            ("new denies", b.new_denies, b.max_new_denies),
            ("new allows", b.new_allows, b.max_new_allows),
        )
    ]
    lines = [
        _sentence("; ".join(limits))
        + f". F1 now / baseline: {fmt(c.f1_a)} / {fmt(c.f1_b)}"
        + ("" if c.f1_diff_low is None else f", change [{c.f1_diff_low:.3f}, {fmt(c.f1_diff_high)}]")
        + ".",
    ]
    tables = []
    if current is not None:
        for name, keys in (
            ("Regressed: right in the baseline, wrong now", b.regressed),
            ("Improved: wrong in the baseline, right now", b.improved),
        ):
            if keys:
                tables.append(_case_table(report, name, keys, [current], baseline=b))
    return Section(
        f"baseline-{_slug(b.current)}", f"Baseline: {b.current} against {b.baseline} ({b.source})", lines, tables
    )


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-")


def _p_value(p: float | None) -> str:
    return "–" if p is None else "< 0.001" if p < 0.001 else f"{p:.3f}"


def _ranked(report: MetricsReport) -> list[VariantMetrics]:
    """The variants in ranking order (the run's order when there is no ranking)."""
    order = {name: i for i, name in enumerate(report.ranking.order)} if report.ranking else {}
    return sorted(report.variants, key=lambda v: order.get(v.name, 0))


def _pairwise_table(report: MetricsReport) -> Table:
    rows = []
    for c in report.comparisons:
        if c.diff is None or c.p_holm is None:
            reading = "–"
        elif c.p_holm < 0.05:
            reading = f"{c.a if c.diff > 0 else c.b} better"
        else:
            reading = "cannot tell"
        interval = "" if c.diff_low is None else f" [{c.diff_low:.3f}, {fmt(c.diff_high)}]"
        rows.append(
            [
                f"{c.a} vs {c.b}",
                str(c.cases),
                f"{fmt(c.diff)}{interval}",
                c.test,
                _p_value(c.p),
                _p_value(c.p_holm),
                reading,
                "–" if c.detectable is None else f"{c.detectable:.3f}",
                f"{c.a_only_correct} / {c.b_only_correct}",
                fmt(c.kappa),
            ]
        )
    metric = report.comparisons[0].metric if report.comparisons else "f1"
    headers = [
        "a vs b",
        "cases",
        f"Δ{METRIC_NAMES.get(metric, metric)} (a − b) [95%]",
        "test",
        "p",
        "Holm p",
        "reading",
        "smallest detectable Δ (80% power)",
        "only a / only b right",
        "judges' kappa",
    ]
    return Table("Model against model (paired; Holm-corrected over every pair)", headers, rows)


def _agreement_line(report: MetricsReport) -> str | None:
    agreement = report.ranking.agreement if report.ranking else None
    if agreement is None or agreement.value is None:
        return None
    return f"Judges' agreement with each other on stop / let through / error: {agreement.method} {agreement.value:.3f} over {agreement.cases} cases ({agreement.judges} judges)."


def slice_table(variant: VariantMetrics) -> Table:
    """One variant's slices (``guard view``'s run page shows them per variant)."""
    rows = [
        [
            s.kind,
            s.name,
            str(s.cases),
            fmt_estimate(s.accuracy),
            fmt(s.precision.value),
            fmt(s.recall.value),
            fmt(s.f1.value),
            fmt(s.fpr.value),
        ]
        for s in sorted(
            variant.slices, key=lambda s: (s.accuracy.value if s.accuracy.value is not None else 2, s.kind, s.name)
        )
    ]
    return Table(
        f"Slices: {variant.name} (worst accuracy first)",
        ["by", "slice", "cases", "accuracy", "precision", "recall", "F1", "FPR"],
        rows,
    )


#: A slice of fewer cases says more about chance than about the judge.
MIN_SLICE = 3


def _slices_side_by_side(report: MetricsReport) -> Table | None:
    """Accuracy per slice for every variant in one table, the leader's worst first.

    Slices that are the whole dataset, or smaller than MIN_SLICE cases, say nothing and are left out.
    """
    variants = _ranked(report)
    total = max((v.cases for v in variants), default=0)
    found: dict[tuple[str, str], dict[str, tuple[int, float | None]]] = {}
    for v in variants:
        for s in v.slices:
            found.setdefault((s.kind, s.name), {})[v.name] = (s.cases, s.accuracy.value)
    kept = {key: per for key, per in found.items() if MIN_SLICE <= max(cases for cases, _ in per.values()) < total}
    if not kept:
        return None

    def worst(item: tuple[tuple[str, str], dict[str, tuple[int, float | None]]]) -> tuple[float, ...]:
        values = [item[1][v.name][1] if v.name in item[1] else None for v in variants]
        return tuple(2.0 if value is None else value for value in values)

    ordered = sorted(kept.items(), key=worst)
    rows = [
        [
            kind,
            name,
            str(max(cases for cases, _ in per.values())),
            *(fmt(per[v.name][1]) if v.name in per else "–" for v in variants),
        ]
        for (kind, name), per in ordered[:LIST_LIMIT]
    ]
    if len(ordered) > LIST_LIMIT:
        rows.append(["…", f"{len(ordered) - LIST_LIMIT} more in metrics.json", "", *([""] * len(variants))])
    return Table(
        f"Accuracy by slice of {MIN_SLICE} cases or more ({variants[0].name}'s worst first)",
        ["by", "slice", "cases", *(v.name for v in variants)],
        rows,
    )


def confusion_table(variant: VariantMetrics) -> Table:
    headers = ["label ↓ / verdict →", *PREDICTIONS]
    rows = [[label, *(str(counts.get(p, 0)) for p in PREDICTIONS)] for label, counts in variant.confusion.items()]
    return Table(f"Confusion matrix: {variant.name}", headers, rows)


def _flaky_table(report: MetricsReport) -> Table | None:
    flaky = sorted(
        (
            (o.flakiness, key, v.name, o)
            for v in report.variants
            for key, o in v.case_outcomes.items()
            if o.flakiness > 0
        ),
        key=lambda item: (-item[0], item[1]),
    )
    if not flaky:
        return None
    rows = [
        [
            key,
            name,
            _cell(report.case_inputs.get(key), 120),
            o.label,
            o.predicted,
            f"{flakiness:.2f} ({round(flakiness * o.repeats)} of {o.repeats} repeats disagree)",
        ]
        for flakiness, key, name, o in flaky[:LIST_LIMIT]
    ]
    return Table(
        f"Flakiest cases ({len(flaky)} case(s) whose repeats disagree)",
        ["case", "model @ depth", "input", "label", "majority", "flakiness"],
        rows,
    )


def _base_rate_table(report: MetricsReport) -> Table | None:
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
    if not rows:
        return None
    headers = ["model @ depth", "prevalence", "precision", "calls stopped per 1,000", "false denies per 1,000"]
    return Table("At the stated base rate (intervals: Wilson bounds of recall and FPR carried through)", headers, rows)


def _operating_point_table(report: MetricsReport) -> Table | None:
    """Recall at each FPR budget a dataset can resolve; a budget finer than one negative case, or one no threshold reaches, says nothing and is left out."""
    rows = [
        [v.name, f"{p.target_fpr:g}", fmt_estimate(p.recall), f"≥ {p.threshold:.3f}", fmt(p.fpr)]
        for v in report.variants
        for p in v.operating_points
        if p.threshold is not None and p.negatives * p.target_fpr >= 1 and p.recall.value
    ]
    if not rows or report.backtest:
        return None
    return Table(
        "Recall at a fixed false-positive rate (from verdict confidences)",
        ["model @ depth", "FPR budget", "recall", "stop when P(deny)", "FPR reached"],
        rows,
    )


def _backtest_section(report: MetricsReport) -> Section | None:
    """What the new config would change on past traffic: counts, cost, and which rule flipped what (latency: the summary)."""
    b = report.backtest
    if b is None:
        return None
    skipped = ", ".join(f"{count} {why}" for why, count in b.skipped.items()) or "none"
    lines = [
        f"{b.config} against {b.reference} on {b.events} event(s) of {b.audit_log}: {_plural(b.new_denies, 'new deny', 'new denies')} (allow → deny), "
        f"{_plural(b.new_allows, 'new allow')} (deny → allow); McNemar p = {b.mcnemar_p:.4f} (new config against the reference).",
        f"Skipped (not replayable faithfully): {skipped}. Model cost new / reference: {fmt_usd(report.variants[0].cost_total_usd if report.variants else None)} / {fmt_usd(b.reference_cost_usd)}. "
        f"Cache: {b.cache_hits} hook verdict(s) reused, {b.cached_events} event(s) with no model call. Events where a new hook failed: {b.errors}.",
    ]
    if b.shadow_verdicts:
        per_rule = ", ".join(f"{r.rule} {r.foreseen_in_shadow}/{r.new_denies}" for r in b.rules if r.new_denies)
        lines.append(
            f"Shadow mode: {_plural(b.shadow_verdicts, 'event')} had a recorded shadow deny or ask; {b.foreseen_in_shadow} of the "
            f"{_plural(b.new_denies, 'new deny', 'new denies')} were foreseen by the same rule in shadow ({per_rule or 'no new denies'})."
        )
    tables = []
    if b.rules:
        tables.append(
            Table(
                "Flips by rule",
                ["rule", "new denies", "new allows", "rule text (old → new)"],
                [
                    [
                        r.rule,
                        str(r.new_denies),
                        str(r.new_allows),
                        rule_change_text(r.old_text, r.new_text, r.old_source),
                    ]
                    for r in b.rules
                ],
                diff_column=3,
            )
        )
    flips = [
        [
            str(f.audit_id),
            f.direction,
            ", ".join(f.rules) or "-",
            f.tool or "-",
            f.summary,
            f"{f.before}: {f.before_reason or '-'}",
            f"{f.after}: {f.after_reason or '-'}",
        ]
        for f in b.flips[:FLIP_LIMIT]
    ]
    if len(b.flips) > FLIP_LIMIT:
        flips.append(["…", "", "", "", "", "", f"{len(b.flips) - FLIP_LIMIT} more in metrics.json"])
    if flips:
        tables.append(
            Table(
                f"Flipped events ({len(b.flips)})",
                ["audit id", "flip", "rule", "tool", "event", "before", "after"],
                flips,
            )
        )
    return Section("backtest", f"Backtest: {b.config} against {b.reference}", lines, tables)


def rule_change_text(old: str | None, new: str | None, old_source: str | None = None) -> str:
    """A rule's text change in words: unchanged, added, removed, or a word diff ``[-old-]{+new+}``."""

    if old is None and new is None:
        return "text not known"
    if old is None:
        return f"new: {new} (old text not recorded in the audit log: compare with --against OLD)"
    if new is None:
        return f"removed (was: {old})"
    if old == new:
        return f"unchanged: {new}"
    return "".join(
        text if kind == "same" else f"[-{text}-]" if kind == "old" else f"{{+{text}+}}"
        for kind, text in word_diff(old, new)
    ) + (f" (old: {old_source})" if old_source else "")


def _unrecorded_section(report: MetricsReport) -> Section | None:
    if not report.unrecorded:
        return None
    rows = [
        [
            g.rule,
            str(len(g.cases)),
            ", ".join(g.cases[:LIST_LIMIT])
            + (f" … and {len(g.cases) - LIST_LIMIT} more" if len(g.cases) > LIST_LIMIT else ""),
        ]
        for g in report.unrecorded
    ]
    lines = [
        "Replay found no recording for these cases: their rule or their input changed since the cassettes were recorded. They were not judged, "
        "so no figure below includes them and no gate or baseline was evaluated.",
        f"Re-record them (only the missing calls are made): {report.rerecord}"
        if report.rerecord
        else "Re-record the cassettes.",
    ]
    return Section(
        "unrecorded",
        "Re-record",
        lines,
        [Table("Cases without a recording, by rule", ["rule", "cases", "which"], rows)],
    )


def _not_judged_section(report: MetricsReport) -> Section | None:
    if not report.not_judged:
        return None
    rows = [[entry.variant, entry.case, entry.error] for entry in report.not_judged[: LIST_LIMIT * 5]]
    lines = [
        "These judgements failed (a timeout, a provider error) and gave no verdict. They count in no figure below and as no regression, "
        "and no gate or baseline was evaluated. Run the same command again (the same --out) to judge only them."
    ]
    return Section(
        "not-judged",
        "Could not judge",
        lines,
        [Table("Cases without a verdict", ["model @ depth", "case", "error"], rows)],
    )


def _top(counts: dict[str, int], limit: int = 4) -> str:
    shown = [f"{name} ×{count}" for name, count in list(counts.items())[:limit]]
    return ", ".join(shown) + (f" … {len(counts) - limit} more" if len(counts) > limit else "") if shown else "–"


def _route_table(coverage: RouteCoverage, titled: bool) -> Table:
    headers = [
        "rule",
        "deny cases",
        "routes",
        "not seen",
        "judged differently",
        "judged the same",
        "route coverage",
        "not seen (most often)",
        "judged differently (most often)",
    ]
    rows = [
        [
            r.rule,
            f"{r.cases}" + (f" (+{r.cases_without_routes} without routes)" if r.cases_without_routes else ""),
            str(r.generated),
            str(r.not_seen),
            str(r.judged_differently),
            str(r.judged_same),
            fmt_estimate(r.coverage),
            _top(r.holes),
            _top(r.differently),
        ]
        for r in coverage.rules
    ]
    rows.append(
        [
            "all rules",
            str(sum(r.cases for r in coverage.rules)),
            str(sum(r.generated for r in coverage.rules)),
            str(sum(r.not_seen for r in coverage.rules)),
            str(sum(r.judged_differently for r in coverage.rules)),
            str(sum(r.judged_same for r in coverage.rules)),
            fmt_estimate(coverage.coverage),
            "",
            "",
        ]
    )
    return Table(f"Route coverage: {coverage.variant}" if titled else "Route coverage", headers, rows, nowrap=(0,))


def _routes_section(report: MetricsReport) -> Section | None:
    if not report.routes:
        return None
    lines = [
        "Each deny case's effect rebuilt by other routes (other clients' tools, apply_patch, an MCP server, shell routes such as tee, sed -i, "
        "cp or mv over the file, python3 -c, find -delete, git clean). Not seen: no matcher of the rule matches the route's tool, so the rule never runs, "
        "whatever the model would say. Judged the same: stopped (deny or ask) exactly when the case as written was. "
        "Route coverage: the share of routes the rule stops."
    ]
    return Section(
        "routes", "Route coverage", lines, [_route_table(c, titled=len(report.routes) > 1) for c in report.routes]
    )


def route_lines(report: MetricsReport) -> list[str]:
    """One line per (model, depth) and one per rule: what the terminal shows of ``--routes``."""
    lines = []
    for coverage in report.routes:
        generated = sum(r.generated for r in coverage.rules)
        if not generated:
            lines.append(
                f"route coverage ({coverage.variant}): no deny case has an effect the route templates rebuild (a file written, edited, deleted or read, a URL fetched)"
            )
            continue
        lines.append(
            f"route coverage ({coverage.variant}): {fmt_estimate(coverage.coverage)}, {sum(r.stopped for r in coverage.rules)} of {generated} other routes stopped"
        )
        for r in coverage.rules:
            if r.generated:
                lines.append(
                    f"  {r.rule}: {r.generated} routes, {r.not_seen} not seen, {r.judged_differently} judged differently, {r.judged_same} judged the same"
                )
            else:
                lines.append(
                    f"  {r.rule}: no routes (its {_plural(r.cases_without_routes, 'deny case has', 'deny cases have')} no effect the templates rebuild)"
                )
    return lines


def summary_sections(report: MetricsReport) -> list[Section]:
    """What a reader needs first: what to re-record, who wins (or the run's figures), gates and the baseline."""
    found = [s for s in (_unrecorded_section(report), _not_judged_section(report), _backtest_section(report)) if s]
    if report.variants:
        lines = [_interval_note(report)]
        if any(v.latency_live_rows for v in report.variants):
            lines.append(LATENCY_NOTE)
        found.append(Section("summary", "Who wins" if report.ranking else "Summary", lines, [_summary_table(report)]))
    if report.gates:
        found.append(Section("gates", "Gates", [], [_gate_table(report)]))
    if (routes := _routes_section(report)) is not None:
        found.append(routes)
    found += [_baseline_section(report, b) for b in report.baseline]
    return found


def detail_sections(report: MetricsReport) -> list[Section]:
    """The details, each shown only when it has something to say."""
    variants = _ranked(report)
    found: list[Section] = []
    if report.comparisons:
        found.append(
            Section(
                "pairs",
                "Model against model",
                [line for line in (_agreement_line(report),) if line],
                [_pairwise_table(report)],
            )
        )
    wrong = sorted(
        dict.fromkeys(k for v in variants for k, o in v.case_outcomes.items() if not o.correct),
        key=lambda k: (
            all(v.case_outcomes[k].correct for v in variants[:1] if k in v.case_outcomes),
            -sum(not v.case_outcomes[k].correct for v in variants if k in v.case_outcomes),
            k,
        ),
    )  # the leader's mistakes first, then the cases most models got wrong
    if wrong and not report.backtest:
        found.append(
            Section(
                "misjudged",
                "Misjudged cases",
                [f"Cases at least one model got wrong, with each model's verdict and reason ({len(wrong)} in all)."],
                [_case_table(report, "Misjudged cases", wrong, variants)],
                fold=True,
            )
        )
    if (slices := _slices_side_by_side(report)) is not None:
        found.append(Section("slices", "Slices", [], [slices], fold=True))
    if (flaky := _flaky_table(report)) is not None:
        found.append(
            Section(
                "flaky",
                "Flakiness",
                ["Per case, the share of repeats whose verdict differs from the majority."],
                [flaky],
                fold=True,
            )
        )
    if variants:
        found.append(
            Section(
                "confusion",
                "Confusion matrices",
                ["Majority verdict per case; unparsed answers have their own column and count as wrong."],
                [confusion_table(v) for v in variants],
                fold=True,
            )
        )
        found.append(
            Section(
                "more",
                "More metrics",
                ["95% intervals; Brier and ECE from the verdicts' stated confidence."],
                [_more_metrics_table(report)],
                fold=True,
            )
        )
        found.append(
            Section(
                "cost",
                "Cost and provenance",
                [
                    "Prices are USD per million tokens; a row without a price is shown as such, never as a zero cost. "
                    "Answered as: the model id each endpoint said answered. Verdict asked as: the response format of the calls "
                    "(json_schema; json_object or prompt where the endpoint refused the schema, or its model is not known to support one)."
                ],
                [_cost_table(report)],
                fold=True,
            )
        )
    found += [
        Section(id, heading, [], [t], fold=True)
        for id, heading, t in (
            ("base-rate", "At the stated base rate", _base_rate_table(report)),
            ("operating-points", "Recall at a fixed false-positive rate", _operating_point_table(report)),
        )
        if t
    ]
    return found


def sections(report: MetricsReport) -> list[Section]:
    return summary_sections(report) + detail_sections(report)


def headline_tables(report: MetricsReport) -> list[Table]:
    """The tables of the report's first sections, in order (``guard view``'s run page shows them under its own headings)."""
    return [t for s in summary_sections(report) for t in s.tables] + [
        t
        for s in detail_sections(report)
        if s.id in ("pairs", "cost", "base-rate", "operating-points")
        for t in s.tables
    ]
