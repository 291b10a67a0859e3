"""What zsh reads in a shell line otherwise than bash does, where that changes which files the line names.

Claude Code runs a Bash call in zsh when the user's environment says so (``CLAUDE_CODE_SHELL``, ``SHELL``: macOS's
default), and Codex when the agent names it. Self-protection reads every line as bash does; under zsh these read
otherwise, each tried with zsh 5.9:

* a parameter's modifiers and subscripts: ``$HOME:h``, ``${HOME:h}``, ``$HOME[1,-1]``, flags ``${(e)x}``, ``$~x``;
* parentheses inside a word, which zsh reads as a glob group or a glob qualifier: ``rm (guard|x).yaml`` deletes
  guard.yaml, ``cat guard.yam(l)`` reads it (bash reads both as a syntax error);
* ``=name`` at the start of a word, which is the program ``name`` found on PATH: ``cp x =guard`` overwrites guard.

A line with one of the first two is not read here at all (:func:`unmodelled`: self-protection refuses it); ``=name``
adds the program's path to what the word names (:func:`equals_paths`). Quotes keep their meaning (zsh's are bash's),
and here-document bodies are data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["equals_paths", "unmodelled"]

#: ``$name`` followed by a modifier (``:h``, ``:s/…/…/``, ``:&``) or a subscript, which bash reads as text.
_PARAMETER_SUFFIX = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9#?$!*@-])(?::[A-Za-z&]|\[)")
#: ``${`` followed by what only zsh reads there: flags ``(…)``, ``=~^+`` before the name, a nested ``${``, and after the
#: name a modifier letter (bash: an offset) or a subscript.
_BRACED = re.compile(r"\$\{(?:[(=~^+]|\$\{|[A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z&]|\[))")
#: ``$`` directly before one of zsh's own expansion flags: ``$=x`` (split), ``$~x`` (glob), ``$^x`` (rc_expand).
_FLAGGED = re.compile(r"\$[=~^][A-Za-z_{]")
_PARAMETERS = (
    (_PARAMETER_SUFFIX, "a modifier or subscript"),
    (_BRACED, "flags, a modifier or a subscript"),
    (_FLAGGED, "an expansion flag"),
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


def unmodelled(line: str) -> str | None:
    """Why zsh may read ``line`` as naming other files than bash does, or None (what zsh reads as bash does)."""
    scan = _Scan(line)
    for text in scan.expanded:
        for pattern, what in _PARAMETERS:
            found = pattern.search(text)
            if found:
                return f"zsh reads {found.group(0)!r} as {what} of a parameter, which bash reads otherwise"
    if scan.group is not None:
        return f"zsh reads the parentheses in {scan.group!r} as a glob (bash: a syntax error)"
    return None


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
