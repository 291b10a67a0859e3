"""``report.html``: one self-contained file (inline CSS and SVG), no scripts, no fetches.

The first screen answers "who wins": the result, the headline and the power line
beside a cost-against-quality chart, then the ranking with intervals, cost and
latency. The details follow in the order of :func:`guard.eval.tables.sections`,
each only when it has something to say; confusion matrices sit side by side.
"""

from __future__ import annotations

import re
from html import escape

from guard.eval import tables
from guard.eval.chart import Point, scatter_svg
from guard.eval.compare import METRIC_NAMES
from guard.eval.schema import MetricsReport
from guard.eval.tables import Section, Table

__all__ = ["render_html"]

_CSS = """
:root{--fg:#1d2330;--muted:#5f6b7a;--bg:#f7f8fa;--card:#fff;--line:#dde2e8;--good:#17803d;--warn:#a86300;--bad:#c0262d;--accent:#2456c7}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:var(--bg);color:var(--fg)}
main{max-width:1400px;margin:0 auto;padding:1rem 1.5rem}
h1{font-size:1.3rem;margin:.2rem 0 .6rem}h2{font-size:1.1rem;margin:1.4rem 0 .5rem}h3{font-size:.95rem;margin:.8rem 0 .3rem}
p{margin:.35rem 0}
table{border-collapse:collapse;width:100%;background:var(--card);border:1px solid var(--line);font-size:13px;margin:.2rem 0 .8rem}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
th{font-weight:600;color:var(--muted);background:#f0f2f5;overflow-wrap:normal}
td{font-variant-numeric:tabular-nums}td.nowrap{white-space:nowrap}
td.wrong{color:var(--bad)}td.right{color:var(--muted)}
.note{background:#fff8c5;border:1px solid #d4a72c;padding:.35rem .8rem;border-radius:3px}
.result{font-size:1.05rem;font-weight:600}.result.fail{color:var(--bad)}.result.pass{color:var(--good)}.result.unjudged{color:var(--warn)}
.headline{font-size:1.05rem}.muted{color:var(--muted)}
.verdict{display:grid;grid-template-columns:minmax(0,1fr) auto;gap:1.5rem;align-items:start;margin:.6rem 0}
.verdict figure{margin:0}.verdict figcaption{color:var(--muted);font-size:12px;max-width:560px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(380px,1fr));gap:0 1rem}
svg.chart{display:block;background:var(--card);border:1px solid var(--line)}
svg.chart .frame{fill:none;stroke:var(--line)}svg.chart .grid{stroke:#eef1f4}
svg.chart text{font-size:11px;fill:var(--muted)}svg.chart text.label{font-size:12px;font-weight:600}
svg.chart .bar{stroke-width:2}svg.chart .leader{stroke-width:.6;stroke-dasharray:2 2}
del{background:#fdecea;color:var(--bad)}ins{background:#e6f4ea;color:var(--good);text-decoration:none}
footer{color:var(--muted);font-size:12px;margin-top:1.5rem}
"""


def _table(table: Table, *, titled: bool = True) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in table.headers)
    rows = []
    for r, row in enumerate(table.rows):
        cells = []
        for i, cell in enumerate(row):
            classes = " ".join(
                c for c in ("nowrap" if i in table.nowrap else "", table.marks[r][i] if table.marks else "") if c
            )
            opened = f'<td class="{classes}">' if classes else "<td>"
            cells.append(f"{opened}{_diff(cell) if i == table.diff_column else escape(cell)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f"<h3>{escape(table.title)}</h3>" if titled else ""
    ) + f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


_MARKS = re.compile(r"\[-(.*?)-\]|\{\+(.*?)\+\}", re.DOTALL)


def _diff(text: str) -> str:
    """A word diff's ``[-old-]`` and ``{+new+}`` as deleted and inserted text."""
    out, at = [], 0
    for mark in _MARKS.finditer(text):
        out.append(escape(text[at : mark.start()]))
        out.append(
            f"<del>{escape(mark.group(1))}</del>"
            if mark.group(1) is not None
            else f"<ins>{escape(mark.group(2))}</ins>"
        )
        at = mark.end()
    return "".join(out) + escape(text[at:])


def _section(section: Section) -> str:
    lines = "".join(f"<p>{escape(line)}</p>" for line in section.lines)
    if section.id == "confusion":
        return (
            f'<section id="{section.id}"><h2>{escape(section.title)}</h2>{lines}<div class="grid">'
            + "".join(f"<div>{_table(t)}</div>" for t in section.tables)
            + "</div></section>"
        )
    return (
        f'<section id="{section.id}"><h2>{escape(section.title)}</h2>{lines}'
        + "".join(_table(t, titled=t.title != section.title) for t in section.tables)
        + "</section>"
    )


def _chart(report: MetricsReport) -> str:
    """Cost (else latency) against the ranking metric, when at least two models have both."""
    metric = report.ranking.metric if report.ranking else "f1"
    name = METRIC_NAMES.get(metric, metric)

    def points(attribute: str) -> list[Point]:
        found = []
        for v in report.variants:
            est, x = v.metrics[metric], getattr(v, attribute)
            if est.value is not None and x is not None:
                found.append(Point(v.model if one_depth else v.name, x, est.value, est.low, est.high))
        return found

    one_depth = len({v.depth for v in report.variants}) == 1  # then "@ depth" adds nothing to a label

    for attribute, label, shown in (
        ("cost_per_1k_usd", "USD per 1,000 decisions", tables.fmt_usd),
        ("latency_p50_ms", "latency p50 (ms), live calls", lambda value: f"{value:,.0f}"),
    ):
        found = points(attribute)
        if len(found) >= 2:
            left_out = len(report.variants) - len(found)
            caption = f"{name} (95% interval) against {label}; top left is best." + (
                f" {left_out} model(s) without a value are not drawn." if left_out else ""
            )
            return f"<figure>{scatter_svg(found, x_label=label, y_label=name, x_format=shown)}<figcaption>{escape(caption)}</figcaption></figure>"
    return ""


def render_html(report: MetricsReport) -> str:
    """The report as one page: who wins on the first screen, then the details."""
    parts = [f"<h1>{escape(tables.title(report))}</h1>"]
    parts += [f'<p class="note">{escape(line)}</p>' for line in tables.notices(report)]
    result = tables.result_line(report)
    text = ""
    if result:
        head, rest = tables.split_result(result)
        kind = "unjudged" if "NOT JUDGED" in head else "fail" if "FAILED" in head else "pass"
        text += f'<p class="result {kind}" id="result">{escape(head)}<span>{escape(rest)}</span></p>'
    text += "".join(
        f'<p class="{"headline" if i == 0 else "muted"}">{escape(line)}</p>'
        for i, line in enumerate(tables.verdict_lines(report))
    )
    chart = _chart(report)
    parts.append(
        f'<div class="verdict" id="verdict"><div>{text}</div>{chart}</div>'
        if chart
        else f'<div id="verdict">{text}</div>'
    )
    parts += [_section(s) for s in tables.sections(report)]
    parts.append(
        f"<footer>Positive class: {escape(report.positive_class)}. Schema v{report.schema_version}, guard {escape(report.guard_version)}, {escape(report.created_at)}.</footer>"
    )
    body = "\n".join(parts)
    return f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>{escape(tables.title(report))}</title><style>{_CSS}</style></head><body><main>\n{body}\n</main></body></html>\n'
