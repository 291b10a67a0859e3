"""The report's figures, drawn with matplotlib (Agg) and returned as base64 PNG.

One figure per question a reader asks: where does each judge go wrong (confusion
matrices), how sure are the headline numbers (bars with 95% intervals), and what
does quality cost (cost and latency against F1).
"""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING, Any

from guard.eval.metrics import PREDICTIONS
from guard.eval.schema import MetricsReport, VariantMetrics

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["BAR_METRICS", "figures"]

BAR_METRICS = ("accuracy", "precision", "recall", "f1", "specificity", "kappa")


def _png(fig: Figure) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _confusion(variants: list[VariantMetrics]) -> Figure:
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, len(variants), figsize=(4.2 * len(variants), 3.4), squeeze=False)
    for ax, v in zip(axes[0], variants, strict=True):
        labels = list(v.confusion)
        grid = np.array([[v.confusion[label].get(p, 0) for p in PREDICTIONS] for label in labels])
        ax.imshow(grid, cmap="Blues")
        ax.set_xticks(range(len(PREDICTIONS)), PREDICTIONS)
        ax.set_yticks(range(len(labels)), labels)
        ax.set_xlabel("verdict")
        ax.set_ylabel("label")
        ax.set_title(v.name, fontsize=9)
        for (i, j), count in np.ndenumerate(grid):
            ax.text(j, i, str(count), ha="center", va="center", color="white" if count > grid.max() / 2 else "black")
    fig.tight_layout()
    return fig


def _bars(variants: list[VariantMetrics]) -> Figure:
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(BAR_METRICS) * max(1, len(variants)) / 2), 3.6))
    width = 0.8 / len(variants)
    x = np.arange(len(BAR_METRICS))
    for i, v in enumerate(variants):
        values, low_err, high_err = [], [], []
        for name in BAR_METRICS:
            est = v.metrics[name]
            value = est.value if est.value is not None else np.nan
            values.append(value)
            low_err.append(value - est.low if est.low is not None else 0)
            high_err.append(est.high - value if est.high is not None else 0)
        ax.bar(x + i * width, values, width, yerr=[low_err, high_err], capsize=3, label=v.name)
    ax.set_xticks(x + width * (len(variants) - 1) / 2, BAR_METRICS)
    ax.set_ylim(min(0.0, *(v.metrics["kappa"].low or 0 for v in variants)), 1.05)
    ax.set_ylabel("value (95% interval)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _scatter(variants: list[VariantMetrics], attribute: str, label: str) -> Figure | None:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    points = [(getattr(v, attribute), v.metrics["f1"], v.name) for v in variants if getattr(v, attribute) is not None and v.metrics["f1"].value is not None]
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(5.0, 3.4))
    for x, f1, name in points:
        err: Any = [[f1.value - f1.low], [f1.high - f1.value]] if f1.low is not None and f1.high is not None else None
        ax.errorbar([x], [f1.value], yerr=err, fmt="o", capsize=3, label=name)
    # costs per call are tiny (0.00018): few ticks, four significant digits, so the labels never run together
    ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.4g}"))
    ax.set_xlabel(label)
    ax.set_ylabel("F1 (95% interval)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def figures(report: MetricsReport) -> list[tuple[str, str]]:
    """(caption, base64 PNG) for every figure the data supports."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    variants = report.variants
    if not variants:
        return []
    drawn: list[tuple[str, Figure | None]] = [
        ("Confusion matrices (majority verdict per case)", _confusion(variants)),
        ("Metrics with 95% intervals", _bars(variants)),
        ("Cost per 1,000 decisions against F1", _scatter(variants, "cost_per_1k_usd", "cost per 1,000 decisions (USD)")),
        ("Latency p50 against F1 (live calls only)", _scatter(variants, "latency_p50_ms", "latency p50 (ms)")),
    ]
    return [(caption, _png(fig)) for caption, fig in drawn if fig is not None]
