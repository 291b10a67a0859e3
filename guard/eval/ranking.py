"""Who wins a multi-model run, said in one sentence a reader can act on.

The leader is the variant with the highest value of the chosen metric; it is called
best only when it is significantly better than every other variant under the
paired tests of :func:`guard.eval.compare.pairwise`, Holm-corrected over all the
pairs (three models make three comparisons, and uncorrected p-values would find
a winner by chance too often). Otherwise the headline says INCONCLUSIVE and names
the models the data cannot tell apart from the leader.

The power line gives the smallest difference the data could have detected between
the leader and its closest rival (80% power at α = 0.05, from the paired standard
error, as in "Adding Error Bars to Evals", arXiv 2411.00640): a difference smaller
than that is not evidence of a tie, only of too few cases.
"""

from __future__ import annotations

from collections.abc import Sequence

from guard.eval import stats
from guard.eval.compare import METRIC_NAMES, SIGNIFICANCE
from guard.eval.schema import Agreement, PairComparison, Ranking, VariantMetrics
from guard.eval.scoring import stance

__all__ = ["agreement", "points", "rank"]


def points(value: float) -> str:
    """A difference on a 0–1 metric in points: 0.081 → "8.1 points"."""
    return f"{abs(value) * 100:.1f} points"


def _p(value: float | None) -> str:
    if value is None:
        return "p –"
    return "Holm p < 0.001" if value < 0.001 else f"Holm p = {value:.3f}"


def _against(
    leader: str, other: str, comparisons: Sequence[PairComparison]
) -> tuple[PairComparison, float | None] | None:
    """The pair of ``leader`` and ``other``, with the difference oriented leader − other."""
    for pair in comparisons:
        if (pair.a, pair.b) == (leader, other):
            return pair, pair.diff
        if (pair.a, pair.b) == (other, leader):
            return pair, None if pair.diff is None else -pair.diff
    return None


def agreement(variants: Sequence[VariantMetrics]) -> Agreement | None:
    """Cohen's kappa for two judges, Fleiss' for more, on stop / let through / error over the cases all judged."""
    if len(variants) < 2:
        return None
    shared = sorted(set.intersection(*(set(v.case_outcomes) for v in variants)))
    ratings = [[stance(v.case_outcomes[key].predicted) for v in variants] for key in shared]
    if len(variants) == 2:
        value = stats.cohen_kappa([r[0] for r in ratings], [r[1] for r in ratings]) if ratings else None
        return Agreement(method="Cohen's kappa", judges=2, cases=len(shared), value=value)
    return Agreement(method="Fleiss' kappa", judges=len(variants), cases=len(shared), value=stats.fleiss_kappa(ratings))


def rank(variants: Sequence[VariantMetrics], comparisons: Sequence[PairComparison], metric: str) -> Ranking | None:
    """The ranking and its headline; None for a run with fewer than two variants."""
    if len(variants) < 2:
        return None

    def value(variant: VariantMetrics) -> float:
        found = variant.metrics[metric].value
        return float("-inf") if found is None else found

    scored = sorted(variants, key=value, reverse=True)
    leader = scored[0]
    est = leader.metrics[metric]
    name = METRIC_NAMES.get(metric, metric)
    order = [v.name for v in scored]
    if est.value is None:
        return Ranking(
            metric=metric,
            order=order,
            leader=leader.name,
            headline=f"INCONCLUSIVE: no model has a defined {name} on these cases.",
            agreement=agreement(variants),
        )
    interval = f" [{est.low:.3f}, {est.high:.3f}]" if est.low is not None and est.high is not None else ""
    beats: list[str] = []
    unsure: list[str] = []
    parts: list[str] = []
    closest: PairComparison | None = None
    for other in scored[1:]:
        found = _against(leader.name, other.name, comparisons)
        if found is None:
            continue
        pair, diff = found
        if closest is None:
            closest = pair
        ahead = diff is not None and diff > 0 and pair.p_holm is not None and pair.p_holm < SIGNIFICANCE
        (beats if ahead else unsure).append(other.name)
        gap = "–" if diff is None else f"{diff:+.3f}"
        parts.append(f"{other.name} ({gap}, {_p(pair.p_holm)})")
    if not unsure:
        headline = (
            f"{leader.name} is best on {name}: {est.value:.3f}{interval}, significantly ahead of "
            + " and ".join(parts)
            + "."
        )
    else:
        told = [p for other, p in zip(scored[1:], parts, strict=False) if other.name in beats]
        headline = (
            f"INCONCLUSIVE: {leader.name} has the highest {name} ({est.value:.3f}{interval}), but the data cannot tell it from "
            + " or ".join(p for other, p in zip(scored[1:], parts, strict=False) if other.name in unsure)
            + (f"; it is significantly ahead of {' and '.join(told)}" if told else "")
            + "."
        )
    power = None
    if closest is not None:
        rival = closest.b if closest.a == leader.name else closest.a
        if closest.detectable is not None:
            power = (
                f"With {closest.cases} cases, a difference in {name} between {leader.name} and {rival} smaller than "
                f"{points(closest.detectable)} cannot be detected (80% power at α = {SIGNIFICANCE:g}, {closest.test})."
            )
        else:
            power = f"{leader.name} and {rival} agree on every one of the {closest.cases} cases: the data cannot say how small a difference it would detect."
    return Ranking(
        metric=metric,
        order=order,
        leader=leader.name,
        beats=beats,
        inconclusive=unsure,
        headline=headline,
        power=power,
        agreement=agreement(variants),
    )
