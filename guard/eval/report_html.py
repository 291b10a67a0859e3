"""``report.html``: one self-contained file (inline CSS, figures as base64 PNG), no scripts, no fetches."""

from __future__ import annotations

from html import escape

from guard.eval import tables
from guard.eval.plots import figures
from guard.eval.schema import MetricsReport
from guard.eval.tables import Table

__all__ = ["render_html"]

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#1f2328}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:13px}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}
.note{background:#fff8c5;border:1px solid #d4a72c;padding:.5rem 1rem;margin:.5rem 0}
.fail{color:#cf222e;font-weight:bold}.pass{color:#1a7f37;font-weight:bold}
figure{margin:1rem 0}img{max-width:100%}figcaption{color:#57606a}
"""


def html_table(table: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in table.headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in table.rows)
    return f"<h3>{escape(table.title)}</h3><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(report: MetricsReport) -> str:
    """The Markdown report's tables plus the figures, in one file."""
    parts = [f"<h1>{escape(tables.title(report))}</h1>"]
    parts += [f'<p class="note">{escape(line)}</p>' for line in tables.notices(report)]
    result = tables.result_line(report)
    if result:
        parts.append(f'<p class="{"fail" if "FAILED" in result else "pass"}">{escape(result)}</p>')
    parts += [html_table(t) for t in tables.headline_tables(report)]
    for caption, png in figures(report):
        parts.append(f'<figure><img alt="{escape(caption)}" src="data:image/png;base64,{png}"><figcaption>{escape(caption)}</figcaption></figure>')
    for variant in report.variants:
        parts += [html_table(tables.confusion_table(variant)), html_table(tables.slice_table(variant)), html_table(tables.misjudged_table(variant))]
    parts.append(f"<p>Positive class: {escape(report.positive_class)}. Schema v{report.schema_version}, guard {escape(report.guard_version)}, {escape(report.created_at)}.</p>")
    body = "\n".join(parts)
    return f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(tables.title(report))}</title><style>{_CSS}</style></head><body>\n{body}\n</body></html>\n'
