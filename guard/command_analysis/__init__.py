"""Static analysis of a command hook's own command string, before it ever runs.

The verdict depends on the command as written, never on the event, so a hook
gets the same answer for every event and a refused hook is refused up front.
Two threat levels, as in the product docs:

* ``block``: refused for every source (destructive or privilege-raising commands,
  obfuscated code, inline interpreter code, payload run as code);
* ``escalate``: refused for hooks from skills, plugins and user config only
  (``eval``, ``curl … | sh`` and kin, crontab changes): a person must decide.

Both refuse the hook; ``external=False`` drops the escalate-only findings.
:func:`touched_paths` reuses the same reading to list what a command line writes
or removes (the self-protection rule's view of a Bash call): best effort, since
a path built at run time or written by an interpreter's own code is not seen.
Standard library only: this runs on the ``guard hook`` path. The rules load on the
first analysis, not with the package: self-protection's path reading imports only
``shell_syntax`` (a cache hit saves ~5 ms of imports).
"""

from __future__ import annotations

from functools import lru_cache

from guard.core.record import FrozenRecord

__all__ = ["Analysis", "analyse", "touched_paths"]


class Analysis(FrozenRecord):
    """The analyser's verdict: ``allow``, ``escalate`` or ``block``, with every reason found."""

    __slots__ = ("level", "reasons")
    level: str
    reasons: tuple[str, ...]

    def __init__(self, level: str, reasons: tuple[str, ...] = ()) -> None:
        self._assign(locals())

    @property
    def refused(self) -> bool:
        return self.level != "allow"


@lru_cache(maxsize=1024)
def analyse(command: str, *, external: bool) -> Analysis:
    """Judge ``command`` as written; ``external`` applies the stricter set for skills, plugins and user config."""
    from guard.command_analysis.paths import BLOCK, ESCALATE
    from guard.command_analysis.rules import findings
    from guard.command_analysis.shell_syntax import ShellSyntaxError, parse

    try:
        found = list(dict.fromkeys(findings(parse(command), command)))
    except ShellSyntaxError as exc:
        return Analysis(BLOCK, (f"cannot be judged: {exc}",))
    active = [f for f in found if f.level == BLOCK or (external and f.level == ESCALATE)]
    if not active:
        return Analysis("allow")
    level = BLOCK if any(f.level == BLOCK for f in active) else ESCALATE
    return Analysis(level, tuple(f.reason for f in active))


@lru_cache(maxsize=256)
def touched_paths(command: str) -> tuple[tuple[str, str], ...] | None:
    """(``writes`` | ``removes``, path as written) for each path ``command`` would change; None if it cannot be parsed."""
    from guard.command_analysis.paths import REMOVES, WRITES
    from guard.command_analysis.rules import findings
    from guard.command_analysis.shell_syntax import ShellSyntaxError, parse

    try:
        found = findings(parse(command), command)
        return tuple(dict.fromkeys((f.level, f.path) for f in found if f.level in (WRITES, REMOVES) and f.path))
    except ShellSyntaxError:
        return None
