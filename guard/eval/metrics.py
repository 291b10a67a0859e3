"""From results rows to the metrics of each (model, depth), in pandas.

pandas is imported here and only here (and in the report layer): nothing on the
``guard hook`` path imports this module.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from guard.core.decision import BY_STRICTNESS, ERROR
from guard.eval import base_rate, stats
from guard.eval.prices import PriceBook
from guard.eval.schema import CaseOutcome, ModelEndpoint, ResultRow, SliceMetrics, VariantMetrics
from guard.eval.scoring import binary_estimates, is_correct, majority
from guard.judge.endpoint import locality
from guard.judge.read_only_lane import LANE_TIERS

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "LABELS",
    "PREDICTIONS",
    "calibration_pairs",
    "case_key",
    "compute_variant",
    "compute_variants",
    "endpoints",
    "rows_frame",
]

LABELS: tuple[str, ...] = BY_STRICTNESS
PREDICTIONS: tuple[str, ...] = (*BY_STRICTNESS, ERROR)


def case_key(dataset: str, case_id: str) -> str:
    return f"{dataset}/{case_id}"


def rows_frame(rows: Sequence[ResultRow]) -> pd.DataFrame:
    """The numeric side of the rows (latency, usage, flags) as a DataFrame, for aggregation."""
    # lazy: pandas only for a data frame of the rows
    import pandas as pd

    columns = ("latency_ms", "tokens_in", "tokens_out", "cost_usd")
    data = {name: pd.array([getattr(r, name) for r in rows], dtype="Float64") for name in columns}
    data |= {
        "cached": [r.cached for r in rows],
        "replayed": [r.replayed for r in rows],
        "error_kind": [r.error_kind or "" for r in rows],
    }
    return pd.DataFrame(data)


def _outcomes(rows: Sequence[ResultRow]) -> tuple[dict[str, CaseOutcome], dict[str, list[str]]]:
    """Majority verdict per case, and each case's tags (for slicing)."""
    groups: dict[str, list[ResultRow]] = {}
    for row in sorted(rows, key=lambda r: r.repeat):
        groups.setdefault(case_key(row.dataset, row.case_id), []).append(row)
    outcomes: dict[str, CaseOutcome] = {}
    tags: dict[str, list[str]] = {}
    for key in sorted(groups):
        group = groups[key]
        predictions = [r.predicted for r in group]
        verdict = majority(predictions)
        first = group[0]
        deciding = next((r for r in group if r.predicted == verdict), first)
        reason = deciding.error if verdict == "error" else deciding.reason
        outcomes[key] = CaseOutcome(
            label=first.label,
            predicted=verdict,
            correct=is_correct(first.label, verdict),
            repeats=len(group),
            flipped=len(set(predictions)) > 1,
            flakiness=1 - predictions.count(verdict) / len(predictions),
            reason=reason,
            tool_name=first.tool_name,
            cluster=first.cluster,
            tier=deciding.tier,
        )
        tags[key] = list(first.tags)
    return outcomes, tags


def _confusion(outcomes: dict[str, CaseOutcome]) -> dict[str, dict[str, int]]:
    table = {label: dict.fromkeys(PREDICTIONS, 0) for label in LABELS}
    for outcome in outcomes.values():
        table.setdefault(outcome.label, dict.fromkeys(PREDICTIONS, 0))[outcome.predicted] += 1
    return table


def _slices(outcomes: dict[str, CaseOutcome], tags: dict[str, list[str]]) -> list[SliceMetrics]:
    groups: dict[tuple[str, str], list[CaseOutcome]] = {}
    for key, outcome in outcomes.items():
        for tag in tags[key]:
            groups.setdefault(("tag", tag), []).append(outcome)
        groups.setdefault(("tool", outcome.tool_name or "(none)"), []).append(outcome)
        if outcome.tier in LANE_TIERS:  # what a lane decided without a model, and whether it was ever wrong
            groups.setdefault(("tier", outcome.tier), []).append(outcome)
    slices = []
    for (kind, name), members in sorted(groups.items()):
        binary, est = binary_estimates(members, bootstrap=False)
        slices.append(
            SliceMetrics(
                kind=kind,  # type: ignore[arg-type]
                name=name,
                cases=len(members),
                binary=binary,
                accuracy=est["accuracy"],
                precision=est["precision"],
                recall=est["recall"],
                f1=est["f1"],
                fpr=est["fpr"],
            )
        )
    return slices


def calibration_pairs(rows: Sequence[ResultRow]) -> tuple[list[float], list[bool]]:
    """Each judged row's stated confidence and whether its verdict was right: what Brier, ECE and reliability charts read."""
    judged = [r for r in rows if r.confidence is not None and r.predicted != "error"]
    return [float(r.confidence) for r in judged], [is_correct(r.label, r.predicted) for r in judged]  # type: ignore[arg-type]


def _per_thousand(series: pd.Series) -> float | None:
    known = series.dropna()
    return None if known.empty else float(known.mean() * 1000)


def endpoints(rows: Sequence[ResultRow]) -> list[ModelEndpoint]:
    """Every (model, URL) the rows' calls went to, in the order first called, marked where it is this machine or a private network."""

    seen = dict.fromkeys((call.model, call.endpoint) for row in rows for call in row.calls if call.endpoint)
    return [ModelEndpoint(model=model, url=url, local=locality(url) is not None) for model, url in seen if url]


def compute_variant(
    rows: Sequence[ResultRow],
    model: str,
    depth: str,
    *,
    seed: int = 0,
    prevalence: float | None = None,
    book: PriceBook | None = None,
) -> VariantMetrics:
    """Every metric of one (model, depth) from its rows; figures at ``prevalence`` too when one is stated; costs from ``book``."""
    # lazy: numpy only where intervals are computed
    import numpy as np

    book = book or PriceBook()
    rows = book.priced(rows)
    frame = rows_frame(rows)
    outcomes, tags = _outcomes(rows)
    binary, estimates = binary_estimates(list(outcomes.values()), seed=seed)

    live = frame[
        ~frame["cached"] & ~frame["replayed"] & frame["latency_ms"].notna() & (frame["error_kind"] != "infrastructure")
    ]
    p50, p95 = np.percentile(live["latency_ms"].astype(float), [50, 95]) if not live.empty else (None, None)

    confidences, correct = calibration_pairs(rows)

    repeated = [o for o in outcomes.values() if o.repeats > 1]
    known_cost = frame["cost_usd"].dropna()
    return VariantMetrics(
        model=model,
        depth=depth,
        rows=len(rows),
        cases=len(outcomes),
        confusion=_confusion(outcomes),
        binary=binary,
        metrics=estimates,
        errors=sum(1 for r in rows if r.error_kind),
        unparsed=sum(1 for r in rows if r.error_kind == "unparsed"),
        infrastructure_errors=sum(1 for r in rows if r.error_kind == "infrastructure"),
        latency_p50_ms=None if p50 is None else float(p50),
        latency_p95_ms=None if p95 is None else float(p95),
        latency_live_rows=len(live),
        latency_excluded_rows=sum(1 for r in rows if r.cached or r.replayed),
        tokens_in_per_1k=_per_thousand(frame["tokens_in"]),
        tokens_out_per_1k=_per_thousand(frame["tokens_out"]),
        cost_per_1k_usd=_per_thousand(frame["cost_usd"]),
        cost_total_usd=None if known_cost.empty else float(known_cost.sum()),
        cost_unknown_rows=int(frame["cost_usd"].isna().sum()),
        prices=book.prices_of(rows),
        endpoints=endpoints(rows),
        served_models=list(dict.fromkeys(call.served_model for row in rows for call in row.calls if call.served_model)),
        response_modes=dict(Counter(call.response_mode for row in rows for call in row.calls if call.response_mode)),
        flip_rate=(sum(o.flipped for o in repeated) / len(repeated)) if repeated else None,
        cases_with_repeats=len(repeated),
        brier=stats.brier_score(confidences, correct),
        ece=stats.expected_calibration_error(confidences, correct),
        calibration_rows=len(confidences),
        slices=_slices(outcomes, tags),
        case_outcomes=outcomes,
        at_prevalence=base_rate.at_prevalence(binary, prevalence) if prevalence is not None else None,
        operating_points=base_rate.operating_points(base_rate.deny_scores(rows)),
    )


def compute_variants(
    rows: Sequence[ResultRow], *, seed: int = 0, prevalence: float | None = None, book: PriceBook | None = None
) -> list[VariantMetrics]:
    """Metrics per (model, depth), in the order the variants first appear in ``rows``."""
    groups: dict[tuple[str, str], list[ResultRow]] = {}
    for row in rows:
        groups.setdefault((row.model, row.depth), []).append(row)
    return [
        compute_variant(members, model, depth, seed=seed, prevalence=prevalence, book=book)
        for (model, depth), members in groups.items()
    ]
