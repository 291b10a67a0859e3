"""CI quality gates: ``--fail-under METRIC=VALUE``.

A gate holds for every (model, depth) of the run and compares the point estimate
(not the interval). Only higher-is-better metrics can be gated from below; the
error message points to the counterpart of a lower-is-better one (fpr → specificity).
"""

from __future__ import annotations

from collections.abc import Sequence

from guard.core.errors import GuardError
from guard.eval.schema import GateResult, VariantMetrics

__all__ = ["GATE_METRICS", "ROUTE_METRIC", "Gate", "evaluate_gates", "parse_gate"]

GATE_METRICS = ("accuracy", "exact_accuracy", "precision", "recall", "f1", "kappa", "specificity", "route_coverage")
#: Measured only by ``guard eval --routes`` (the share of other routes to a deny case's effect that its rule stops).
ROUTE_METRIC = "route_coverage"
_INVERSE = {"fpr": "specificity", "error_rate": "accuracy", "false_positive_rate": "specificity"}

Gate = tuple[str, float]


def parse_gate(text: str) -> Gate:
    """``f1=0.9`` → ("f1", 0.9); bad input raises a message naming what is allowed."""
    name, sep, raw = text.partition("=")
    name = name.strip().lower()
    if not sep:
        raise GuardError(f"--fail-under {text!r}: expected METRIC=VALUE, e.g. f1=0.9")
    if name in _INVERSE:
        raise GuardError(f"--fail-under {name}: lower is better for {name}; gate on {_INVERSE[name]} instead")
    if name not in GATE_METRICS:
        raise GuardError(f"--fail-under {name}: unknown metric; choose one of {', '.join(GATE_METRICS)}")
    try:
        value = float(raw.strip().rstrip("%")) / (100 if raw.strip().endswith("%") else 1)
    except ValueError as exc:
        raise GuardError(f"--fail-under {text!r}: {raw!r} is not a number") from exc
    if not -1 <= value <= 1:
        raise GuardError(f"--fail-under {text!r}: thresholds are fractions between 0 and 1 (kappa from -1)")
    return name, value


def evaluate_gates(gates: Sequence[Gate], variants: Sequence[VariantMetrics]) -> list[GateResult]:
    """One result per gate per variant; an undefined metric (no positives) fails."""
    results = []
    for metric, threshold in gates:
        for variant in variants:
            value = variant.metrics[metric].value if metric in variant.metrics else None
            results.append(
                GateResult(
                    metric=metric,
                    threshold=threshold,
                    variant=variant.name,
                    value=value,
                    passed=value is not None and value >= threshold,
                )
            )
    return results
