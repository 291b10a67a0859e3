"""The run's progress line on stderr: done/total, ETA, cost so far, errors. Silent when stderr is not a TTY."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

__all__ = ["Progress"]


class Progress:
    """A rich progress bar, or nothing at all (CI logs, pipes, the pytest plugin)."""

    def __init__(self, total: int, *, enabled: bool | None = None) -> None:
        self.total = total
        self.cost = 0.0
        self.errors = 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._shown: tuple[RichProgress, TaskID] | None = None  # the bar and its one task, once entered

    def __enter__(self) -> Progress:
        if self.enabled:
            # lazy: rich only when a progress bar is shown
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
            from rich.progress import Progress as RichProgress

            bar = RichProgress(
                TextColumn("guard eval"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                TextColumn("${task.fields[cost]:.4f}  errors {task.fields[errors]}"),
                console=Console(stderr=True),
                transient=False,
            )
            bar.__enter__()
            self._shown = bar, bar.add_task("eval", total=self.total, cost=0.0, errors=0)
        return self

    def advance(self, cost: float | None, error: bool) -> None:
        self.cost += cost or 0.0
        self.errors += int(error)
        if self._shown is not None:
            bar, task = self._shown
            bar.update(task, advance=1, cost=self.cost, errors=self.errors)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._shown is not None:
            self._shown[0].__exit__(kind, exc, tb)
