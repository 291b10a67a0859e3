"""Proving that a tool call only reads: an allowlist, so whatever it does not know is not proven.

A call is proven read-only when it is a known reading tool, or a shell command whose
every part is a known reading program used with options known to be safe: pipelines
and lists of them, input from files, output to nowhere but ``/dev/null`` or another
descriptor. Any expansion (``$VAR``, ``$( )``, backticks, process substitution,
``$'…'``), assignment, heredoc, keyword, unknown program or unknown option is not
proven. Programs that run others (pagers, ``find -exec``, ``xargs``, ``awk``, ``git``
whose repository config can name programs to run) are not on the list.

Standard library only: this runs on the ``guard hook`` path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from guard.command_analysis.shell_syntax import Command, ShellSyntaxError, Word, parse
from guard.core.record import FrozenRecord

__all__ = ["READ_TOOLS", "Proof", "prove"]

#: Built-in tools of the clients that only read files (lower case; Claude Code, Gemini CLI, Copilot, Codex).
READ_TOOLS = frozenset({"read", "read_file", "read_many_files", "view", "notebookread"})
_MAX_COMMAND = 16_384


class Proof(FrozenRecord):
    """``proven``: the call only reads; ``reason`` says what proved it, or why it is not proven."""

    __slots__ = ("proven", "reason")
    proven: bool
    reason: str

    def __init__(self, proven: bool, reason: str) -> None:
        self._assign(locals())


_NUMBER = re.compile(r"^\+?-?\d+[bkmgKMG]?$")
#: (flags without a value, options taking one, a check on that value or None for any text)
_Spec = tuple[frozenset[str], frozenset[str], Callable[[str], bool] | None]


def _flags(letters: str) -> frozenset[str]:
    return frozenset(f"-{c}" for c in letters)


def _numeric(value: str) -> bool:
    return bool(_NUMBER.match(value))


_SED_PRINT = re.compile(r"^(?:\d+(?:,\d+|,\$)?|\$)p$|^(?:\d+(?:,\d+)?p;)+\d+(?:,\d+)?p$")

_PROGRAMS: dict[str, _Spec] = {
    "cat": (_flags("nbAEsTtuve"), frozenset(), None),
    "head": (_flags("qv"), frozenset({"-n", "-c"}), _numeric),
    "tail": (_flags("qv"), frozenset({"-n", "-c"}), _numeric),
    "wc": (_flags("lwcmL"), frozenset(), None),
    "nl": (_flags("p"), frozenset({"-b", "-n", "-w", "-s", "-v", "-i"}), None),
    "ls": (_flags("laAhtrSdF1iGnsogcuU") | frozenset({"--color", "--color=never", "--color=auto"}), frozenset(), None),
    "grep": (_flags("nivclLwxEFGHhoqsIzZ") | frozenset({"--color", "--color=never", "--color=auto", "--line-number"}),
             frozenset({"-A", "-B", "-C", "-e", "-m"}), None),
    "echo": (_flags("neE"), frozenset(), None),
    "pwd": (_flags("LP"), frozenset(), None),
    "sort": (_flags("nrufbdhMVs"), frozenset({"-k", "-t"}), None),
    "uniq": (_flags("cdiu"), frozenset(), None),
    "cut": (frozenset({"-s"}), frozenset({"-d", "-f", "-c", "-b"}), None),
    "stat": (_flags("L"), frozenset({"-c"}), None),
    "basename": (frozenset(), frozenset(), None),
    "dirname": (frozenset(), frozenset(), None),
    "true": (frozenset(), frozenset(), None),
}
#: Programs whose positional arguments are not files they read (so at most one output file cannot sneak in).
_MAX_OPERANDS = {"uniq": 1, "basename": 2}


def _word_problem(word: Word) -> str | None:
    if word.dynamic or word.substitutions or word.process or word.escapes:
        return f"{word.text!r} expands at run time"
    return None


def _option_problem(program: str, args: list[str]) -> str | None:
    flags, valued, check = _PROGRAMS[program]
    operands = 0
    pending: str | None = None
    for index, arg in enumerate(args):
        if pending is not None:
            if check is not None and not check(arg):
                return f"{program} {pending} {arg!r} is not a number"
            pending = None
            continue
        if arg == "--" or not arg.startswith("-") or arg == "-":
            operands += 1
            continue
        if program in ("head", "tail") and _numeric(arg[1:]):
            continue
        if arg in flags:
            continue
        if arg in valued:
            pending = arg
            continue
        if arg[:2] in valued and len(arg) > 2:  # -n5, -A3
            if check is not None and not check(arg[2:]):
                return f"{program} {arg!r} is not a known-safe option"
            continue
        if not arg.startswith("--") and all(f"-{c}" in flags for c in arg[1:]):
            continue  # combined flags: -la
        if index + 1 < len(args) and not arg.startswith("--") and all(f"-{c}" in flags for c in arg[1:-1]) and f"-{arg[-1]}" in valued:
            pending = f"-{arg[-1]}"  # combined flags ending in one taking a value: -nA 3
            continue
        return f"{program} option {arg!r} is not known to be safe"
    if pending is not None:
        return f"{program} {pending} has no value"
    if operands > _MAX_OPERANDS.get(program, operands):
        return f"{program} with {operands} operands may write its last one"
    return None


def _sed_problem(args: list[str]) -> str | None:
    """Only ``sed -n 'N,Mp' FILE…``: printing lines, nothing that writes or runs."""
    if not args or args[0] != "-n" or len(args) < 2 or not _SED_PRINT.match(args[1]):
        return "sed is proven only as sed -n 'N,Mp'"
    if any(arg.startswith("-") for arg in args[2:]):
        return "sed takes no further options here"
    return None


def _command_problem(command: Command) -> str | None:
    if command.assignments:
        return "a variable assignment"
    for redirect in command.redirects:
        if redirect.op in ("<<", "<<-", "<<<"):
            return "a heredoc or here-string"
        problem = _word_problem(redirect.target)
        if problem:
            return problem
        if redirect.op == "<":
            continue
        if redirect.op in (">&", "<&") and redirect.target.text.isdigit():
            continue
        if redirect.target.text != "/dev/null":
            return f"output redirected to {redirect.target.text!r}"
    if not command.words:
        return "no program"
    for word in command.words:
        problem = _word_problem(word)
        if problem:
            return problem
    program, args = command.words[0].text, [w.text for w in command.words[1:]]
    if program == "sed":
        return _sed_problem(args)
    if program not in _PROGRAMS:
        return f"{program!r} is not a known reading program"
    return _option_problem(program, args)


def _shell(command: str) -> Proof:
    if len(command) > _MAX_COMMAND:
        return Proof(False, "the command is too long to prove")
    try:
        script = parse(command)
    except ShellSyntaxError as exc:
        return Proof(False, f"cannot be read: {exc}")
    programs: list[str] = []
    for pipeline in script.pipelines:
        for part in pipeline.commands:
            problem = _command_problem(part)
            if problem:
                return Proof(False, problem)
            programs.append(part.words[0].text)
    if not programs:
        return Proof(False, "no program")
    return Proof(True, "only reads: " + ", ".join(dict.fromkeys(programs)))


def prove(tool_name: str, tool_input: Mapping[str, Any], cwd: str, env: Mapping[str, str]) -> Proof:
    """Whether the call ``tool_name(tool_input)`` run in ``cwd`` only reads. Never raises."""
    tool = tool_name.lower()
    if tool in READ_TOOLS:
        return Proof(True, f"{tool_name} only reads")
    command = tool_input.get("command")
    if tool in ("bash", "run_shell_command", "shell") and isinstance(command, str):
        return _shell(command)
    return Proof(False, f"{tool_name} is not a known reading tool")
