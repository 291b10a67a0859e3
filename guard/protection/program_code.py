"""The shell lines a program's own code runs, and the files it writes: awk's, a makefile's, a crontab's, Tcl's.

``awk 'BEGIN{system("rm -rf ..")}'``, ``make -f - <<< $'all:\\n\\trm -rf ..'``, ``crontab - <<< '* * * * * rm -rf ..'``
and ``expect -c 'spawn rm -rf ..'`` run a shell line written in a language of their own, which the shell's reading sees
only as words: self-protection reads each such line as a command of its own (:mod:`guard.protection.naming`), as it
reads ``bash -c``'s. Read loosely, a superset: every ``system(…)``, ``| …`` and ``… | getline`` of an awk program (its
text, ``-f``'s and ``@include``'s files where readable, what it is fed), with its strings joined and a variable's
literal values put in (any other value is :data:`~guard.protection.naming.UNKNOWN`, as a shell variable guard does not
know); each ``> …``/``>> …`` is a file it may write. A makefile's lines, its ``$(shell …)`` and ``!=`` commands (given
as ``--eval``, fed, named by ``-f`` or written by the line itself: a project's own Makefile, which ``make`` reads
unnamed, is a matter of provenance, docs/provenance.md), its variables put in. A crontab's command fields; Tcl's
``exec``, ``spawn``, ``system``, ``cd`` and ``file delete``/``rename``/``copy`` (as ``rm``/``mv``/``cp``). Standard
library only, loaded only for a line naming one of these programs.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from guard.protection.naming import UNKNOWN, TooLarge

__all__ = ["Code", "code"]

#: How many values one expression, or one variable, stands for before the rest are :data:`UNKNOWN`.
_VALUES = 16
#: How many tokens reading one awk program may step through: past it, the call is too large to judge.
_STEPS = 200_000


class _Steps:
    """What is left of :data:`_STEPS` for one program."""

    def __init__(self) -> None:
        self.left = _STEPS

    def spend(self, count: int = 1) -> None:
        self.left -= count
        if self.left < 0:
            raise TooLarge(f"reading its awk program took more than {_STEPS} steps")


@dataclass
class Code:
    """What a program's code runs (``lines``, each a shell line) and writes (``writes``, paths; UNKNOWN where computed)."""

    lines: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)


def code(program: str, args: list[str], fed: list[str], read: Callable[[str], str | None]) -> Code:
    """What ``program ARGS`` runs and writes, from its words, the texts it may be ``fed`` (its input, a file the line
    wrote) and the files ``read`` returns the text of (None: not readable)."""
    if program in ("awk", "gawk", "mawk", "nawk"):
        return _awk(args, fed, read)
    if program in ("make", "gmake"):
        return _make(args, fed, read)
    if program == "crontab":
        return _crontab(args, fed, read)
    return _tcl(args, fed, read)


# awk


#: An awk token: a string, a comment, a name, a number, or an operator (a ``/`` of a regular expression is one too: the
#: strings are also taken between every two quotes, :func:`_between_quotes`).
_AWK_TOKEN = re.compile(
    r'"(?:[^"\\\n]|\\.)*"?|#[^\n]*|[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]*)?|\|\||&&|>>|\|&|[!=<>+*/%^-]=|\+\+|--|\S'
)
#: awk's options that take a value, and those whose value is a program file.
_AWK_VALUED = frozenset(
    {"-F", "-v", "-f", "-i", "-E", "-l", "-e", "-W", "--file", "--include", "--exec", "--source", "--assign"}
)
_AWK_FILES = frozenset({"-f", "-i", "-E", "--file", "--include", "--exec"})
_AWK_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "/": "/"}
#: Where an awk expression ends: a statement's end, a comma, a redirection, a test.
_AWK_ENDS = frozenset(
    {";", "\n", "{", "}", ",", "|", "|&", ">", ">>", "<", "||", "&&", "?", ":", "==", "!=", "<=", ">="}
)


def _awk(args: list[str], fed: list[str], read: Callable[[str], str | None]) -> Code:
    texts, assigned = list(fed), []
    options, operands = _awk_words(args)
    files = [value for name, value in options if name in _AWK_FILES]
    texts += [_read_program(name, fed, read) for name in files]
    texts += [value for name, value in options if name in ("-e", "--source")]
    assigned += [value for name, value in options if name in ("-v", "--assign")]
    if not files and not any(name in ("-e", "--source") for name, _ in options) and operands:
        texts.append(operands.pop(0))  # the program text
    assigned += [operand for operand in operands if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", operand)]
    for text in list(texts):  # @include "file"
        texts += [_read_program(found, fed, read) for found in re.findall(r'@include\s+"([^"]*)"', text)[:8]]
    tokens = [t for text in texts for t in _AWK_TOKEN.findall(text) if not t.startswith("#")]
    steps = _Steps()
    steps.spend(len(tokens))
    variables: dict[str, set[str]] = {}
    for assignment in assigned:
        name, _, value = assignment.partition("=")
        variables.setdefault(name, set()).add(_unescape(value))
    for k, token in enumerate(tokens[:-1]):
        following = tokens[k + 1]
        if following == "=" and token.isidentifier():
            variables.setdefault(token, set()).update(_values(tokens, k + 2, {}, steps) or {""})
        elif following in ("+=", "-=", "*=", "/=", "%=", "^=", "++", "--") and token.isidentifier():
            variables.setdefault(token, set()).add(UNKNOWN)
        elif token in ("getline", "++", "--") and following.isidentifier():
            variables.setdefault(following, set()).add(UNKNOWN)
    found = Code(lines=_between_quotes(texts))
    for k, token in enumerate(tokens):
        if token == "system" and tokens[k + 1 : k + 2] == ["("]:
            found.lines += _values(tokens, k + 2, variables, steps)
        elif token in ("|", "|&"):  # print DATA | "cmd" (DATA too: a shell runs it), "cmd" | getline
            start = k
            while start and tokens[start - 1] not in _AWK_ENDS and tokens[start - 1] != "(":
                start -= 1
                steps.spend()
            start += tokens[start : start + 1] in (["print"], ["printf"])
            found.lines += _values(tokens, k + 1, variables, steps) + _values(tokens, start, variables, steps)
            found.lines += _printed(tokens, k, variables, steps)
        elif token in (">", ">>"):
            found.writes += _values(tokens, k + 1, variables, steps)
    for k, token in enumerate(tokens):  # gawk's chdir() (the filefuncs extension): the commands run there too
        if token == "chdir" and tokens[k + 1 : k + 2] == ["("]:
            folders = _values(tokens, k + 2, variables, steps)
            into = [f"cd {shlex.quote(folder)} && " for folder in folders]
            found.lines += [cd + line for cd in into for line in found.lines[: _VALUES * 4]]
            found.writes += [os.path.join(folder, path) for folder in folders for path in found.writes[:_VALUES]]
    return found


def _between_quotes(texts: list[str]) -> list[str]:
    """Every text between two double quotes of ``texts``: each string of the program, however its regular expressions
    (``/"/``) pair the quotes, may be a shell line ``system`` or a pipe runs."""
    return [part for text in texts for part in text.split('"')[1:-1] if part.strip()][: _VALUES * 4]


def _awk_words(args: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """awk's (option, value) pairs, for the options that take one, and its operands (the program text first, unless an
    option gives it)."""
    options: list[tuple[str, str]] = []
    operands: list[str] = []
    k = 0
    while k < len(args):
        arg = args[k]
        k += 1
        if arg == "--":
            operands += args[k:]
            break
        if arg.startswith("--") and "=" in arg:
            name, _, value = arg.partition("=")
            options.append((name, value))
        elif arg in _AWK_VALUED or arg == "--field-separator":
            options.append((arg, args[k] if k < len(args) else ""))
            k += 1
        elif arg[:2] in _AWK_VALUED:
            options.append((arg[:2], arg[2:]))
        elif not arg.startswith("-") or arg == "-":
            operands.append(arg)
    return options, operands


def _read_program(name: str, fed: list[str], read: Callable[[str], str | None]) -> str:
    """An awk program file's text: what it is fed for ``-`` or ``/dev/stdin``; the file's (or ``NAME.awk``'s, as gawk
    looks for it) where readable."""
    if name in ("-", "/dev/stdin", "/dev/fd/0"):
        return "\n".join(fed)
    return "\n".join(filter(None, (read(name), read(name + ".awk"))))


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _AWK_ESCAPES.get(m.group(1), "\\" + m.group(1)), text)


def _values(tokens: list[str], start: int, variables: dict[str, set[str]], steps: _Steps) -> list[str]:
    """The texts the awk expression at ``tokens[start:]`` may have (:func:`_expression`)."""
    return _expression(tokens, start, variables, steps)[0]


def _expression(tokens: list[str], start: int, variables: dict[str, set[str]], steps: _Steps) -> tuple[list[str], int]:
    """(the texts the awk expression at ``tokens[start:]`` may have, where it ends): strings and numbers joined, a
    variable by each of its known values (:data:`UNKNOWN` for any other), ``ENVIRON["X"]`` as ``${X}`` (the shell line
    or path it ends up in expands it), ``sprintf``'s output; a field, another call, an array's element or arithmetic as
    UNKNOWN."""
    parts: list[set[str]] = []
    depth, k = 0, start
    while k < len(tokens):
        token = tokens[k]
        if depth == 0 and (token in _AWK_ENDS or token in (")", "]", "getline", "in")):
            break
        k += 1
        steps.spend()
        if token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
        elif token[:1] == '"':
            parts.append({_unescape(token[1:].removesuffix('"'))})
        elif token[:1].isdigit():
            parts.append({token})
        elif token == "ENVIRON" and tokens[k : k + 3][::2] == ["[", "]"] and _ENV_NAME.match(tokens[k + 1]):
            parts.append({"${" + tokens[k + 1].strip('"') + "}"})
            k += 3
        elif token == "sprintf" and tokens[k : k + 1] == ["("]:
            arguments, k = _arguments(tokens, k + 1, variables, steps)
            parts.append(set(_printf(arguments)) or {UNKNOWN})
            k += tokens[k : k + 1] == [")"]
        elif token.isidentifier() and tokens[k : k + 1] in (["("], ["["]):
            k = _closing(tokens, k, steps)
            parts.append({UNKNOWN})
        elif token.isidentifier():
            parts.append(variables.get(token) or {UNKNOWN})
        else:
            parts.append({UNKNOWN})
    joined = {"".join(choice) for choice in itertools.islice(itertools.product(*parts), _VALUES)}
    return [re.sub(f"{UNKNOWN}+", UNKNOWN, text) for text in sorted(joined) if text], k


def _arguments(
    tokens: list[str], start: int, variables: dict[str, set[str]], steps: _Steps
) -> tuple[list[list[str]], int]:
    """The values of each expression of the comma-separated list at ``tokens[start:]``, and where the list ends."""
    found, k = [], start
    while True:
        values, k = _expression(tokens, k, variables, steps)
        found.append(values or [""])
        if tokens[k : k + 1] != [","] or len(found) >= 64:
            return found, k
        k += 1


#: A name ``ENVIRON["…"]`` reads, as a quoted awk string.
_ENV_NAME = re.compile(r'^"[A-Za-z_][A-Za-z0-9_]*"$')
#: printf's conversions, each of which prints the next argument (``%%`` prints ``%``).
_CONVERSION = re.compile(r"%%|%[-+ #0-9.*]*[a-zA-Z]")


def _printf(arguments: list[list[str]]) -> list[str]:
    """What ``printf``/``sprintf`` with these arguments (the format first) may print: each conversion takes the next."""
    out: list[str] = []
    for choice in itertools.islice(itertools.product(*arguments[:16]), _VALUES):
        rest = iter(choice[1:])

        def converted(found: re.Match[str], rest: Iterator[str] = rest) -> str:
            return "%" if found.group(0) == "%%" else next(rest, "")

        out.append(_CONVERSION.sub(converted, choice[0]))
    return out


def _printed(tokens: list[str], at: int, variables: dict[str, set[str]], steps: _Steps) -> list[str]:
    """What the ``print``/``printf`` statement whose output goes to a pipe at ``tokens[at]`` prints (a shell reading it
    runs it): its arguments, joined by spaces or put into its format."""
    start = at
    while start and tokens[start - 1] not in (";", "\n", "{", "}"):
        start -= 1
        steps.spend()
    if tokens[start : start + 1] not in (["print"], ["printf"]):
        return []
    formats = tokens[start] == "printf"
    start += 1 + (tokens[start + 1 : start + 2] == ["("])
    arguments, _ = _arguments(tokens, start, variables, steps)
    if formats:
        return _printf(arguments)
    return [" ".join(choice) for choice in itertools.islice(itertools.product(*arguments), _VALUES)]


def _closing(tokens: list[str], k: int, steps: _Steps) -> int:
    """The index after the bracket closing the one at ``tokens[k]``."""
    level = 0
    for j in range(k, len(tokens)):
        steps.spend()
        level += tokens[j] in ("(", "[")
        level -= tokens[j] in (")", "]")
        if level == 0:
            return j + 1
    return len(tokens)


# make


#: A make variable's simple assignment (``NAME = value``, ``:=``, ``::=``, ``?=``, ``+=``), and one whose value is a command.
_MAKE_ASSIGNMENT = re.compile(r"^(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(?:\+|\?|::?)?=\s*(.*)$")
_MAKE_COMMAND_ASSIGNMENT = re.compile(r"^[^:=#\t]*!=\s*(.*)$")
#: How much text a makefile's commands may hold once its variables are put in.
_MAKE_TEXT = 1024 * 1024
_MAKE_SHELL = re.compile(r"\$[({]shell\s")
_MAKE_REFERENCE = re.compile(r"\$(?:\$|\(([^()$]*)\)|\{([^{}$]*)\}|([^$(){}]))")


def _make(args: list[str], fed: list[str], read: Callable[[str], str | None]) -> Code:
    """A makefile's commands (``-f``/``--file``/``--makefile`` of what it is fed or the line wrote, ``--eval``/``-E``
    text), with ``NAME=VALUE`` operands and the makefile's simple assignments put in."""
    texts: list[str] = []
    folders: list[str] = []  # -C: where make runs, each from the one before
    assigned: dict[str, str] = {}
    k = 0
    while k < len(args):
        arg = args[k]
        k += 1
        if arg in ("-f", "--file", "--makefile", "-E", "--eval", "-C", "--directory") and k < len(args):
            name, value, k = arg, args[k], k + 1
        elif arg.startswith(("--file=", "--makefile=", "--eval=", "--directory=")):
            name, _, value = arg.partition("=")
        elif arg[:2] in ("-f", "-E", "-C") and len(arg) > 2:
            name, value = arg[:2], arg[2:]
        else:
            if not arg.startswith("-") and "=" in arg:
                variable, _, value = arg.partition("=")
                assigned[variable.strip()] = value
            continue
        if name in ("-C", "--directory"):
            folders.append(value)
        elif name in ("-E", "--eval"):
            texts.append(value)
        elif value in ("-", "/dev/stdin", "/dev/fd/0"):
            texts += fed
        else:
            texts.append(read(value) or "")
    texts += fed  # a makefile the line wrote, which make may read unnamed
    lines = [line for text in dict.fromkeys(texts) for line in text.replace("\\\n", " ").splitlines()]
    given = set(assigned)
    for line in lines:  # a variable the makefile sets twice (``+=``, a later ``=``) holds each value, as words
        found = _MAKE_ASSIGNMENT.match(line)
        if found and found.group(1) not in given:
            assigned[found.group(1)] = " ".join(filter(None, (assigned.get(found.group(1)), found.group(2))))
    commands: list[str] = []
    for line in lines:  # a recipe's prefix may be any character (.RECIPEPREFIX): every line, with its first or without
        commands += [*_make_shell(line), line.lstrip().lstrip("@-+ "), line[1:].lstrip("@-+ "), line.partition(";")[2]]
        command = _MAKE_COMMAND_ASSIGNMENT.match(line)
        if command:
            commands.append(command.group(1))
    into = "".join(f"cd {shlex.quote(folder)} && " for folder in folders)
    expanded: dict[str, str] = {}
    made = sorted({into + _make_expand(command, assigned, expanded) for command in commands if command.strip()})
    if sum(map(len, made)) > _MAKE_TEXT:
        raise TooLarge(f"its makefile's commands hold more than {_MAKE_TEXT} characters")
    return Code(lines=made)


def _make_shell(line: str) -> list[str]:
    """The text of each ``$(shell …)`` / ``${shell …}`` of a makefile's line, to its matching bracket."""
    found: list[str] = []
    for start in (m.end() for m in _MAKE_SHELL.finditer(line)):
        level, end = 1, start
        while end < len(line) and level:
            level += line[end] in "({"
            level -= line[end] in ")}"
            end += 1
        found.append(line[start : end - 1] if not level else line[start:])
    return found


def _make_expand(text: str, assigned: dict[str, str], expanded: dict[str, str] | None = None) -> str:
    """``text`` as make hands it to the shell: ``$$`` is ``$``, a known variable its value (each expanded once, cut at
    4,096 characters; one that refers to itself is UNKNOWN), anything else UNKNOWN."""
    expanded = {} if expanded is None else expanded

    def value(found: re.Match[str]) -> str:
        if found.group(0) == "$$":
            return "$"
        name = next(filter(None, found.groups()), "")
        if name not in assigned:  # make takes the environment's variables: the shell line expands one as it runs
            return "${" + name + "}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else UNKNOWN
        if name not in expanded:
            expanded[name] = UNKNOWN  # while it is expanded: a reference to itself
            expanded[name] = _make_expand(assigned[name], assigned, expanded)[:4096]
        return expanded[name]

    return _MAKE_REFERENCE.sub(value, text)


# crontab


def _crontab(args: list[str], fed: list[str], read: Callable[[str], str | None]) -> Code:
    """A crontab's commands: each entry after its five time fields (or an ``@reboot``-like one), from the file it installs
    (``-`` or none: what it is fed)."""
    if any(arg in ("-l", "-r", "-e", "--list", "--remove", "--edit") for arg in args):
        return Code()
    files = [arg for arg in args if not arg.startswith("-") or arg == "-"]
    texts = [read(name) or "" for name in files if name != "-"] + fed  # a file the line wrote is fed too
    lines: list[str] = []
    for entry in (line.strip() for text in texts for line in text.splitlines()):
        if not entry or entry.startswith("#") or re.match(r"^[A-Za-z_][A-Za-z0-9_]*\s*=", entry):
            continue
        fields = entry.split(None, 1 if entry.startswith("@") else 5)
        command = fields[-1] if len(fields) > (1 if entry.startswith("@") else 5) else ""
        lines.append(re.split(r"(?<!\\)%", command, maxsplit=1)[0])
    return Code(lines=lines + [f"cd && {line}" for line in lines])  # cron runs it in the home folder


# Tcl (tclsh, wish, expect)


#: Tcl's commands that run a program, and its file commands, as the shell programs they are.
_TCL_RUNS = frozenset({"exec", "spawn", "system"})
_TCL_FILE = {"delete": "rm -rf", "rename": "mv", "copy": "cp -r"}


def _tcl(args: list[str], fed: list[str], read: Callable[[str], str | None]) -> Code:
    """Tcl's ``exec``/``spawn``/``system`` and ``file delete``/``rename``/``copy`` in the code ``-c`` gives, the script
    named (``-f`` or the first operand, where readable) and what it is fed."""
    texts = list(fed)
    k = 0
    while k < len(args):
        arg = args[k]
        k += 1
        if arg in ("-c", "-f") and k < len(args):
            texts.append(args[k] if arg == "-c" else read(args[k]) or "")
            k += 1
        elif not arg.startswith("-"):
            texts.append(read(arg) or "")
            break
    lines: list[str] = []
    for text in texts:
        quoted, split = text.replace("{", "'").replace("}", "'"), text.replace("{", ";").replace("}", ";")
        for command in re.split(r"[;\n\[\]]", quoted + "\n" + split):
            words = command.split()
            while words[:1] and words[0].strip("'\"") in ("catch", "eval", "uplevel", ""):
                words = words[1:]
            if words[:1] and words[0].strip("'\"") in ("send", "exp_send"):  # typed into what spawn started
                lines.append(re.sub(r"\\[rn]", "\n", " ".join(_after_options(words[1:])).strip("'\"")))
            elif words[:1] and words[0].strip("'\"") in _TCL_RUNS:
                lines.append(" ".join(_after_options(words[1:])))
            elif words[:1] == ["file"] and len(words) > 2 and words[1] in _TCL_FILE:
                lines.append(" ".join([_TCL_FILE[words[1]], *_after_options(words[2:])]))
            elif words[:1] == ["open"] and words[1:2] and words[1].strip("'\"").startswith("|"):  # a pipe to a command
                lines.append(" ".join(word.strip("'\"") for word in [words[1].strip("'\"")[1:], *words[2:]]))
            elif words[:1] == ["cd"]:  # Tcl's cd moves the process: the commands after it run there
                lines.append(" ".join(words))
    return Code(lines=lines + ["\n".join(lines)])


def _after_options(words: Iterable[str]) -> list[str]:
    rest = list(itertools.dropwhile(lambda word: word.startswith("-") and word != "--", words))
    return rest[1:] if rest[:1] == ["--"] else rest
