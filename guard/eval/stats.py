"""The statistics a binary judge needs, as small pure functions.

Why these: a judge's proportions sit near 0 or 1, where the Wald interval collapses,
so proportions get the Wilson interval; F1 and kappa are not proportions, so they get
a percentile bootstrap over cases; two judges on the same cases are paired, so they
get the exact McNemar test (a binomial test on the discordant cases) and a paired
bootstrap. Exact arithmetic uses integers (``math.comb``); no scipy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "BOOTSTRAP_SAMPLES",
    "Z95",
    "bootstrap_interval",
    "brier_score",
    "calibration_bins",
    "cohen_kappa",
    "expected_calibration_error",
    "mcnemar_exact",
    "paired_bootstrap_interval",
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
    return min(1.0, 2 * tail / 2**n)


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


def calibration_bins(confidences: Sequence[float], correct: Sequence[bool], bins: int = 10) -> list[tuple[int, float, float]]:
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
    return sum(abs(accuracy - confidence) * count / n for count, confidence, accuracy in calibration_bins(confidences, correct, bins))


def _percentiles(samples: np.ndarray) -> tuple[float, float] | None:
    import numpy as np

    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return None
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def bootstrap_interval(
    statistic: Callable[[np.ndarray], np.ndarray],
    n: int,
    *,
    seed: int = 0,
    samples: int = BOOTSTRAP_SAMPLES,
) -> tuple[float, float] | None:
    """Percentile 95% interval of ``statistic`` over case resamples.

    ``statistic`` receives a (samples × n) array of case indices and returns one
    value per row (NaN where undefined, e.g. no positives drawn). Seeded, so the
    same inputs always give the same interval.
    """
    import numpy as np

    if n <= 0:
        return None
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, n, size=(samples, n))
    return _percentiles(np.asarray(statistic(indices), dtype=float))


def paired_bootstrap_interval(
    statistic_a: Callable[[np.ndarray], np.ndarray],
    statistic_b: Callable[[np.ndarray], np.ndarray],
    n: int,
    *,
    seed: int = 0,
    samples: int = BOOTSTRAP_SAMPLES,
) -> tuple[float, float] | None:
    """Percentile 95% interval of ``a − b`` where both statistics see the same resampled cases."""
    return bootstrap_interval(lambda idx: statistic_a(idx) - statistic_b(idx), n, seed=seed, samples=samples)
