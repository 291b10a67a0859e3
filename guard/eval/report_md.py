"""``report.md``: the run as a GitHub job summary (Markdown tables, long parts folded)."""

from __future__ import annotations

from guard.eval import tables
from guard.eval.schema import MetricsReport
from guard.eval.tables import Table

__all__ = ["render_markdown"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(table: Table, *, heading: str = "###") -> str:
    lines = [f"{heading} {table.title}", "", "| " + " | ".join(map(_cell, table.headers)) + " |", "|" + "---|" * len(table.headers)]
    lines += ["| " + " | ".join(map(_cell, row)) + " |" for row in table.rows]
    return "\n".join(lines) + "\n"


def _folded(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body}\n</details>\n"


def render_markdown(report: MetricsReport) -> str:
    """The whole report; a failed gate or a significant drop is visible in the first lines."""
    parts = [f"## {tables.title(report)}\n"]
    parts += [f"> **Note:** {line}\n" for line in tables.notices(report)]
    result = tables.result_line(report)
    if result:
        head, _, rest = result.partition(" (")
        parts.append(f"**{head}** ({rest}\n")
    parts += [markdown_table(t) for t in tables.headline_tables(report)]
    for variant in report.variants:
        parts.append(markdown_table(tables.confusion_table(variant)))
        parts.append(_folded(f"Slices by tag and tool: {variant.name}", markdown_table(tables.slice_table(variant), heading="####")))
        parts.append(_folded(f"Misjudged cases: {variant.name}", markdown_table(tables.misjudged_table(variant), heading="####")))
    parts.append(f"Positive class: {report.positive_class}. Schema v{report.schema_version}, guard {report.guard_version}.\n")
    return "\n".join(parts)
