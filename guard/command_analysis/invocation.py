"""One simple command as it would run, with wrappers (``env``, ``nohup``, ``timeout 5``, ``xargs``) peeled off.

``env nohup timeout 5 rm -rf /`` runs ``rm``: the rules judge what finally runs,
so every wrapper that runs its operands as a command is looked through here.
"""

from __future__ import annotations

import os
import re
from typing import Any

from guard.command_analysis.shell_syntax import Command, Word
from guard.core.record import Record

__all__ = ["Invocation", "command_name", "script_word", "unwrap"]

_VERSIONED = re.compile(r"^(python|pypy|perl|ruby|php|node|lua|luajit|tclsh|pwsh)[\d.]*$")

#: Shell keywords that may precede a command (``if sudo true; then …``).
_KEYWORDS = frozenset(
    {"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac", "coproc", "[[", "]]"}
)

#: Wrappers that run their operands as a command: (options taking a value, positional operands before the command).
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "-o", "--format", "--output"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p", "--class", "--classdata"}), 0),
    "setsid": (frozenset(), 0),
    "xargs": (
        frozenset(
            {"-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a", "--max-args", "--max-procs", "--delimiter", "--arg-file"}
        ),
        0,
    ),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "unbuffer": (frozenset(), 0),
    "busybox": (frozenset(), 0),
    "caffeinate": (frozenset({"-t", "-w"}), 0),
    "torsocks": (frozenset(), 0),
    "proxychains": (frozenset({"-f"}), 0),
    "proxychains4": (frozenset({"-f"}), 0),
}


class Invocation(Record):
    """One command as it would run: its name, arguments, and where its stdin comes from.

    ``upstream``: the pipeline stages before it (its stdin, unless redirected);
    ``reread``: how many literal strings deep this is; ``splice``: an xargs -I /
    find -exec placeholder spliced into the arguments; ``texts``: the arguments' text.
    """

    __slots__ = ("name", "head", "args", "command", "upstream", "reread", "splice", "texts")

    def __init__(
        self,
        name: str,
        head: Word,
        args: list[Word],
        command: Command,
        upstream: list[Command],
        reread: int,
        splice: str | None = None,
    ) -> None:
        self.name, self.head, self.args, self.command, self.upstream, self.reread, self.splice = (
            name,
            head,
            args,
            command,
            upstream,
            reread,
            splice,
        )
        self.texts = [w.text for w in args]

    def options(self) -> list[str]:
        """Arguments up to ``--`` that look like options."""
        out: list[str] = []
        for text in self.texts:
            if text == "--":
                break
            if text.startswith("-") and text != "-":
                out.append(text)
        return out

    def operands(self) -> list[Word]:
        words, seen_dashdash = [], False
        for word in self.args:
            if word.text == "--" and not seen_dashdash:
                seen_dashdash = True
            elif seen_dashdash or not word.text.startswith("-") or word.text == "-":
                words.append(word)
        return words


def command_name(text: str) -> str:
    """The program a word names: ``/usr/bin/sudo`` → ``sudo``, ``python3.11`` → ``python``."""
    base = text.rsplit("/", 1)[-1]
    match = _VERSIONED.match(base)
    return match.group(1) if match else base


def unwrap(command: Command, upstream: list[Command], reread: int) -> Invocation | None:
    """Peel keywords and wrappers (``env``, ``nohup``, ``timeout 5``, ``xargs -I{}``) off a command."""
    words, i, splice = command.words, 0, None
    while i < len(words):
        name = command_name(words[i].text)
        if name in _KEYWORDS and not words[i].dynamic:
            i += 1
            continue
        if name == "function":
            i += 2
            continue
        if name in ("case", "for", "select") and not words[i].dynamic:
            return None  # `case WORD in`, `for NAME in WORDS`: a header, not a command
        if name == "env" and any(w.text.startswith(("-S", "--split-string")) for w in words[i + 1 :]):
            return _env_split_string(command, words[i + 1 :], upstream, reread)
        if name == "command" and i + 1 < len(words) and words[i + 1].text in ("-v", "-V"):
            return None  # a lookup, not a run
        if name == "flock" and not words[i].dynamic:
            found = _flock(command, i, upstream, reread)
            if not isinstance(found, int):
                return found
            i = found
            continue
        if name not in _WRAPPERS or words[i].dynamic:
            break
        with_value, positional = _WRAPPERS[name]
        i += 1
        while i < len(words) and words[i].text.startswith("-") and words[i].text != "-":
            text = words[i].text
            i += 1
            if text == "--":
                break
            if name == "xargs":
                splice = _xargs_placeholder(text, words[i].text if i < len(words) else "") or splice
            if text in with_value:
                i += 1
        while name == "env" and i < len(words) and "=" in words[i].text and not words[i].text.startswith("="):
            i += 1
        i += positional
    if i >= len(words):
        return None
    return Invocation(command_name(words[i].text), words[i], list(words[i + 1 :]), command, upstream, reread, splice)


#: flock's long options (util-linux 2.38 to 2.41, ``sys-utils/flock.c``) and whether each takes a value; its short
#: options are ``-sexnoFuhV`` and, taking a value, ``-w`` and ``-E``. ``-c``/``--command`` is not among them: flock
#: reads it apart, spelt in full, after the lock file (or, with ``--fd``, among the options).
_FLOCK_LONG = {
    **dict.fromkeys(("shared", "exclusive", "unlock", "nonblocking", "nb", "close", "no-fork", "verbose"), False),
    **dict.fromkeys(("fcntl", "help", "version"), False),
    **dict.fromkeys(("timeout", "wait", "conflict-exit-code", "start", "length", "fd"), True),
}
_FLOCK_SHORT, _FLOCK_SHORT_VALUE = frozenset("sexnoFuhV"), frozenset("wE")
_FLOCK_COMMAND = ("-c", "--command")


def _flock(command: Command, at: int, upstream: list[Command], reread: int) -> Invocation | int | None:
    """What ``flock`` at ``command.words[at]`` runs, read as util-linux reads it (getopt stopping at the first operand):
    ``flock [OPTIONS] FILE|DIR COMMAND [ARGS]`` and ``--fd N COMMAND [ARGS]`` run COMMAND (the index of its word);
    ``flock [OPTIONS] FILE|DIR -c STRING`` and ``--fd N -c STRING`` run STRING through the shell (``sh -c STRING``);
    ``flock [OPTIONS] N`` and a lone FILE run nothing (None). A line flock would refuse (``-c`` with more than one
    string, ``-c`` with no ``--fd``) is read as the command it names all the same. An option it does not know, an
    ambiguous abbreviation, or a word up to the command whose value is not known leaves flock itself the command: what
    a runner runs is then read loosely by whoever reads it (self-protection's runners)."""
    words, i, fd, shell = command.words, at + 1, False, False
    unread = Invocation("flock", words[at], list(words[at + 1 :]), command, upstream, reread)
    while i < len(words) and words[i].text.startswith("-") and words[i].text != "-" and not shell:
        text, i = words[i].text, i + 1
        if text == "--":
            break
        shell = text in _FLOCK_COMMAND
        if shell:
            continue
        if text.startswith("--"):
            name, eq, _ = text[2:].partition("=")
            known = (
                [name]
                if name in _FLOCK_LONG
                else [option for option in _FLOCK_LONG if name and option.startswith(name)]
            )
            if len({_FLOCK_LONG[option] for option in known}) != 1 or (eq and not _FLOCK_LONG[known[0]]):
                return unread
            fd = fd or known == ["fd"]
            i += 1 if _FLOCK_LONG[known[0]] and not eq else 0
            continue
        for k, letter in enumerate(text[1:], 1):
            if letter in _FLOCK_SHORT_VALUE:
                i += 0 if text[k + 1 :] else 1
                break
            if letter not in _FLOCK_SHORT:
                return unread
    if not shell and not fd:
        i += 1  # the lock file or folder
        shell = i < len(words) and words[i].text in _FLOCK_COMMAND and not words[i].dynamic
        i += 1 if shell else 0
    if any(word.dynamic for word in words[at + 1 : i + 1]):  # flock -w $t f …, flock $f …, flock f $c …
        return unread  # where its command starts, or what it is, is not known
    if i >= len(words):
        return None
    if shell:
        return Invocation("sh", Word("sh"), [Word("-c"), words[i]], command, upstream, reread)
    return i


def _xargs_placeholder(option: str, following: str) -> str | None:
    """The replace-string of ``xargs -I R`` / ``-iR`` / ``--replace[=R]``, else None."""
    if option == "-I":
        return following
    if option.startswith(("-I", "-i")):
        return option[2:] or "{}"
    if option.startswith("--replace"):
        return option.partition("=")[2] or "{}"
    return None


def _env_split_string(command: Command, args: list[Word], upstream: list[Command], reread: int) -> Invocation:
    """``env -S 'sh -c …'`` splits a string into a command: judge it as ``sh -c STRING``."""
    for index, word in enumerate(args):
        if word.text in ("-S", "--split-string") and index + 1 < len(args):
            value = args[index + 1]
        elif word.text.startswith(("-S", "--split-string=")) and word.text != "--split-string":
            value = Word(
                word.text.split("=", 1)[1] if word.text.startswith("--") else word.text[2:],
                word.dynamic,
                word.substitutions,
            )
        else:
            continue
        return Invocation("sh", Word("sh"), [Word("-c"), value], command, upstream, reread)
    return Invocation("env", args[0], args, command, upstream, reread)


#: Interpreters whose first operand is a script file, and their options that take the next word as a value, or that
#: give the code inline (no file runs).
_INTERPRETERS = re.compile(
    r"^(?:python(?:\d+(?:\.\d+)?)?|pypy3?|bash|sh|dash|zsh|ksh|node|nodejs|ruby|perl|php|Rscript)$"
)
_VALUE_OPTIONS = frozenset({"-W", "-X", "-o", "-O", "-r", "--require", "-I", "--import", "--loader"})
_INLINE_OPTIONS = frozenset({"-c", "-m", "-e", "-E", "-p", "--eval", "--print", "-"})


def script_word(words: list[Any]) -> Any | None:
    """The word naming the file a simple command runs as a program, or None when it runs none (or inline code)."""
    texts = [w.text for w in words]
    if texts and os.path.basename(texts[0]) == "env":  # env [-i] [VAR=value …] PROGRAM
        skip = 1
        while skip < len(texts) and ("=" in texts[skip] or texts[skip].startswith("-")):
            skip += 1
        words, texts = words[skip:], texts[skip:]
    if not texts:
        return None
    head = os.path.basename(texts[0])
    if texts[0] in ("source", "."):
        return words[1] if len(words) > 1 else None
    if "/" in texts[0] and not _INTERPRETERS.match(head):
        return words[0]  # ./run.sh, scripts/check.py, /abs/tool
    if not _INTERPRETERS.match(head):
        return None
    i = 1
    while i < len(texts) and texts[i].startswith("-"):
        if texts[i] in _INLINE_OPTIONS or texts[i].startswith(("-c", "--eval=", "--print=")):
            return None
        i += 2 if texts[i] in _VALUE_OPTIONS else 1
    return words[i] if i < len(words) else None
