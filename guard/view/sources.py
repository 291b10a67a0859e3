"""What every page of the view reads, and the two ways a page reads a value: a row id from a URL, a moment.

Its own module so the pages and the app that mounts them both import it, and neither imports the other.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from datetime import datetime
from pathlib import Path

__all__ = ["ViewSources", "index_param", "local_time"]


@dataclass(frozen=True, slots=True)
class ViewSources:
    """What the view reads: the audit log, eval output folders, the names to redact, and the approval requests.

    ``gated``: every request already proved ``guard serve``'s per-user token (``/ui``), so it may answer
    approvals (a token the user set does not count: the agent may hold it); ``guard view`` on its own asks for a request's proof or its sign-in (:mod:`guard.view.approvals`).
    ``refresh``: called before a decisions or rules page reads the log (``--audit URL`` copies the store's new rows).
    ``central``: the audit store's problems (gaps), shown instead of the local chain's when the log is its copy.
    """

    audit: Path | None
    evals: tuple[Path, ...] = ()
    redact: frozenset[str] = frozenset()
    _: KW_ONLY
    approvals: Path | None = None
    gated: bool = False
    refresh: Callable[[], None] | None = None
    central: Callable[[], list[str]] | None = None

    def __post_init__(self) -> None:
        """Names to redact match field names whatever their case: kept lower-cased."""
        object.__setattr__(self, "redact", frozenset(name.lower() for name in self.redact))


#: Row ids and indexes a URL may name: SQLite's largest integer has 19 digits.
_INDEX_DIGITS = 18


def index_param(value: str | None) -> int | None:
    """A row id or list index from a URL: ASCII digits only, few enough for SQLite; else None.

    ``str.isdigit`` alone lets ``"²"`` through to ``int()``, and a 5,000-digit id
    through to SQLite: a crafted link must be a "not found", not a server error.
    """
    if value is None or not value.isascii() or not value.isdigit() or len(value) > _INDEX_DIGITS:
        return None
    return int(value)


def local_time(value: float | str | None) -> str:
    """A moment as every page shows one: local time, to the second, no offset.

    Decisions are logged as epoch seconds; eval runs record an ISO time in UTC (``2025-06-01T12:00:00+00:00``).
    Text that is not an ISO time is shown as it is.
    """
    if value is None or value == "":
        return "—"
    if isinstance(value, str):
        try:
            epoch = datetime.fromisoformat(value).timestamp()
        except ValueError:
            return value
    else:
        epoch = value
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))
