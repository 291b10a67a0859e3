"""Recognising guard's own ``guard hook`` entry in a client's settings file.

``guard install`` writes it in several spellings (an absolute, maybe quoted, path
to the ``guard`` script, or ``python -I -m guard.cli.main``, with ``--deadline``;
in Claude Code's shared project settings, a launcher that runs ``$GUARD_HOOK``,
the program each user's own settings name: :mod:`guard.setup.team_hook`).
Loading that settings.json as a config must skip it (it is what is running), and
``guard install`` / ``guard doctor`` must find it again whatever path or options
it was written with. Standard library only.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

__all__ = ["LAUNCHER_PROGRAM", "GuardHook", "parse_guard_hook"]

#: The program of a shared-settings launcher: the variable each user's own settings set.
LAUNCHER_PROGRAM = "$GUARD_HOOK"
_LAUNCHED = re.compile(r"^g=\$GUARD_HOOK; .*\$g --format ([a-z]+) --project ")

_PROGRAMS = frozenset({"guard", "guard.exe"})
_MODULES = frozenset({"guard", "guard.cli.main"})


@dataclass(frozen=True)
class GuardHook:
    """A command that runs ``guard hook``: the program that starts guard and the options after ``hook``."""

    program: tuple[str, ...]  # ("/venv/bin/guard",) or ("/venv/bin/python3", "-I", "-m", "guard.cli.main")
    options: dict[str, str]  # "--format" → "claude", "--deadline" → "30", …

    @property
    def identity(self) -> tuple[str, str]:
        """``(--format, --config)``: two entries with the same identity are one entry written twice
        (another venv, another ``--deadline``); another format or config is another guard."""
        return self.options.get("--format", "claude"), self.options.get("--config", "")


def parse_guard_hook(command: object) -> GuardHook | None:
    """The guard hook ``command`` runs, or None when it runs something else (or is not a string)."""
    if not isinstance(command, str):
        return None
    launched = _LAUNCHED.search(command)
    if launched:
        return GuardHook(
            program=(LAUNCHER_PROGRAM,), options={"--format": launched.group(1), "--project": "$CLAUDE_PROJECT_DIR"}
        )
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for i, word in enumerate(words):
        if word != "hook" or i == 0:
            continue
        before = words[i - 1]
        if os.path.basename(before) in _PROGRAMS:
            start = i - 1
        elif before in _MODULES and i >= 3 and words[i - 2] == "-m":
            start = i - 3
            while start > 0 and words[start].startswith("-"):  # the interpreter's own options (-P, -I)
                start -= 1
        else:
            continue
        return GuardHook(program=tuple(words[start:i]), options=_options(words[i + 1 :]))
    return None


def _options(words: list[str]) -> dict[str, str]:
    """``--name value`` and ``--name=value`` pairs."""
    options: dict[str, str] = {}
    for i, word in enumerate(words):
        if not word.startswith("--"):
            continue
        name, eq, value = word.partition("=")
        if eq:
            options[name] = value
        elif i + 1 < len(words) and not words[i + 1].startswith("--"):
            options[name] = words[i + 1]
    return options
