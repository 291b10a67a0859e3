"""The statistics a binary judge needs, as small pure functions.

Why these: a judge's proportions sit near 0 or 1, where the Wald interval collapses,
so proportions get the Wilson interval; F1 and kappa are not proportions, so they get
a percentile bootstrap over cases (over clusters of cases where the dataset says
which cases hang together); two judges on the same cases are paired, so they get the
exact McNemar test (a binomial test on the discordant cases) and a paired bootstrap,
and several pairs at once get Holm's correction. Exact arithmetic uses integers
(``math.comb``); no scipy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "BOOTSTRAP_SAMPLES",
    "Z95",
    "PairedDifference",
    "bootstrap_interval",
    "bootstrap_samples",
    "brier_score",
    "calibration_bins",
    "cohen_kappa",
    "expected_calibration_error",
    "fleiss_kappa",
    "holm",
    "mcnemar_exact",
    "minimum_detectable_difference",
    "paired_bootstrap",
    "resample_weights",
    "wilson_interval",
]

Z95 = 1.959963984540054
BOOTSTRAP_SAMPLES = 2000


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for ``successes`` out of ``n``; None when n is 0.

    At 0 successes the lower bound is exactly 0 and at n it is exactly 1 (clamped,
    so float rounding never yields -1e-17).
    """
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be within 0..{n}, got {successes}")
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, center - half)
    high = 1.0 if successes == n else min(1.0, center + half)
    return low, high


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of b against b + c at p = 1/2.

    ``b`` = cases only the first judge got right, ``c`` = only the second. With no
    discordant cases there is no evidence of a difference: p = 1.
    """
    if b < 0 or c < 0:
        raise ValueError("discordant counts cannot be negative")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, float(2 * tail / 2**n))


def cohen_kappa(labels: Sequence[Hashable], predictions: Sequence[Hashable]) -> float | None:
    """Cohen's kappa over the union of categories; None when chance agreement is 1.

    Categories may differ between the two sides (an ``error`` prediction has no
    label counterpart): such a category adds nothing to either agreement term, so
    it can only lower kappa, as an error should.
    """
    if len(labels) != len(predictions):
        raise ValueError("labels and predictions differ in length")
    n = len(labels)
    if n == 0:
        return None
    observed = sum(1 for a, b in zip(labels, predictions, strict=True) if a == b) / n
    label_counts: dict[Hashable, int] = {}
    pred_counts: dict[Hashable, int] = {}
    for a, b in zip(labels, predictions, strict=True):
        label_counts[a] = label_counts.get(a, 0) + 1
        pred_counts[b] = pred_counts.get(b, 0) + 1
    expected = sum(count * pred_counts.get(cat, 0) for cat, count in label_counts.items()) / (n * n)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)


def brier_score(confidences: Sequence[float], correct: Sequence[bool]) -> float | None:
    """Mean squared gap between stated confidence and being right (0 is perfect)."""
    if not confidences:
        return None
    return sum((p - float(ok)) ** 2 for p, ok in zip(confidences, correct, strict=True)) / len(confidences)


def calibration_bins(
    confidences: Sequence[float], correct: Sequence[bool], bins: int = 10
) -> list[tuple[int, float, float]]:
    """(count, mean confidence, accuracy) of each non-empty equal-width confidence bin, lowest first: a reliability chart's points."""
    totals = [[0, 0.0, 0] for _ in range(bins)]  # count, sum of confidence, correct
    for p, ok in zip(confidences, correct, strict=True):
        index = min(bins - 1, max(0, math.ceil(round(p * bins, 9)) - 1))  # round: 0.7 * 10 is 7.000000000000001
        totals[index][0] += 1
        totals[index][1] += p
        totals[index][2] += int(ok)
    return [(int(count), conf_sum / count, hits / count) for count, conf_sum, hits in totals if count]


def expected_calibration_error(confidences: Sequence[float], correct: Sequence[bool], bins: int = 10) -> float | None:
    """ECE over ``bins`` equal-width confidence bins: |accuracy − mean confidence| weighted by bin size."""
    if not confidences:
        return None
    n = len(confidences)
    return sum(
        abs(accuracy - confidence) * count / n
        for count, confidence, accuracy in calibration_bins(confidences, correct, bins)
    )


def _percentiles(samples: np.ndarray) -> tuple[float, float] | None:
    # lazy: numpy only where intervals are computed (the view uses this module without)
    import numpy as np

    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return None
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def resample_weights(
    n: int, *, seed: int = 0, samples: int = BOOTSTRAP_SAMPLES, clusters: Sequence[Hashable] | None = None
) -> np.ndarray:
    """How often each of ``n`` cases is drawn in each of ``samples`` resamples (a samples × n array, read-only).

    Without ``clusters`` cases are drawn with replacement; with them (one key per
    case) whole clusters are, so cases that share a session or a source move
    together and the interval widens as their dependence warrants. Weights rather
    than index rows, so both kinds of draw feed the same weighted statistics. The
    same draw is shared by every statistic of a run (cached), as the seed makes it
    the same anyway.
    """
    if clusters is not None and len(clusters) != n:
        raise ValueError(f"{len(clusters)} cluster keys for {n} cases")
    return _weights(n, seed, samples, None if clusters is None else tuple(str(c) for c in clusters))


@lru_cache(maxsize=8)
def _weights(n: int, seed: int, samples: int, clusters: tuple[str, ...] | None) -> np.ndarray:
    # lazy: numpy only where intervals are computed (the view uses this module without)
    import numpy as np

    rng = np.random.default_rng(seed)
    if clusters is None:
        units, member = n, None
    else:
        _, member = np.unique(np.array(clusters), return_inverse=True)
        units = int(member.max()) + 1 if n else 0
    drawn = rng.integers(0, units, size=(samples, units))
    flat = (drawn + np.arange(samples)[:, None] * units).ravel()
    counts = np.bincount(flat, minlength=samples * units).reshape(samples, units)
    weights = counts if member is None else counts[:, member]
    weights.flags.writeable = False
    return weights


def bootstrap_samples(
    statistic: Callable[[np.ndarray], np.ndarray],
    n: int,
    *,
    seed: int = 0,
    samples: int = BOOTSTRAP_SAMPLES,
    clusters: Sequence[Hashable] | None = None,
) -> np.ndarray | None:
    """``statistic`` over every resample (NaN where undefined); None when there are no cases.

    ``statistic`` receives a (samples × n) array of case weights and returns one
    value per row. Seeded, so the same inputs always give the same samples.
    """
    # lazy: numpy only where intervals are computed (the view uses this module without)
    import numpy as np

    if n <= 0:
        return None
    return np.asarray(statistic(resample_weights(n, seed=seed, samples=samples, clusters=clusters)), dtype=float)


def bootstrap_interval(
    statistic: Callable[[np.ndarray], np.ndarray],
    n: int,
    *,
    seed: int = 0,
    samples: int = BOOTSTRAP_SAMPLES,
    clusters: Sequence[Hashable] | None = None,
) -> tuple[float, float] | None:
    """Percentile 95% interval of ``statistic`` over case (or cluster) resamples."""
    drawn = bootstrap_samples(statistic, n, seed=seed, samples=samples, clusters=clusters)
    return None if drawn is None else _percentiles(drawn)


@dataclass(frozen=True)
class PairedDifference:
    """The bootstrap distribution of ``a − b`` on the same resampled cases, read three ways."""

    low: float
    high: float
    se: float  # its standard deviation: the standard error of the difference
    p: float  # two-sided: twice the smaller share of resamples on either side of 0


def paired_bootstrap(
    statistic_a: Callable[[np.ndarray], np.ndarray],
    statistic_b: Callable[[np.ndarray], np.ndarray],
    n: int,
    *,
    seed: int = 0,
    samples: int = BOOTSTRAP_SAMPLES,
    clusters: Sequence[Hashable] | None = None,
) -> PairedDifference | None:
    """Interval, standard error and p-value of ``a − b`` where both statistics see the same resampled cases."""
    # lazy: numpy only where intervals are computed (the view uses this module without)
    import numpy as np

    drawn = bootstrap_samples(
        lambda w: statistic_a(w) - statistic_b(w), n, seed=seed, samples=samples, clusters=clusters
    )
    if drawn is None:
        return None
    finite = drawn[np.isfinite(drawn)]
    interval = _percentiles(finite)
    if interval is None:
        return None
    p = min(1.0, 2 * min(float(np.mean(finite <= 0)), float(np.mean(finite >= 0))))
    return PairedDifference(
        low=interval[0], high=interval[1], se=float(np.std(finite, ddof=1)) if finite.size > 1 else 0.0, p=p
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the input order: compare each with the level, and the family error stays at it.

    Step-down: the smallest p is multiplied by m, the next by m − 1, …, each kept at
    least as large as the one before (so a larger raw p never looks more significant).
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def minimum_detectable_difference(se: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true difference a two-sided test at ``alpha`` finds with probability ``power``, given the difference's standard error.

    As in Miller, "Adding Error Bars to Evals" (arXiv 2411.00640): (z₁₋α/₂ + z_power) · SE,
    with the SE of the paired difference (which pairing shrinks when the judges agree case by case).
    """
    return (_z(1 - alpha / 2) + _z(power)) * se


def _z(quantile: float) -> float:
    """The standard normal quantile (Acklam's rational approximation; |error| < 1.2e-9), so no scipy."""
    a = (
        -3.969683028665376e01,
        2.209460984245205e02,
        -2.759285104469687e02,
        1.383577518672690e02,
        -3.066479806614716e01,
        2.506628277459239e00,
    )
    b = (
        -5.447609879822406e01,
        1.615858368580409e02,
        -1.556989798598866e02,
        6.680131188771972e01,
        -1.328068155288572e01,
    )
    c = (
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e00,
        -2.549732539343734e00,
        4.374664141464968e00,
        2.938163982698783e00,
    )
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
    if not 0 < quantile < 1:
        raise ValueError("a quantile is strictly between 0 and 1")
    if quantile < 0.02425 or quantile > 1 - 0.02425:
        q = math.sqrt(-2 * math.log(min(quantile, 1 - quantile)))
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        )
        return x if quantile < 0.5 else -x
    q = quantile - 0.5
    r = q * q
    return (
        (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5])
        * q
        / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    )


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float | None:
    """Fleiss' kappa: agreement of three or more judges beyond chance; one row per case, one rating per judge.

    None when there is no case, fewer than two ratings a case, or chance agreement is 1 (every rating the same).
    """
    if not ratings:
        return None
    raters = len(ratings[0])
    if raters < 2 or any(len(row) != raters for row in ratings):
        return None
    totals: dict[Hashable, int] = {}
    observed = 0.0
    for row in ratings:
        counts: dict[Hashable, int] = {}
        for rating in row:
            counts[rating] = counts.get(rating, 0) + 1
            totals[rating] = totals.get(rating, 0) + 1
        observed += (sum(c * c for c in counts.values()) - raters) / (raters * (raters - 1))
    observed /= len(ratings)
    expected = sum((count / (len(ratings) * raters)) ** 2 for count in totals.values())
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)
