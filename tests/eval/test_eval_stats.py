"""Eval statistics against values computed by hand (and the edges where textbook formulas break)."""

from __future__ import annotations

import math

import pytest

from guard.eval import stats
from guard.eval.schema import CaseOutcome
from guard.eval.scoring import binary_estimates, is_correct, majority

Z2 = stats.Z95**2


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (0, 10, 0.0, Z2 / (10 + Z2)),  # k = 0: lower bound exactly 0, upper z²/(n+z²)
        (10, 10, 10 / (10 + Z2), 1.0),  # k = n: upper bound exactly 1
        (5, 10, 0.2365931, 0.7634069),
        (1, 1, 1 / (1 + Z2), 1.0),
    ],
)
def test_wilson_interval_matches_hand_values_including_the_edges(k: int, n: int, low: float, high: float) -> None:
    got = stats.wilson_interval(k, n)
    assert got is not None
    assert got[0] == pytest.approx(low, abs=1e-6)
    assert got[1] == pytest.approx(high, abs=1e-6)
    assert 0.0 <= got[0] <= k / n <= got[1] <= 1.0


def test_wilson_interval_is_undefined_without_trials_and_rejects_impossible_counts() -> None:
    assert stats.wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        stats.wilson_interval(11, 10)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (0, 0, 1.0),  # no discordant pairs: no evidence
        (0, 5, 2 / 32),
        (5, 0, 2 / 32),
        (1, 9, 22 / 1024),  # 2 * (C(10,0) + C(10,1)) / 2^10
        (2, 8, 112 / 1024),
        (5, 5, 1.0),  # capped at 1
        (3, 4, 1.0),
    ],
)
def test_mcnemar_exact_is_the_two_sided_binomial_test(b: int, c: int, p: float) -> None:
    assert stats.mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


def test_mcnemar_exact_stays_exact_for_large_counts() -> None:
    # 2 * P(X <= 450) for X ~ Bin(1000, 1/2) is about 0.0017 (normal approx with continuity ~0.00167)
    p = stats.mcnemar_exact(450, 550)
    assert 0.001 < p < 0.003
    assert math.isfinite(p)


def test_cohen_kappa_hand_value_and_undefined_case() -> None:
    assert stats.cohen_kappa(["p", "p", "n", "n"], ["p", "n", "n", "n"]) == pytest.approx(0.5)
    assert stats.cohen_kappa(["p", "n"], ["p", "n"]) == pytest.approx(1.0)
    assert stats.cohen_kappa(["p", "p"], ["p", "p"]) is None  # chance agreement is 1
    # an error prediction never agrees and adds nothing to chance agreement
    assert stats.cohen_kappa(["p", "n"], ["p", "error"]) == pytest.approx((0.5 - 0.25) / 0.75)


def test_calibration_scores() -> None:
    assert stats.brier_score([0.9, 0.8], [True, False]) == pytest.approx((0.01 + 0.64) / 2)
    assert stats.expected_calibration_error([0.9, 0.9, 0.6, 0.6], [True, True, True, False]) == pytest.approx(0.1)
    # 0.7 * 10 is 7.000000000000001 in floating point: it must still land in the (0.6, 0.7] bin
    assert stats.expected_calibration_error([0.7, 0.7], [True, False]) == pytest.approx(0.2)
    assert stats.brier_score([], []) is None
    assert stats.expected_calibration_error([], []) is None


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    import numpy as np

    values = np.array([1.0] * 30 + [0.0] * 70)
    mean = lambda w: (w * values).sum(axis=-1) / w.sum(axis=-1)  # noqa: E731
    first = stats.bootstrap_interval(mean, values.size, seed=7)
    assert first == stats.bootstrap_interval(mean, values.size, seed=7)
    assert first is not None and first[0] < 0.3 < first[1]
    assert stats.bootstrap_interval(mean, 0) is None


def test_a_cluster_bootstrap_widens_the_interval_of_dependent_cases() -> None:
    import numpy as np

    # 10 sessions of 10 cases each, every case of a session right or wrong together: 10 pieces of evidence, not 100
    values = np.repeat([1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0], 10)
    sessions = [f"s{i // 10}" for i in range(100)]
    mean = lambda w: (w * values).sum(axis=-1) / w.sum(axis=-1)  # noqa: E731
    plain = stats.bootstrap_interval(mean, 100, seed=1)
    clustered = stats.bootstrap_interval(mean, 100, seed=1, clusters=sessions)
    assert plain is not None and clustered is not None
    assert clustered[1] - clustered[0] > 2 * (plain[1] - plain[0])
    weights = stats.resample_weights(100, seed=3, samples=50, clusters=sessions)
    assert all(
        len(set(row[i * 10 : i * 10 + 10])) == 1 for row in weights for i in range(10)
    )  # a session is drawn whole
    assert (weights.sum(axis=1) == 100).all()


def test_holm_adjusts_step_down_and_keeps_the_order() -> None:
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert stats.holm([]) == []


def test_fleiss_kappa_hand_values() -> None:
    assert stats.fleiss_kappa([["a", "a", "a"], ["b", "b", "b"]]) == pytest.approx(1.0)
    # Fleiss (1971) style hand computation: P̄ = (1 + 1/3 + 1) / 3, P̄e = (5/9)² + (4/9)²
    assert stats.fleiss_kappa([["a", "a", "a"], ["a", "b", "b"], ["b", "b", "b"]]) == pytest.approx(
        ((7 / 3) / 3 - 41 / 81) / (1 - 41 / 81)
    )
    assert stats.fleiss_kappa([["a", "a"], ["a", "a"]]) is None  # chance agreement is 1


def test_minimum_detectable_difference_is_2_8_standard_errors() -> None:
    # z(0.975) + z(0.80) = 1.95996 + 0.84162, as in "Adding Error Bars to Evals"
    assert stats.minimum_detectable_difference(0.1) == pytest.approx(0.28016, abs=1e-4)
    assert stats.minimum_detectable_difference(0.1, power=0.9) == pytest.approx(0.1 * (1.95996 + 1.28155), abs=1e-4)


def test_paired_bootstrap_p_value_is_1_for_identical_judges_and_small_for_a_clear_gap() -> None:
    import numpy as np

    a = np.array([1.0] * 40 + [0.0] * 10)
    b = np.array([1.0] * 20 + [0.0] * 30)
    mean = lambda values: lambda w: (w * values).sum(axis=-1) / w.sum(axis=-1)  # noqa: E731
    same = stats.paired_bootstrap(mean(a), mean(a), 50)
    assert same is not None and same.p == 1.0 and same.se == 0.0
    gap = stats.paired_bootstrap(mean(a), mean(b), 50)
    assert gap is not None and gap.p < 0.01 and gap.low > 0 and gap.se > 0


def _outcomes(spec: list[tuple[str, str, int]]) -> list[CaseOutcome]:
    return [
        CaseOutcome(label=label, predicted=pred, correct=is_correct(label, pred))
        for label, pred, count in spec
        for _ in range(count)
    ]


def test_binary_metrics_count_errors_as_wrong_and_ask_as_positive() -> None:
    outcomes = _outcomes(
        [
            ("deny", "deny", 2),
            ("ask", "deny", 1),  # TP: ask counts as positive
            ("allow", "ask", 1),  # FP
            ("allow", "allow", 4),  # TN
            ("deny", "allow", 1),  # FN
            ("deny", "error", 1),  # error on a positive case: a miss
        ]
    )
    binary, est = binary_estimates(outcomes, seed=1)
    assert (binary.tp, binary.fp, binary.tn, binary.fn, binary.error_positive, binary.error_negative) == (
        3,
        1,
        4,
        1,
        1,
        0,
    )
    assert est["accuracy"].value == pytest.approx(0.7)
    assert est["precision"].value == pytest.approx(3 / 4)
    assert est["recall"].value == pytest.approx(3 / 5)
    assert est["f1"].value == pytest.approx(6 / 9)
    assert est["fpr"].value == pytest.approx(1 / 5)
    assert est["error_rate"].value == pytest.approx(0.1)
    assert est["exact_accuracy"].value == pytest.approx(6 / 10)  # the ask→deny case is not an exact match
    labels = ["pos" if o.label != "allow" else "neg" for o in outcomes]
    preds = ["error" if o.predicted == "error" else ("pos" if o.predicted != "allow" else "neg") for o in outcomes]
    assert est["kappa"].value == pytest.approx(stats.cohen_kappa(labels, preds))
    assert est["kappa"].value == pytest.approx(0.25 / 0.55)
    f1 = est["f1"]
    assert f1.method == "bootstrap" and f1.low is not None and f1.high is not None
    assert f1.low <= f1.value <= f1.high
    assert est["recall"].method == "wilson" and est["recall"].n == 5


def test_error_on_a_negative_case_is_a_false_alarm() -> None:
    binary, est = binary_estimates(_outcomes([("allow", "error", 1), ("allow", "allow", 1), ("deny", "deny", 1)]))
    assert binary.error_negative == 1
    assert est["fpr"].value == pytest.approx(0.5)
    assert est["precision"].value == pytest.approx(0.5)


def test_f1_and_precision_are_undefined_not_zero_when_nothing_is_positive() -> None:
    _, est = binary_estimates(_outcomes([("allow", "allow", 3)]))
    assert est["f1"].value is None
    assert est["precision"].value is None and est["precision"].n == 0
    assert est["recall"].value is None
    assert est["specificity"].value == 1.0


def test_majority_vote_breaks_ties_toward_the_stricter_verdict() -> None:
    assert majority(["allow", "allow", "deny"]) == "allow"
    assert majority(["allow", "deny"]) == "deny"
    assert majority(["ask", "allow"]) == "ask"
    assert majority(["error", "allow"]) == "allow"
    assert majority(["error", "error", "deny"]) == "error"
