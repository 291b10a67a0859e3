"""Which tools a hook applies to: Claude Code ``matcher`` rules and fnmatch ``tools`` globs.

An invalid matcher or ``tools`` value makes the hook match nothing (with a
warning), never everything: a typo must not widen a hook to every tool.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from functools import lru_cache

from guard.core.logs import LazyLogger

__all__ = ["ToolFilter", "compile_filter", "validate_matcher", "validate_tools"]

log = LazyLogger("guard.runtime.matching")

ToolFilter = Callable[[str | None], bool]

_EXACT = re.compile(r"^[A-Za-z0-9_\-, |]+$")


def validate_matcher(matcher: object) -> str | None:
    """Return why ``matcher`` is unusable, or None when it is fine."""
    if matcher is None:
        return None
    if not isinstance(matcher, str):
        return f"matcher must be a string, got {type(matcher).__name__}"
    if matcher in ("", "*") or _EXACT.match(matcher):
        return None
    try:
        re.compile(matcher)
    except re.error as exc:
        return f"matcher {matcher!r} is not a valid regular expression: {exc}"
    return None


def validate_tools(tools: object) -> str | None:
    """Return why ``tools`` is unusable (it must be one glob or a list of globs), or None."""
    if tools is None:
        return None
    if isinstance(tools, str):
        return None if tools.strip() else "tools must not be empty"
    if isinstance(tools, (list, tuple)) and tools and all(isinstance(t, str) and t.strip() for t in tools):
        return None
    return f"tools must be a glob or a non-empty list of globs, got {tools!r}"


def _never(_: str | None) -> bool:
    return False


def _always(_: str | None) -> bool:
    return True


@lru_cache(maxsize=512)
def compile_filter(matcher: str | None, tools: tuple[str, ...] | None) -> ToolFilter:
    """Build the predicate on ``tool_name`` for a hook's matcher and tools.

    Matcher (Claude Code rules): ``*``, empty or absent = all; only letters, digits,
    ``_ - , |`` and spaces = exact names in a ``|`` or ``,`` list; anything else =
    unanchored regex. ``tools``: fnmatch globs. With both, both must match.
    Events without a tool name are matched only by hooks that filter on nothing.
    """
    problem = validate_matcher(matcher) or validate_tools(tools)
    if problem:
        log.warning("hook skipped: %s", problem)
        return _never
    checks: list[ToolFilter] = []
    if matcher not in (None, "", "*"):
        assert matcher is not None
        if _EXACT.match(matcher):
            names = frozenset(n.strip() for n in re.split(r"[|,]", matcher) if n.strip())
            checks.append(lambda name: name in names)
        else:
            pattern = re.compile(matcher)
            checks.append(lambda name: name is not None and pattern.search(name) is not None)
    if tools is not None:
        globs = tools
        checks.append(lambda name: name is not None and any(fnmatch.fnmatchcase(name, g) for g in globs))
    if not checks:
        return _always
    return lambda name: all(check(name) for check in checks)
