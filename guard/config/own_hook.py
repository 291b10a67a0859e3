"""Recognising guard's own ``guard hook`` entry in a client's settings file.

``guard install`` writes it in several spellings (an absolute, maybe quoted, path
to the ``guard`` script, or ``python -m guard.cli.main``, with ``--deadline``).
Loading that settings.json as a config must skip it (it is what is running), and
``guard install`` / ``guard doctor`` must find it again whatever path or options
it was written with. Standard library only.
"""

from __future__ import annotations

import os
import shlex

__all__ = ["guard_hook_argv", "guard_hook_identity"]

_PROGRAMS = frozenset({"guard", "guard.exe"})
_MODULES = frozenset({"guard", "guard.cli.main"})


def guard_hook_argv(command: object) -> list[str] | None:
    """The words of ``command`` up to and including ``hook`` when it runs ``guard hook``, else None.

    ``argv[:-1]`` is then the guard program itself (``/venv/bin/guard`` or
    ``/venv/bin/python3 -P -m guard.cli.main``).
    """
    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for i, word in enumerate(words):
        if word != "hook" or i == 0:
            continue
        before = words[i - 1]
        if os.path.basename(before) in _PROGRAMS or (before in _MODULES and i >= 2 and words[i - 2] == "-m"):
            return words[: i + 1]
    return None


def guard_hook_identity(command: object) -> tuple[str, str] | None:
    """For a ``guard hook`` command, its ``(--format, --config)`` (defaults: claude, ''); None for any other command.

    Two guard entries with the same identity are one entry written twice (another
    venv, another ``--deadline``); another format or config is another entry.
    """
    head = guard_hook_argv(command)
    if head is None:
        return None
    words = shlex.split(str(command))[len(head):]
    options = {"--format": "claude", "--config": ""}
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name in options:
            if eq:
                options[name] = value
            elif i + 1 < len(words):
                options[name] = words[i + 1]
    return options["--format"], options["--config"]
