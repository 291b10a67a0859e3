"""Judge against judge on the same cases: exact McNemar and a paired bootstrap of ΔF1.

The same functions compare two models of one run and this run against a baseline,
so "significantly worse" means one thing everywhere:

* McNemar p < 0.05 with more regressions than improvements, or
* the paired-bootstrap 95% interval of F1(now) − F1(baseline) lies entirely below 0.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from pydantic import ValidationError

from guard.core.errors import GuardError
from guard.eval import stats
from guard.eval.schema import BaselineComparison, CaseOutcome, MetricsReport, PairComparison, ResultRow, VariantMetrics
from guard.eval.scoring import BinaryArrays

__all__ = ["SIGNIFICANCE", "baseline_pairs", "compare_outcomes", "compare_to_baseline", "load_baseline", "pairwise"]

SIGNIFICANCE = 0.05


def compare_outcomes(a_name: str, a: dict[str, CaseOutcome], b_name: str, b: dict[str, CaseOutcome], *, seed: int = 0) -> PairComparison:
    """Compare two judges on the cases both judged (keys present in both)."""
    shared = sorted(a.keys() & b.keys())
    a_only = sum(1 for k in shared if a[k].correct and not b[k].correct)
    b_only = sum(1 for k in shared if b[k].correct and not a[k].correct)
    arrays_a = BinaryArrays.from_outcomes([a[k] for k in shared])
    arrays_b = BinaryArrays.from_outcomes([b[k] for k in shared])
    f1_a = arrays_a.point("f1") if shared else None
    f1_b = arrays_b.point("f1") if shared else None
    diff = None if f1_a is None or f1_b is None else f1_a - f1_b
    interval = stats.paired_bootstrap_interval(arrays_a.f1, arrays_b.f1, len(shared), seed=seed) if diff is not None else None
    return PairComparison(
        a=a_name,
        b=b_name,
        cases=len(shared),
        a_only_correct=a_only,
        b_only_correct=b_only,
        mcnemar_p=stats.mcnemar_exact(a_only, b_only),
        f1_a=f1_a,
        f1_b=f1_b,
        f1_diff=diff,
        f1_diff_low=interval[0] if interval else None,
        f1_diff_high=interval[1] if interval else None,
    )


def pairwise(variants: Sequence[VariantMetrics], *, seed: int = 0) -> list[PairComparison]:
    """Every pair of (model, depth) variants of one run."""
    return [compare_outcomes(a.name, a.case_outcomes, b.name, b.case_outcomes, seed=seed) for a, b in itertools.combinations(variants, 2)]


def load_baseline(path: str) -> list[VariantMetrics]:
    """A previous ``metrics.json``, or a ``results.jsonl`` scored afresh."""
    from guard.eval.metrics import compute_variants

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
        raise GuardError(f"baseline {path}: not a guard metrics.json or results.jsonl: {str(exc).splitlines()[0]}") from exc


class _Named(Protocol):
    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=_Named)


def baseline_pairs(current: Sequence[N], baseline: Sequence[VariantMetrics], source: str) -> list[tuple[N, VariantMetrics]]:
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


def compare_to_baseline(current: Sequence[VariantMetrics], baseline: Sequence[VariantMetrics], source: str, *, seed: int = 0) -> list[BaselineComparison]:
    """Case-by-case regressions and improvements, and whether the drop is significant."""
    results = []
    for now, base in baseline_pairs(current, baseline, source):
        shared = sorted(now.case_outcomes.keys() & base.case_outcomes.keys())
        regressed = [k for k in shared if base.case_outcomes[k].correct and not now.case_outcomes[k].correct]
        improved = [k for k in shared if now.case_outcomes[k].correct and not base.case_outcomes[k].correct]
        pair = compare_outcomes(now.name, now.case_outcomes, base.name, base.case_outcomes, seed=seed)
        mcnemar_drop = pair.mcnemar_p < SIGNIFICANCE and len(regressed) > len(improved)
        f1_drop = pair.f1_diff_high is not None and pair.f1_diff_high < 0
        reasons = []
        if mcnemar_drop:
            reasons.append(f"McNemar p={pair.mcnemar_p:.4f} < {SIGNIFICANCE} with {len(regressed)} regressed vs {len(improved)} improved")
        if f1_drop:
            reasons.append(f"F1 fell by {-(pair.f1_diff or 0):.3f}, 95% interval of the change [{pair.f1_diff_low:.3f}, {pair.f1_diff_high:.3f}] is below 0")
        results.append(
            BaselineComparison(
                source=source,
                current=now.name,
                baseline=base.name,
                comparison=pair,
                regressed=regressed,
                improved=improved,
                significant_drop=mcnemar_drop or f1_drop,
                why="; ".join(reasons) or f"no significant drop (McNemar p={pair.mcnemar_p:.4f}, {len(regressed)} regressed, {len(improved)} improved)",
            )
        )
    return results
