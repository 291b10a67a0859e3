"""The script files a command hook runs: what ``guard trust`` pins beside the config, and self-protection guards.

``python3 .claude/hooks/check.py`` runs whatever check.py holds when the hook
fires, so trusting the command line alone would let whoever rewrites check.py
decide every call. A script here is a file a simple command of the hook runs:
its program when the program is named by a path (``./hooks/check.sh``), the
first operand of an interpreter (``sh``, ``bash``, ``python3``, ``node`` …) or of
``source``/``.``. Only files inside the hook's folder or the user's home count
(``$CLAUDE_PROJECT_DIR`` is that folder): a program on PATH or in the system's
folders cannot be changed by an agent running as the user without privileges
guard cannot hold against anyway. Data files a hook reads or its log are not
scripts, so writing them never makes the hook's config "changed".
Standard library only: self-protection computes this on the ``guard hook`` path.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator

from guard.core.settings import LoadedConfig

__all__ = ["loaded_scripts", "scripts_of"]

_PROJECT_DIR = re.compile(r"\$(?:\{CLAUDE_PROJECT_DIR\}|CLAUDE_PROJECT_DIR\b)")
_INTERPRETER = re.compile(
    r"^(?:ba|da|z|k|fi)?sh$|^python[0-9.]*$|^pypy[0-9.]*$|^node$|^deno$|^bun$|^ruby$|^perl$|^php$|^tsx$|^ts-node$"
)
_SOURCE = frozenset({"source", "."})
_WRAPPERS = frozenset({"env", "exec", "nohup", "command", "time", "nice"})
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "|&", ";;"})
#: Interpreter options after which the next word is code or a module, not a script file.
_CODE_OPTIONS = frozenset({"-c", "-m", "-e", "-p", "--eval", "--print"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _simple_commands(command: str) -> list[list[str]]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    for word in lexer:
        if word in _SEPARATORS:
            commands.append([])
        else:
            commands[-1].append(word)
    return [words for words in commands if words]


def _run_files(words: list[str]) -> list[str]:
    """The words of one simple command that name a file it runs."""
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in _WRAPPERS):
        words = words[1:]
    if not words:
        return []
    program, rest = words[0], words[1:]
    found = [program] if "/" in program else []
    name = os.path.basename(program)
    if _INTERPRETER.match(name) or name in _SOURCE:
        for word in rest:
            if word in _CODE_OPTIONS:
                break
            if not word.startswith("-"):
                found.append(word)
                break
    return found


def scripts_of(command: str, workdir: str) -> list[str]:
    """The absolute, resolved paths of the script files ``command`` runs from ``workdir`` (sorted, unique)."""
    text = _PROJECT_DIR.sub(lambda _: workdir, command)
    try:
        commands = _simple_commands(text)
    except ValueError:  # unbalanced quotes: the shell would not run it either
        return []
    roots = tuple(os.path.realpath(root) + os.sep for root in (workdir, os.path.expanduser("~")))
    scripts = set()
    for words in commands:
        for word in _run_files(words):
            path = os.path.realpath(os.path.join(workdir, os.path.expanduser(word)))
            if path.startswith(roots) and os.path.isfile(path):
                scripts.add(path)
    return sorted(scripts)


def loaded_scripts(loaded: LoadedConfig) -> Iterator[str]:
    """The script files ``loaded``'s command hooks run: as ``guard trust`` pinned them, else found in their command lines now."""
    for spec in loaded.specs:
        if spec.kind != "command" or not spec.command:
            continue
        if spec.scripts is not None:  # pinned by guard trust: no command parsing on the hook path
            yield from (path for path, _ in spec.scripts)
        else:
            yield from scripts_of(spec.command, spec.workdir or loaded.settings.base_dir)
