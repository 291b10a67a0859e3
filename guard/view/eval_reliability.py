"""A reliability chart (stated confidence against how often the verdict was right), as SVG geometry.

The page draws it with plain SVG elements from these coordinates: no chart
library, nothing fetched. The bins are the ones ECE is computed over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from guard.eval.metrics import calibration_pairs
from guard.eval.schema import ResultRow
from guard.eval.stats import calibration_bins

__all__ = ["ReliabilityChart", "reliability_chart"]

SIZE = 240  # plot square, px
MARGIN = 36
TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    r: float
    title: str


@dataclass(frozen=True)
class ReliabilityChart:
    width: int
    height: int
    origin_x: int
    origin_y: int
    size: int
    ticks: list[tuple[float, str]]  # (offset from the origin in px, label)
    points: list[Point]
    path: str  # the line through the points
    rows: int


def reliability_chart(rows: Sequence[ResultRow]) -> ReliabilityChart | None:
    """The chart of ``rows`` with a confidence, or None when no row stated one."""
    stated, right = calibration_pairs(rows)
    # results.jsonl may be written by anyone: NaN, infinity or 5.0 is no probability to place on the chart
    kept = [(c, ok) for c, ok in zip(stated, right, strict=True) if 0.0 <= c <= 1.0]
    confidences, correct = [c for c, _ in kept], [ok for _, ok in kept]
    if not confidences:
        return None
    bins = calibration_bins(confidences, correct)
    largest = max(count for count, _, _ in bins)
    points = [
        Point(
            x=round(MARGIN + confidence * SIZE, 1),
            y=round(MARGIN + (1 - accuracy) * SIZE, 1),
            r=round(3 + 7 * (count / largest) ** 0.5, 1),
            title=f"{count} verdict(s) at mean confidence {confidence:.2f}: {accuracy:.0%} right",
        )
        for count, confidence, accuracy in bins
    ]
    path = " ".join(f"{'M' if i == 0 else 'L'}{p.x},{p.y}" for i, p in enumerate(points))
    return ReliabilityChart(
        width=SIZE + 2 * MARGIN,
        height=SIZE + 2 * MARGIN,
        origin_x=MARGIN,
        origin_y=MARGIN + SIZE,
        size=SIZE,
        ticks=[(round(t * SIZE, 1), f"{t:g}") for t in TICKS],
        points=points,
        path=path,
        rows=len(confidences),
    )
