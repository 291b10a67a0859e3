"""Tables and colour for a person at a terminal; the same rows as plain text for pipes, files and scripts.

rich draws them, imported only when stdout is a terminal and only by the commands
that print tables (``guard log``, ``check``, ``doctor``, ``cache stats``,
``services``): ``guard hook`` never loads it, and piped output stays the plain,
stable lines scripts read. ``NO_COLOR`` and ``TERM=dumb`` are honoured (rich
reads them); ``GUARD_PLAIN=1`` asks for the plain lines on a terminal too.

Cells are text, never rich markup, and control characters in them are shown
escaped: a reason or a tool input comes from the agent, and must not restyle or
drive the terminal.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from guard.core.settings import PLAIN_ENV, from_env

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

__all__ = ["DECISION_STYLES", "STATUS_STYLES", "Table", "console", "printable", "say", "styled"]

#: How a verdict or a check's outcome is coloured.
DECISION_STYLES = {"allow": "green", "deny": "bold red", "ask": "yellow"}
STATUS_STYLES = {"ok": "green", "warn": "yellow", "fail": "bold red"}


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with control characters (escape sequences among them) written as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def console() -> Console | None:
    """A rich Console when a person is reading stdout, else None (print plain lines)."""
    if from_env(PLAIN_ENV) == "1" or os.environ.get("TERM") == "dumb" or not sys.stdout.isatty():
        return None
    # lazy: rich only when something is printed for a person
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def styled(text: str, style: str | None) -> Text:
    """``text`` as a rich Text in ``style``: shown as written, whatever brackets it holds."""
    # lazy: rich only when something is printed for a person
    from rich.text import Text

    return Text(printable(text), style=style or "")


def say(out: Console | None, *parts: tuple[str, str | None]) -> None:
    """One line from (text, style) parts: coloured on a rich Console, plain text on stdout when ``out`` is None."""
    if out is None:
        print("".join(text for text, _ in parts), flush=True)
        return
    # lazy: rich only when something is printed for a person
    from rich.text import Text

    out.print(Text.assemble(*(styled(text, style) for text, style in parts)))


class Table:
    """Rows under column headers: a rich table on a terminal, else each row as its cells joined by two spaces."""

    def __init__(self, *columns: str, right: Sequence[str] = ()) -> None:
        self.columns = columns
        self.right = set(right)  # columns aligned right (numbers)
        self.rows: list[tuple[tuple[str, ...], dict[int, str]]] = []

    def add(self, *cells: str, styles: dict[int, str] | None = None) -> None:
        """One row; ``styles`` colours cells by their column number."""
        self.rows.append((cells, styles or {}))

    def print(self, out: Console | None = None) -> None:
        """Draw on ``out`` (a rich Console); without one, plain aligned lines on stdout."""
        if out is None:
            widths = [max([len(c)] + [len(cells[i]) for cells, _ in self.rows]) for i, c in enumerate(self.columns)]
            for cells in [self.columns, *(cells for cells, _ in self.rows)]:
                line = "  ".join(
                    cell.rjust(w) if column in self.right else cell.ljust(w)
                    for cell, w, column in zip(cells, widths, self.columns)
                )
                print(line.rstrip())
            return
        # lazy: rich only when something is printed for a person
        from rich.table import Table as RichTable

        table = RichTable(header_style="bold", show_edge=False, pad_edge=False)
        for column in self.columns:
            table.add_column(column, justify="right" if column in self.right else "left", overflow="fold")
        for cells, styles in self.rows:
            table.add_row(*(styled(cell, styles.get(i)) for i, cell in enumerate(cells)))
        out.print(table)
