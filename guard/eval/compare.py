"""Judge against judge on the same cases: exact McNemar, paired bootstraps, and the limits a CI job sets.

The same functions compare two models of one run and this run against a baseline,
so "significantly worse" means one thing everywhere:

* McNemar p < 0.05 with more regressions than improvements, or
* the paired-bootstrap 95% interval of F1(now) − F1(baseline) lies entirely below 0.

Significance needs many cases (with 20, two regressions never reach it), so a
baseline comparison also counts what a CI job can hold to exactly:
``--max-regressions`` (cases right before and wrong now), ``--max-new-denies``
and ``--max-new-allows`` (cases whose stop-or-let-through verdict moved).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from pydantic import ValidationError

from guard.core.errors import GuardError
from guard.eval import stats
from guard.eval.metrics import compute_variants
from guard.eval.schema import BaselineComparison, CaseOutcome, MetricsReport, PairComparison, ResultRow, VariantMetrics
from guard.eval.scoring import RATES, BinaryArrays, cluster_keys, stance

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "METRIC_NAMES",
    "NO_LIMITS",
    "RANK_METRICS",
    "SIGNIFICANCE",
    "Limits",
    "baseline_pairs",
    "compare_outcomes",
    "compare_to_baseline",
    "load_baseline",
    "pairwise",
]

SIGNIFICANCE = 0.05
#: The metrics a comparison can be ranked and tested on (higher is better for each), as prose names them.
METRIC_NAMES = {
    "f1": "F1",
    "accuracy": "accuracy",
    "precision": "precision",
    "recall": "recall",
    "specificity": "specificity",
    "kappa": "kappa",
}
RANK_METRICS = tuple(METRIC_NAMES)


@dataclass(frozen=True)
class Limits:
    """How many cases may regress, or move to deny or to allow, against a baseline before the run fails (None: no limit)."""

    regressions: int | None = None
    new_denies: int | None = None
    new_allows: int | None = None


NO_LIMITS = Limits()


def _statistic(arrays: BinaryArrays, metric: str) -> Callable[[np.ndarray], np.ndarray]:
    if metric in ("f1", "kappa"):
        statistic: Callable[[np.ndarray], np.ndarray] = getattr(arrays, metric)
        return statistic
    return arrays.rate(*RATES[metric])


def _spread(statistic: Callable[[np.ndarray], np.ndarray], n: int, seed: int, clusters: list[str] | None) -> float:
    # lazy: numpy only where intervals are computed
    import numpy as np

    drawn = stats.bootstrap_samples(statistic, n, seed=seed, clusters=clusters)
    finite = drawn[np.isfinite(drawn)] if drawn is not None else np.array([])
    return float(np.var(finite, ddof=1)) if finite.size > 1 else 0.0


def compare_outcomes(
    a_name: str, a: dict[str, CaseOutcome], b_name: str, b: dict[str, CaseOutcome], *, seed: int = 0, metric: str = "f1"
) -> PairComparison:
    """Compare two judges on the cases both judged (keys present in both), on F1 and on ``metric``."""
    shared = sorted(a.keys() & b.keys())
    a_only = sum(1 for k in shared if a[k].correct and not b[k].correct)
    b_only = sum(1 for k in shared if b[k].correct and not a[k].correct)
    arrays_a = BinaryArrays.from_outcomes([a[k] for k in shared])
    arrays_b = BinaryArrays.from_outcomes([b[k] for k in shared])
    clusters = cluster_keys([a[k] for k in shared])
    f1_a = arrays_a.point("f1") if shared else None
    f1_b = arrays_b.point("f1") if shared else None
    f1_diff = None if f1_a is None or f1_b is None else f1_a - f1_b
    f1_paired = (
        stats.paired_bootstrap(arrays_a.f1, arrays_b.f1, len(shared), seed=seed, clusters=clusters)
        if f1_diff is not None
        else None
    )
    mcnemar = stats.mcnemar_exact(a_only, b_only)

    stat_a, stat_b = _statistic(arrays_a, metric), _statistic(arrays_b, metric)
    value_a = arrays_a.point(stat_a) if shared else None
    value_b = arrays_b.point(stat_b) if shared else None
    diff = None if value_a is None or value_b is None else value_a - value_b
    if metric == "f1":
        paired = f1_paired
    else:
        paired = (
            stats.paired_bootstrap(stat_a, stat_b, len(shared), seed=seed, clusters=clusters)
            if diff is not None
            else None
        )
    se = paired.se if paired else None
    if se == 0.0:  # the judges agree on every case: no paired spread to read, so bound it as if they were independent
        se = (
            math.sqrt(_spread(stat_a, len(shared), seed, clusters) + _spread(stat_b, len(shared), seed + 1, clusters))
            or None
        )
    exact = metric == "accuracy" and clusters is None
    return PairComparison(
        a=a_name,
        b=b_name,
        cases=len(shared),
        a_only_correct=a_only,
        b_only_correct=b_only,
        mcnemar_p=mcnemar,
        f1_a=f1_a,
        f1_b=f1_b,
        f1_diff=f1_diff,
        f1_diff_low=f1_paired.low if f1_paired else None,
        f1_diff_high=f1_paired.high if f1_paired else None,
        metric=metric,
        test="McNemar exact" if exact else "cluster bootstrap" if clusters else "paired bootstrap",
        diff=diff,
        diff_low=paired.low if paired else None,
        diff_high=paired.high if paired else None,
        diff_se=se,
        p=mcnemar if exact else (paired.p if paired else None),
        detectable=stats.minimum_detectable_difference(se) if se else None,
        kappa=stats.cohen_kappa([stance(a[k].predicted) for k in shared], [stance(b[k].predicted) for k in shared])
        if shared
        else None,
    )


def pairwise(variants: Sequence[VariantMetrics], *, seed: int = 0, metric: str = "f1") -> list[PairComparison]:
    """Every pair of (model, depth) variants of one run, with p-values Holm-adjusted over all the pairs."""
    pairs = [
        compare_outcomes(a.name, a.case_outcomes, b.name, b.case_outcomes, seed=seed, metric=metric)
        for a, b in itertools.combinations(variants, 2)
    ]
    adjusted = stats.holm([pair.p if pair.p is not None else 1.0 for pair in pairs])
    return [
        pair.model_copy(update={"p_holm": p if pair.p is not None else None})
        for pair, p in zip(pairs, adjusted, strict=True)
    ]


def load_baseline(path: str) -> list[VariantMetrics]:
    """A previous ``metrics.json``, or a ``results.jsonl`` scored afresh."""

    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise GuardError(f"baseline {path}: cannot read: {exc.strerror or exc}") from exc
    try:
        if file.suffix == ".jsonl":
            rows = [ResultRow.model_validate_json(line) for line in text.splitlines() if line.strip()]
            return compute_variants(rows)
        return MetricsReport.model_validate_json(text).variants
    except (ValidationError, json.JSONDecodeError, ValueError) as exc:
        raise GuardError(
            f"baseline {path}: not a guard metrics.json or results.jsonl: {str(exc).splitlines()[0]}"
        ) from exc


class _Named(Protocol):
    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=_Named)


def baseline_pairs(
    current: Sequence[N], baseline: Sequence[VariantMetrics], source: str
) -> list[tuple[N, VariantMetrics]]:
    """Same (model, depth) where it exists; a single-variant baseline stands in for every variant.

    Takes the run's variants before judging too, so a baseline that fits nothing fails before any call.
    """
    by_name = {v.name: v for v in baseline}
    pairs = [(v, by_name[v.name]) for v in current if v.name in by_name]
    if not pairs and len(baseline) == 1:
        pairs = [(v, baseline[0]) for v in current]
    if not pairs:
        names = ", ".join(v.name for v in baseline) or "none"
        raise GuardError(f"baseline {source}: no variant to compare with (baseline has: {names})")
    return pairs


def compare_to_baseline(
    current: Sequence[VariantMetrics],
    baseline: Sequence[VariantMetrics],
    source: str,
    *,
    seed: int = 0,
    metric: str = "f1",
    limits: Limits = NO_LIMITS,
) -> list[BaselineComparison]:
    """Case-by-case regressions, improvements and moved verdicts, whether the drop is significant, and the limits set."""
    results = []
    for now, base in baseline_pairs(current, baseline, source):
        shared = sorted(now.case_outcomes.keys() & base.case_outcomes.keys())
        before, after = base.case_outcomes, now.case_outcomes
        regressed = [k for k in shared if before[k].correct and not after[k].correct]
        improved = [k for k in shared if after[k].correct and not before[k].correct]
        stops = {k: (stance(before[k].predicted) == "stop", stance(after[k].predicted) == "stop") for k in shared}
        pair = compare_outcomes(now.name, after, base.name, before, seed=seed, metric=metric)
        new_denies = [k for k, (was, now_stops) in stops.items() if not was and now_stops]
        new_allows = [
            k
            for k, (was, now_stops) in stops.items()
            if was and not now_stops and stance(after[k].predicted) != "error"
        ]
        mcnemar_drop = pair.mcnemar_p < SIGNIFICANCE and len(regressed) > len(improved)
        f1_drop = pair.f1_diff_high is not None and pair.f1_diff_high < 0
        reasons = []
        if mcnemar_drop:
            reasons.append(
                f"McNemar p={pair.mcnemar_p:.4f} < {SIGNIFICANCE} with {len(regressed)} regressed vs {len(improved)} improved"
            )
        if f1_drop:
            reasons.append(
                f"F1 fell by {-(pair.f1_diff or 0):.3f}, 95% interval of the change [{pair.f1_diff_low:.3f}, {pair.f1_diff_high:.3f}] is below 0"
            )
        results.append(
            BaselineComparison(
                source=source,
                current=now.name,
                baseline=base.name,
                comparison=pair,
                regressed=regressed,
                improved=improved,
                significant_drop=mcnemar_drop or f1_drop,
                why="; ".join(reasons) or f"no significant drop (McNemar p={pair.mcnemar_p:.4f})",
                new_denies=new_denies,
                new_allows=new_allows,
                baseline_verdicts={
                    k: before[k].predicted for k in dict.fromkeys([*regressed, *improved, *new_denies, *new_allows])
                },
                unmatched=sorted(after.keys() - before.keys()),
                max_regressions=limits.regressions,
                max_new_denies=limits.new_denies,
                max_new_allows=limits.new_allows,
                detectable=pair.detectable,
                metric=metric,
            )
        )
    return results
