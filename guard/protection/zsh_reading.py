"""What zsh reads in a shell line otherwise than bash does, where that changes which files the line names.

Claude Code runs a Bash call in zsh when the user's environment says so (``CLAUDE_CODE_SHELL``, ``SHELL``: macOS's
default), and Codex when the agent names it. Self-protection reads every line as bash does; under zsh these read
otherwise, each tried with zsh 5.9:

* a parameter's modifiers and subscripts: ``$HOME:h``, ``${HOME:h}``, ``$HOME[1,-1]``, flags ``${(e)x}``, ``$~x``;
* ``=(…)``, a temporary file holding the output of commands (``. =(echo '…')`` runs it);
* parentheses inside a word, which zsh reads as a glob group or a glob qualifier: ``rm (guard|x).yaml`` deletes
  guard.yaml, ``cat guard.yam(l)`` reads it (bash reads both as a syntax error);
* ``=name`` at the start of a word, which is the program ``name`` found on PATH: ``cp x =guard`` overwrites guard;
* ``~name``, which is first a named directory (``hash -d g=..``) or a parameter holding a path (``g=..; rm ~g/x``),
  and only then a user's home; ``~-`` (zsh sets OLDPWD itself) and the directory stack (``~1``, ``~-1``, ``~+1``);
* the shell's options, which the line may set (``setopt``, ``unsetopt``, ``emulate``, ``set -o``, ``options[…]=``):
  only bash's usual ``set -euxv``/``-o pipefail`` forms are read, since each glob option changes what a word names;
* a precommand modifier (``nocorrect``, ``noglob``, ``-``), ``repeat N`` and the short ``if [[ … ]] command``, after
  which zsh runs a command where bash reads a program's name or a syntax error;
* the glob operators of the user's own options (``extendedglob``: ``^x``, ``x#``, ``a~b``; ``braceccl``: ``{ab}``),
  which :func:`glob_superset` turns into a bash glob matching at least as much.

A line with one of the parameter, parenthesis, tilde, option or command forms is not read here at all (:func:`unmodelled`,
:func:`word_problem`, :func:`option_change`, :func:`runs_after`: self-protection refuses it); ``=name`` adds the program's path to what
the word names (:func:`equals_paths`). Quotes keep their meaning (zsh's are bash's), and here-document bodies are data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["equals_paths", "glob_superset", "option_change", "runs_after", "unmodelled", "word_problem"]

#: ``$name`` followed by a modifier (``:h``, ``:s/…/…/``, ``:&``) or a subscript, which bash reads as text.
_PARAMETER_SUFFIX = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9#?$!*@-])(?::[A-Za-z&]|\[)")
#: ``${`` followed by what only zsh reads there: flags ``(…)``, ``=~^+`` before the name, a nested ``${``, and after the
#: name a modifier letter (bash: an offset) or a subscript.
_BRACED = re.compile(r"\$\{(?:[(=~^+]|\$\{|[A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z&]|\[))")
#: ``$`` directly before one of zsh's own expansion flags: ``$=x`` (split), ``$~x`` (glob), ``$^x`` (rc_expand).
_FLAGGED = re.compile(r"\$[=~^][A-Za-z_{]")
#: ``=(…)`` at the start of a word: a temporary file holding the commands' output (bash: a syntax error).
_TEMPORARY_FILE = re.compile(r"(?:^|[\s;&|(<>])=\(")
_PARAMETERS = (
    (_PARAMETER_SUFFIX, "a modifier or subscript of a parameter"),
    (_BRACED, "flags, a modifier or a subscript of a parameter"),
    (_FLAGGED, "an expansion flag of a parameter"),
    (_TEMPORARY_FILE, "a temporary file of commands' output"),
)
#: The start of a here-document: ``<<`` or ``<<-``, then its delimiter, quoted or not.
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z0-9_.-]+)\1")
#: What directly before a ``(`` makes it a subshell, a substitution or an array, not a glob: an operator, ``$ < > =``.
_OPENS_COMMANDS = frozenset(";&|\n({`$<>=")
#: Words after which the shell reads a command.
_KEYWORDS = frozenset({"then", "do", "else", "elif", "if", "while", "until", "time", "!", "{", "}"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*")
#: ``=name``, which zsh replaces by the path of the program ``name``.
_EQUALS = re.compile(r"=[A-Za-z0-9_.+-]+")
#: A ``~`` zsh may expand (a word's start; after ``=`` or ``:`` of an assignment; after ``{`` or ``,`` of a brace; in a
#: ``${x:-word}``) other than as bash does: followed by a name (``~g``, ``~root``), ``-`` or a number (``~-``, ``~1``).
_OTHER_TILDE = re.compile(r"(?:^|[=:{,+-])(~(?!\+?(?:[/,}:\s'\"]|$))[^/,}:\s'\"]*)")
#: zsh's precommand modifiers, ``repeat N`` and ``foreach``: the words after them are a command zsh runs.
_RUNS_NEXT = frozenset({"nocorrect", "noglob", "-", "repeat", "foreach"})
#: Words before a command's name that bash's reading keeps in a simple command.
_BASH_LEADERS = frozenset({"!", "{", "}", "time", "if", "then", "else", "elif", "while", "until", "do", "coproc"})
#: The builtins that change zsh's options, each of which may change what a later word names: anywhere in the line, quoted
#: too (``eval 'setopt globsubst'``), and the assignment to its ``options`` array.
_OPTION_SETTERS = re.compile(r"\b(?:setopt|unsetopt|emulate)\b|\boptions\[")
#: The options a line's ``set`` may name: bash's usual ones, which change no word's names.
_SET_OPTIONS = frozenset({"errexit", "nounset", "xtrace", "verbose", "pipefail", "noclobber", "noglob"})
#: ``set``'s flags of the same: ``-e``, ``-u``, ``-x``, ``-v``, ``-C`` (noclobber), ``-f`` (noglob), and ``-o``.
_SET_FLAGS = re.compile(r"[-+][euxvCfo]+")


def unmodelled(line: str) -> str | None:
    """Why zsh may read ``line`` as naming other files than bash does, or None (what zsh reads as bash does)."""
    scan = _Scan(line)
    for text in scan.expanded:
        for pattern, what in _PARAMETERS:
            found = pattern.search(text)
            if found:
                return f"zsh reads {found.group(0).strip()!r} as {what}, which bash reads otherwise"
    if scan.group is not None:
        return f"zsh reads the parentheses in {scan.group!r} as a glob (bash: a syntax error)"
    setter = _OPTION_SETTERS.search(line)
    if setter:
        return f"{setter.group(0)!r} changes zsh's options, each of which may change what a word names"
    return None


def runs_after(words: list[str]) -> str | None:
    """Why zsh runs a command bash does not see in a simple command of ``words`` (bash's reading, keywords kept): after
    a precommand modifier or ``repeat`` (``nocorrect rm -rf ..``, ``repeat 1 mv …``), or after the condition of zsh's
    short ``if``/``while`` (``if [[ 1 ]] rm -rf ..``), where bash reads a program's name or a syntax error; or None."""
    lead = next((word for word in words if word not in _BASH_LEADERS), None)
    if lead in _RUNS_NEXT:
        return f"zsh runs the words after {lead!r} as a command (bash: a program named {lead!r})"
    if any(word in ("]]", "))") for word in words[:-1]):
        return "zsh runs the words after a condition's ']]' or '))' as a command (its short if and while)"
    return None


def word_problem(raw: str) -> str | None:
    """Why zsh may read the word ``raw`` (as typed) as naming another path than bash does, or None: a ``~`` form zsh
    reads otherwise (a named directory ``~g``, ``~-``, ``~1``), wherever zsh may expand it."""
    tilde = _OTHER_TILDE.search(raw)
    if tilde:
        return (
            f"zsh reads {tilde.group(1)!r} as a named directory, a parameter holding a path, its OLDPWD or its"
            " directory stack before a user's home"
        )
    return None


def option_change(program: str, args: list[str]) -> str | None:
    """Why the command ``program args`` may change zsh's options beyond bash's usual ``set -euxv -o pipefail``, or
    None."""
    if program in ("setopt", "unsetopt", "emulate"):
        return f"{program!r} changes zsh's options"
    if program != "set":
        return None
    named = False  # the word is the name ``-o`` takes
    for word in args:
        if named:
            known = word.lower().replace("_", "") in _SET_OPTIONS
        elif word in ("-", "--") or not word.startswith(("-", "+")):
            return None  # the positional parameters follow
        else:
            known = bool(_SET_FLAGS.fullmatch(word))
        if not known:
            return f"'set {word}' may change zsh's options"
        named = not named and word.endswith("o")
    return None


def glob_superset(raw: str) -> str | None:
    """A bash glob matching every name zsh may match with the word ``raw`` (as typed) under its own glob options, the
    user's or the line's, or None where zsh reads the word as bash does: ``^x`` (up to the next ``/``, or the end of
    its brace) and ``x#`` become ``*``, an exclusion ``a~b`` becomes ``a`` (it only narrows), ``braceccl``'s ``{ab}``
    becomes ``?``. Quotes, brackets and ``$`` expansions are kept as written."""
    out: list[str] = []
    changed, i, n, braces = False, 0, len(raw), 0
    while i < n:
        c = raw[i]
        if c == "\\":
            out.append(raw[i : i + 2])
            i += 2
            continue
        if c in "'\"" or raw.startswith("$'", i):
            start = i + 2 if c == "$" else i + 1
            closer = "'" if c == "$" else c
            end = _unquoted_end(raw, start, closer, escapes=c != "'")
        elif c == "$" and i + 1 < n and raw[i + 1] in "({":
            end = _balanced_end(raw, i + 1)
        elif c == "$":
            end = i + 2
        elif c == "[":
            close = raw.find("]", i + 2)  # a ``]`` first in the brackets is one of its characters
            end = close + 1 if close > 0 else i + 1
        elif c == "^":  # not what follows, up to the end of this part of the path (or brace): anything there
            out.append("*")
            changed, i = True, _part_end(raw, i, "/,}" if braces else "/")
            continue
        elif c == "#" and i > 0:  # any number of the item before (``##``: at least one): anything there
            out[-1:] = ["*"]
            changed, i = True, i + 1
            continue
        elif c == "~" and i > 0:
            changed = True
            break
        elif c == "{" and (close := raw.find("}", i)) > i + 1 and not set(raw[i + 1 : close]) & set(",.'\"$\\{"):
            out.append("?")
            changed, i = True, close + 1
            continue
        else:
            braces += (c == "{") - (c == "}" and braces > 0)
            end = i + 1
        out.append(raw[i:end])
        i = end
    return "".join(out) if changed else None


def _part_end(raw: str, start: int, stops: str) -> int:
    """The index of the next of ``stops`` outside quotes from ``start`` (the end of ``raw`` if none)."""
    i = start
    while i < len(raw) and raw[i] not in stops:
        i = _unquoted_end(raw, i + 1, raw[i], escapes=raw[i] == '"') if raw[i] in "'\"" else i + 1 + (raw[i] == "\\")
    return i


def _unquoted_end(text: str, start: int, closer: str, *, escapes: bool) -> int:
    """The index after the ``closer`` that ends a quoted string starting at ``start`` (the end of ``text`` if none)."""
    i = start
    while i < len(text):
        if escapes and text[i] == "\\":
            i += 2
        elif text[i] == closer:
            return i + 1
        else:
            i += 1
    return len(text)


def _balanced_end(text: str, start: int) -> int:
    """The index after the bracket matching the one at ``start`` (``(`` or ``{``), counting nested ones."""
    opener = text[start]
    closer = ")" if opener == "(" else "}"
    depth = 0
    for i in range(start, len(text)):
        depth += (text[i] == opener) - (text[i] == closer)
        if depth == 0:
            return i + 1
    return len(text)


def equals_paths(words: Iterable[str], env: Mapping[str, str]) -> list[str]:
    """The programs zsh puts in place of the words ``=name`` (as written, unquoted) among ``words``: each found on PATH."""
    from guard.protection.readonly import which

    found = []
    for word in words:
        if _EQUALS.fullmatch(word):
            path = which(word[1:], env)
            if path:
                found.append(path)
    return found


class _Scan:
    """One pass over a line with bash's quoting: the text zsh expands parameters in (``expanded``: outside single
    quotes, ``$'…'`` and quoted here-documents), and the first word with a ``(`` zsh reads as a glob (``group``)."""

    def __init__(self, line: str) -> None:
        self.line, self.i = line, 0
        self.expanded: list[str] = []
        self.group: str | None = None
        self.pending: list[tuple[str, bool, bool]] = []  # here-documents whose bodies start at the next line
        self.word_start, self.command_word, self.previous_word = 0, True, ""
        current: list[str] = []
        n = len(line)
        while self.i < n:
            c = line[self.i]
            if c == "\\":
                current.append(line[self.i : self.i + 2])
                self.i += 2
            elif c == "'" or (c == "$" and line.startswith("$'", self.i)):
                self.i = self._quote_end(self.i + (2 if c == "$" else 1), "'", escapes=c == "$")
            elif c == '"':
                end = self._quote_end(self.i + 1, '"', escapes=True)
                current.append(line[self.i : end])
                self.i = end
            elif line.startswith("$((", self.i) or (line.startswith("((", self.i) and self._at_command()):
                end = self._closing(self.i + (3 if c == "$" else 2), "))")
                current.append(line[self.i : end])
                self.i = end
            elif c == "<" and (heredoc := _HEREDOC.match(line, self.i)):
                self.pending.append((heredoc.group(2), bool(heredoc.group(1)), heredoc.group(0).startswith("<<-")))
                current.append(heredoc.group(0))
                self.i = heredoc.end()
            elif c == "\n" and self.pending:
                self._end_word(self.i)
                body = self._bodies(self.i + 1)
                current.extend(body)
            else:
                if c == "(":
                    self._paren(self.i)
                elif c in " \t":
                    self._end_word(self.i)
                elif c in ";&|\n":
                    self._end_word(self.i)
                    self.command_word, self.previous_word = True, ""
                current.append(c)
                self.i += 1
        self._end_word(n)
        self.expanded.append("".join(current))

    def _at_command(self) -> bool:
        return self.command_word and self.i == self.word_start

    def _end_word(self, at: int) -> None:
        word = self.line[self.word_start : at].strip()
        if word:
            self.previous_word = word
            self.command_word = word in _KEYWORDS
        self.word_start = at + 1

    def _paren(self, at: int) -> None:
        """A ``(``: a subshell, a substitution, an array or a function's ``()``, else (in zsh) a glob."""
        if self.group is not None or (at and self.line[at - 1] in _OPENS_COMMANDS):
            return
        word = self.line[self.word_start : at]
        if not word.strip() and self.command_word:
            return  # a subshell
        if self.command_word and _NAME.fullmatch(word) and self.line.startswith("()", at):
            return  # a function's definition: name()
        end = self.line.find(")", at)
        self.group = self.line[self.word_start : n if (n := end + 1) > 0 else len(self.line)]

    def _quote_end(self, start: int, closer: str, *, escapes: bool) -> int:
        i = start
        while i < len(self.line):
            if escapes and self.line[i] == "\\":
                i += 2
                continue
            if self.line[i] == closer:
                return i + 1
            i += 1
        return len(self.line)

    def _closing(self, start: int, closer: str) -> int:
        end = self.line.find(closer, start)
        return len(self.line) if end < 0 else end + len(closer)

    def _bodies(self, start: int) -> list[str]:
        """Skip the bodies of the pending here-documents from ``start``; the expanded ones (unquoted delimiter) are kept."""
        kept, i = [], start
        for delimiter, quoted, strip_tabs in self.pending:
            body_start = i
            while i < len(self.line):
                end = self.line.find("\n", i)
                end = len(self.line) if end < 0 else end
                text = self.line[i:end]
                i = end + 1
                if (text.lstrip("\t") if strip_tabs else text) == delimiter:
                    break
            if not quoted:
                kept.append(self.line[body_start:i])
        self.pending.clear()
        self.i = min(i, len(self.line))
        self.word_start, self.command_word, self.previous_word = self.i, True, ""
        return kept
