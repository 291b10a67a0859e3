"""``report.md``: the run as a GitHub job summary (the result and who wins first, long details folded)."""

from __future__ import annotations

from guard.eval import tables
from guard.eval.schema import MetricsReport
from guard.eval.tables import Section, Table

__all__ = ["markdown_table", "render_markdown"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(table: Table, *, heading: str | None = "####") -> str:
    lines = ([f"{heading} {table.title}", ""] if heading else []) + [
        "| " + " | ".join(map(_cell, table.headers)) + " |",
        "|" + "---|" * len(table.headers),
    ]
    lines += ["| " + " | ".join(map(_cell, row)) + " |" for row in table.rows]
    return "\n".join(lines) + "\n"


def _section(section: Section) -> str:
    body = "\n".join(
        [
            *(f"{line}\n" for line in section.lines),
            *(markdown_table(t, heading=None if t.title == section.title else "####") for t in section.tables),
        ]
    )
    if section.fold:
        return f"<details><summary>{section.title}</summary>\n\n{body}\n</details>\n"
    return f"### {section.title}\n\n{body}"


def render_markdown(report: MetricsReport) -> str:
    """The whole report; what to re-record, a failed gate or the winner is in the first lines."""
    parts = [f"## {tables.title(report)}\n"]
    parts += [f"> **Note:** {line}\n" for line in tables.notices(report)]
    result = tables.result_line(report)
    if result:
        head, rest = tables.split_result(result)
        parts.append(f"**{head}**{rest}\n")
    parts += [f"{line}\n" for line in tables.verdict_lines(report)]
    parts += [_section(s) for s in tables.sections(report)]
    parts.append(
        f"Positive class: {report.positive_class}. Schema v{report.schema_version}, guard {report.guard_version}.\n"
    )
    return "\n".join(parts)
