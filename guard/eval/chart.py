"""The cost-against-quality chart of report.html, drawn as inline SVG.

SVG rather than a picture: its text is selectable and sharp at any zoom, the file
stays small, and nothing but the standard library draws it. One point per model:
x is what it costs (or how long it takes, when nothing is priced), y the ranking
metric with its 95% interval; the best corner is top left.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["Point", "nice_ticks", "scatter_svg"]

PALETTE = ("#2456c7", "#c0262d", "#17803d", "#a86300", "#7a3fc2", "#0f7b8a", "#5f6b7a", "#b5418a")
#: Pixels one label line takes; labels closer than this are moved apart.
LABEL_HEIGHT = 14


@dataclass(frozen=True)
class Point:
    label: str
    x: float
    y: float
    low: float | None = None
    high: float | None = None


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values (1, 2 or 5 × a power of ten) covering [low, high]."""
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(1, count - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    return [round(i * step, 12) for i in range(first, max(last, first + 1) + 1)]


def _spread_labels(wanted: list[float], top: float, bottom: float) -> list[float]:
    """Label baselines near ``wanted`` (pixels, any order) at least LABEL_HEIGHT apart, kept within [top, bottom]."""
    order = sorted(range(len(wanted)), key=lambda i: wanted[i])
    placed = [0.0] * len(wanted)
    last = top - LABEL_HEIGHT
    for i in order:
        placed[i] = max(wanted[i], last + LABEL_HEIGHT)
        last = placed[i]
    overflow = last - bottom
    if overflow > 0:  # pushed past the bottom: shift the stack up, never above the top
        placed = [max(top, y - overflow) for y in placed]
    return placed


def scatter_svg(
    points: Sequence[Point],
    *,
    x_label: str,
    y_label: str,
    x_format: Callable[[float], str],
    width: int = 560,
    height: int = 250,
) -> str:
    """The chart as an ``<svg>`` element (empty string for no points)."""
    if not points:
        return ""
    left, right, top, bottom = 56, 200, 12, 40  # the right margin holds the labels
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [p.x for p in points]
    ys = [v for p in points for v in (p.y, p.low, p.high) if v is not None]
    x_ticks = nice_ticks(0.0, max(xs) * 1.1 if max(xs) > 0 else 1.0, 4)
    y_ticks = nice_ticks(max(0.0, min(ys) - 0.05), min(1.0, max(ys) + 0.05), 5)
    x0, x1, y0, y1 = x_ticks[0], x_ticks[-1], y_ticks[0], y_ticks[-1]

    def px(value: float) -> float:
        return left + (value - x0) / (x1 - x0) * plot_w

    def py(value: float) -> float:
        return top + plot_h - (value - y0) / (y1 - y0) * plot_h

    parts = [
        f'<svg class="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(y_label)} against {escape(x_label)}">',
        f'<rect class="frame" x="{left}" y="{top}" width="{plot_w}" height="{plot_h}"/>',
    ]
    for tick in x_ticks:
        parts.append(f'<line class="grid" x1="{px(tick):.1f}" y1="{top}" x2="{px(tick):.1f}" y2="{top + plot_h}"/>')
        parts.append(
            f'<text class="tick" x="{px(tick):.1f}" y="{top + plot_h + 16}" text-anchor="middle">{escape(x_format(tick))}</text>'
        )
    for tick in y_ticks:
        parts.append(f'<line class="grid" x1="{left}" y1="{py(tick):.1f}" x2="{left + plot_w}" y2="{py(tick):.1f}"/>')
        parts.append(f'<text class="tick" x="{left - 9}" y="{py(tick) + 4:.1f}" text-anchor="end">{tick:.2f}</text>')
    parts.append(
        f'<text class="axis" x="{left + plot_w / 2:.1f}" y="{height - 6}" text-anchor="middle">{escape(x_label)}</text>'
    )
    parts.append(
        f'<text class="axis" x="12" y="{top + plot_h / 2:.1f}" text-anchor="middle" transform="rotate(-90 12 {top + plot_h / 2:.1f})">{escape(y_label)}</text>'
    )
    labels = _spread_labels([py(p.y) + 4 for p in points], top + 10, top + plot_h - 2)
    for i, (point, label_y) in enumerate(zip(points, labels, strict=True)):
        color = PALETTE[i % len(PALETTE)]
        x, y = px(point.x), py(point.y)
        tip = (
            f"{point.label}: {y_label} {point.y:.3f}"
            + (f" [{point.low:.3f}, {point.high:.3f}]" if point.low is not None and point.high is not None else "")
            + f", {x_format(point.x)}"
        )
        parts.append(f'<g class="point"><title>{escape(tip)}</title>')
        if point.low is not None and point.high is not None:
            parts.append(
                f'<line class="bar" x1="{x:.1f}" y1="{py(point.low):.1f}" x2="{x:.1f}" y2="{py(point.high):.1f}" stroke="{color}"/>'
            )
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{color}"/>')
        parts.append(
            f'<line class="leader" x1="{x + 6:.1f}" y1="{y:.1f}" x2="{left + plot_w + 6}" y2="{label_y - 4:.1f}" stroke="{color}"/>'
        )
        shown = point.label if len(point.label) <= 30 else point.label[:29] + "…"
        parts.append(
            f'<text class="label" x="{left + plot_w + 10}" y="{label_y:.1f}" fill="{color}">{escape(shown)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
