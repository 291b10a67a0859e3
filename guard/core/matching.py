"""Which tools a hook applies to: ``matcher`` (tool names, canonical actions, a regex) and fnmatch ``tools`` globs.

An invalid matcher or ``tools`` value makes the hook match nothing (with a
warning), never everything: a typo must not widen a hook to every tool.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Protocol

from guard.core.actions import is_name_list, matcher_matches, matcher_tokens, unknown_token_hint
from guard.core.logs import LazyLogger
from guard.core.spec import HookSpec

__all__ = ["ToolFilter", "compile_filter", "matcher_report", "matcher_warnings", "validate_matcher", "validate_tools"]

log = LazyLogger("guard.core.matching")


class ToolFilter(Protocol):
    """Whether a hook applies to ``tool_name`` sent by ``client`` (the ``--format``; None: any client)."""

    def __call__(self, tool_name: str | None, client: str | None = None, /) -> bool: ...


def validate_matcher(matcher: object) -> str | None:
    """Return why ``matcher`` is unusable, or None when it is fine."""
    if matcher is None:
        return None
    if not isinstance(matcher, str):
        return f"matcher must be a string, got {type(matcher).__name__}"
    if matcher in ("", "*"):
        return None
    if is_name_list(matcher):
        bad = [
            hint for token in matcher_tokens(matcher) if token.startswith("@") and (hint := unknown_token_hint(token))
        ]
        return f"matcher {bad[0]}" if bad else None
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


def matcher_warnings(matcher: str | None) -> list[str]:
    """Names in an exact-list matcher that match no known tool of any client ("did you mean"), for doctor and check.

    Not errors: an Agents SDK function tool or a client's new tool may carry any name.
    """
    if not matcher or matcher == "*" or not is_name_list(matcher):
        return []
    return [hint for token in matcher_tokens(matcher) if (hint := unknown_token_hint(token))]


def matcher_report(specs: Iterable[HookSpec]) -> list[str]:
    """One line per hook whose matcher names a tool no client has: the hook may never run."""
    return [
        f"hook {spec.id} ({spec.origin or spec.source}): matcher {hint}; it may never run"
        for spec in specs
        for hint in matcher_warnings(spec.matcher)
    ]


def _never(_: str | None, client: str | None = None) -> bool:
    return False


def _always(_: str | None, client: str | None = None) -> bool:
    return True


@lru_cache(maxsize=512)
def compile_filter(matcher: str | None, tools: tuple[str, ...] | None) -> ToolFilter:
    """Build the predicate on ``(tool_name, client)`` for a hook's matcher and tools.

    The matcher reads as :func:`guard.core.actions.matcher_matches` says (tool names
    ignoring case, canonical actions, or a regex); ``tools``: fnmatch globs. With both,
    both must match. Events without a tool name are matched only by hooks that filter on nothing.
    """
    problem = validate_matcher(matcher) or validate_tools(tools)
    if problem:
        log.warning("hook skipped: %s", problem)
        return _never
    checks: list[Callable[[str | None, str | None], bool]] = []
    if matcher not in (None, "", "*"):
        assert matcher is not None
        checks.append(lambda name, client: matcher_matches(matcher, client, name))
    if tools is not None:
        globs = tools
        checks.append(lambda name, client: name is not None and any(fnmatch.fnmatchcase(name, g) for g in globs))
    if not checks:
        return _always
    return lambda name, client=None: all(check(name, client) for check in checks)
