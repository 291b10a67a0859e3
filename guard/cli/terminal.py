"""Tables and colour for a person at a terminal; the same rows as plain text for pipes, files and scripts.

rich draws them, imported only when stdout is a terminal and only by the commands
that print tables (``guard log``, ``check``, ``doctor``, ``cache stats``,
``services``): ``guard hook`` never loads it, and piped output stays the plain,
stable lines scripts read. ``NO_COLOR`` and ``TERM=dumb`` are honoured (rich
reads them); ``GUARD_PLAIN=1`` asks for the plain lines on a terminal too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["DECISION_STYLES", "STATUS_STYLES", "Table", "console"]

#: How a verdict or a check's outcome is coloured.
DECISION_STYLES = {"allow": "green", "deny": "bold red", "ask": "yellow"}
STATUS_STYLES = {"ok": "green", "warn": "yellow", "fail": "bold red"}


def console() -> Any:
    """A rich Console when a person is reading stdout, else None (print plain lines)."""
    if os.environ.get("GUARD_PLAIN") == "1" or os.environ.get("TERM") == "dumb" or not sys.stdout.isatty():
        return None
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


class Table:
    """Rows under column headers: a rich table on a terminal, else each row as its cells joined by two spaces."""

    def __init__(self, *columns: str, right: Sequence[str] = ()) -> None:
        self.columns = columns
        self.right = set(right)  # columns aligned right (numbers)
        self.rows: list[tuple[tuple[str, ...], str | None]] = []

    def add(self, *cells: str, style: str | None = None) -> None:
        self.rows.append((cells, style))

    def print(self, out: Any = None) -> None:
        """Draw on ``out`` (a rich Console); without one, plain aligned lines on stdout."""
        if out is None:
            widths = [max([len(c)] + [len(cells[i]) for cells, _ in self.rows]) for i, c in enumerate(self.columns)]
            for cells in [self.columns, *(cells for cells, _ in self.rows)]:
                line = "  ".join(cell.rjust(w) if column in self.right else cell.ljust(w) for cell, w, column in zip(cells, widths, self.columns))
                print(line.rstrip())
            return
        from rich.table import Table as RichTable

        table = RichTable(header_style="bold", show_edge=False, pad_edge=False)
        for column in self.columns:
            table.add_column(column, justify="right" if column in self.right else "left", overflow="fold")
        for cells, style in self.rows:
            table.add_row(*cells, style=style)
        out.print(table)
