"""guard's loggers on the ``guard hook`` fast path, without importing :mod:`logging` until a record is written.

A cache hit logs nothing, and :mod:`logging` (with ``traceback``, ``string`` and
``textwrap``) is a measurable part of what such a hit costs in a fresh process.
Modules the fast path loads hold a :class:`LazyLogger`; for the length of a
command the CLI registers its handler set-up with :func:`set_up_before_use`, which
runs before the first record (or when :func:`set_up` is called, before code that
logs through plain loggers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["LazyLogger", "set_up", "set_up_before_use"]

_pending: list[Callable[[], None]] = []


@contextmanager
def set_up_before_use(setup: Callable[[], None]) -> Iterator[None]:
    """Within the block, run ``setup`` (which configures :mod:`logging`) before guard's first log record."""
    _pending.append(setup)
    try:
        yield
    finally:
        if setup in _pending:  # nothing logged: the set-up is not left for code that runs later in this process
            _pending.remove(setup)


def set_up() -> None:
    """Run the pending set-up now (before a path whose modules log through plain loggers)."""
    while _pending:
        _pending.pop(0)()


class LazyLogger:
    """The :class:`logging.Logger` called ``name``, looked up (and logging configured) on first use."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def _logger(self) -> Any:
        import logging

        set_up()
        return logging.getLogger(self.name)

    def debug(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self._logger().debug(msg, *args, **kwargs)

    def info(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self._logger().info(msg, *args, **kwargs)

    def warning(self, msg: str, *args: Any, **kwargs: Any) -> None:
        self._logger().warning(msg, *args, **kwargs)
