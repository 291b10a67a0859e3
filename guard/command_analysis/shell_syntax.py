"""A small POSIX-shell reader: enough grammar to see every command a line would run.

Why not ``shlex`` alone: it knows quotes but not ``$( )``, backticks, ``$'…'``,
heredocs or operators, and an analyser that cannot see inside those is walked
around by writing ``$(printf 'sudo')``. This reader splits on ``; && || | &`` and
newlines, descends into command and process substitutions (also inside double
quotes and unquoted heredocs), decodes ``$'…'`` escapes, and keeps redirections
apart from arguments. It never executes anything.

It is lenient on purpose: an unterminated quote or substitution runs to the end of
the text instead of failing, so a malformed command is still judged on its content.
Only nesting deeper than :data:`MAX_DEPTH` is refused (:class:`ShellSyntaxError`).
:func:`parse_strict` is the reading a proof may rest on: the same reading, refused
wherever it is not exactly bash's (an unterminated quote, a function definition, an
arithmetic command, a case clause, a ``{name}>`` redirection that assigns, a line
continuation that splits an operator, an extglob group …). Each word keeps its ``raw`` text, quotes and
all, for :mod:`guard.command_analysis.expansion` to expand as bash would.
"""

from __future__ import annotations

import re

from guard.core.record import Record

__all__ = [
    "MAX_DEPTH",
    "Command",
    "Pipeline",
    "Redirect",
    "Script",
    "ShellSyntaxError",
    "Word",
    "parse",
    "parse_strict",
]

MAX_DEPTH = 32

_WORD_END = frozenset(" \t\n;&|<>()")
_REDIRECT = re.compile(r"\d*(&>>|&>|>>|>\||>&|<<<|<<-|<<|<>|<&|>|<)")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_OPERATOR = frozenset(";&|<>()")
#: ``{name}>file``: bash opens the file on a new descriptor and assigns its number to ``name`` (``{PATH}>/dev/null``).
_NAMED_FD = re.compile(r"^\{[^{}]*\}$")
#: Here-document delimiters read exactly: a plain word, quoted whole or escaped at its start.
_DELIMITER = re.compile(r"^(?:\\?[A-Za-z0-9_.-]+|'[A-Za-z0-9_.-]+'|\"[A-Za-z0-9_.-]+\")$")
_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_ANSI_CODED = re.compile(r"x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.")


class ShellSyntaxError(ValueError):
    """The command nests substitutions too deeply to be judged."""


class Word(Record):
    """One shell word after quote removal; expansions are kept as written (``$HOME``).

    ``raw``: the word as typed (quotes, escapes and braces kept); ``dynamic``: a parameter expansion or substitution outside single quotes;
    ``substitutions``: $( ), backticks, <( ), >( ) inside this word; ``process``:
    the whole word is a process substitution <( ) or >( ); ``escapes``: $'…' with
    hex, octal or unicode escapes (a classic disguise); ``glob``: an unquoted ``*``, ``?``
    or ``[`` (the shell matches the word against file names); ``tilde``: the word starts
    with an unquoted ``~``, which the shell expands to a home folder (a quoted one is text).
    """

    __slots__ = ("text", "dynamic", "substitutions", "process", "escapes", "glob", "tilde", "raw")

    def __init__(
        self,
        text: str,
        dynamic: bool = False,
        substitutions: tuple[Script, ...] = (),
        process: bool = False,
        escapes: bool = False,
        glob: bool = False,
        tilde: bool = False,
        raw: str | None = None,
    ) -> None:
        self.text, self.dynamic, self.substitutions, self.process, self.escapes = (
            text,
            dynamic,
            substitutions,
            process,
            escapes,
        )
        self.glob, self.tilde, self.raw = glob, tilde, text if raw is None else raw


class Redirect(Record):
    """``op`` (">", ">>", "&>", "<", "<<", "<<<", …) on ``target``; ``body`` is heredoc text, dynamic when it expands."""

    __slots__ = ("op", "target", "body")

    def __init__(self, op: str, target: Word, body: Word | None = None) -> None:
        self.op, self.target, self.body = op, target, body


class Command(Record):
    """A simple command: leading assignments, its words, its redirections."""

    __slots__ = ("assignments", "words", "redirects")

    def __init__(
        self,
        assignments: list[Word] | None = None,
        words: list[Word] | None = None,
        redirects: list[Redirect] | None = None,
    ) -> None:
        self.assignments: list[Word] = [] if assignments is None else assignments
        self.words: list[Word] = [] if words is None else words
        self.redirects: list[Redirect] = [] if redirects is None else redirects

    def empty(self) -> bool:
        return not (self.assignments or self.words or self.redirects)


class Pipeline(Record):
    __slots__ = ("commands",)

    def __init__(self, commands: list[Command] | None = None) -> None:
        self.commands: list[Command] = [] if commands is None else commands


class Script(Record):
    __slots__ = ("pipelines",)

    def __init__(self, pipelines: list[Pipeline] | None = None) -> None:
        self.pipelines: list[Pipeline] = [] if pipelines is None else pipelines


def parse(text: str) -> Script:
    """Read ``text`` as a shell script. Raises :class:`ShellSyntaxError` only for absurd nesting."""
    return _Reader(text, depth=0).script(closer=None)


def parse_strict(text: str) -> Script:
    """:func:`parse`, but what this reader does not read exactly as bash does raises :class:`ShellSyntaxError`: an
    unterminated quote, substitution or ``${``, and each construct listed in the module's docstring.

    What the shell itself would refuse to run, or would run otherwise than read here, is never proven safe
    (:mod:`guard.protection.readonly`).
    """
    reader = _Reader(text, depth=0)
    script = reader.script(closer=None)
    if reader.unterminated:
        raise ShellSyntaxError(f"unterminated {reader.unterminated[0]}")
    if reader.unmodelled:
        raise ShellSyntaxError(reader.unmodelled[0])
    return script


class _Heredoc:
    __slots__ = ("redirect", "delimiter", "strip_tabs", "quoted")

    def __init__(self, redirect: Redirect, delimiter: str, strip_tabs: bool, quoted: bool) -> None:
        self.redirect, self.delimiter, self.strip_tabs, self.quoted = redirect, delimiter, strip_tabs, quoted

    def ends_at(self, line: str) -> bool:
        return (line.lstrip("\t") if self.strip_tabs else line) == self.delimiter


class _Reader:
    def __init__(self, text: str, *, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ShellSyntaxError(f"substitutions nested more than {MAX_DEPTH} deep")
        self.s = text
        self.i = 0
        self.depth = depth
        self.heredocs: list[_Heredoc] = []
        #: What ran to the end of the text unclosed (shared with child readers): the lenient reading went on anyway.
        self.unterminated: list[str] = []
        #: What was read otherwise than bash reads it (shared with child readers): :func:`parse_strict` refuses it.
        self.unmodelled: list[str] = []

    def peek(self, ahead: int = 0) -> str:
        j = self.i + ahead
        return self.s[j] if j < len(self.s) else ""

    def child(self, text: str) -> _Reader:
        reader = _Reader(text, depth=self.depth + 1)
        reader.unterminated = self.unterminated
        reader.unmodelled = self.unmodelled
        return reader

    # --- grammar -------------------------------------------------------------------------

    def script(self, closer: str | None) -> Script:
        script = Script()
        pipeline = Pipeline()
        command = Command()

        def end_command() -> None:
            nonlocal command
            if not command.empty():
                pipeline.commands.append(command)
            command = Command()

        def end_pipeline() -> None:
            nonlocal pipeline
            end_command()
            if pipeline.commands:
                script.pipelines.append(pipeline)
            pipeline = Pipeline()

        while True:
            self.skip_blanks()
            c = self.peek()
            if not c:
                if closer is not None:
                    self.unterminated.append(f"substitution without {closer}")
                break
            if closer is not None and c == closer:
                self.i += 1
                break
            redirect = _REDIRECT.match(self.s, self.i) if c in "<>&" or c.isdigit() else None
            if redirect is not None and redirect.group(1) in "<>" and self.peek(len(redirect.group())) == "(":
                redirect = None  # <( … ) and >( … ) are process substitutions, i.e. words
            if c in _OPERATOR and self.s.startswith("\\\n", self.i + 1) and self.peek(3) in _OPERATOR:
                self.unmodelled.append("a line continuation inside an operator")
            if c == "#":
                self.skip_comment()
            elif c == "\n":
                self.i += 1
                end_pipeline()
                self.read_heredoc_bodies()
            elif redirect is not None:
                if (
                    command.words
                    and self.i
                    and self.s[self.i - 1] not in " \t\n"
                    and _NAMED_FD.match(command.words[-1].raw)
                ):
                    self.unmodelled.append(
                        f"{command.words[-1].raw}{redirect.group()} assigns a file descriptor to a variable"
                    )
                self.i = redirect.end()
                self.redirect(redirect.group(1), command)
            elif c == "|" and self.peek(1) != "|":
                self.i += 2 if self.peek(1) == "&" else 1
                end_command()
            elif c in ";&|":
                pair = self.s[self.i : self.i + 2]
                if pair in (";;", ";&"):
                    self.unmodelled.append("a case clause")
                self.i += 2 if pair in ("&&", "||", ";;", ";&") else 1
                end_pipeline()
            elif c == "(":
                if not command.empty():
                    self.unmodelled.append(
                        f"{command.words[-1].raw if command.words else 'a word'} ( … ): a function definition"
                    )
                elif self.peek(1) == "(":
                    self.unmodelled.append("an arithmetic command (( … ))")
                self.i += 1
                end_pipeline()
                script.pipelines.extend(self.nested(")").pipelines)
            elif c == ")":  # stray closer (e.g. a case pattern): a separator
                self.unmodelled.append("a ) that closes nothing")
                self.i += 1
                end_pipeline()
            else:
                if any(r.op in ("&>", "&>>") for r in command.redirects):
                    self.unmodelled.append(
                        "a word after &> (sh reads &> as & and >: the words after its target are another command there)"
                    )
                word = self.word()
                if not command.words and _ASSIGNMENT.match(word.text):
                    command.assignments.append(word)
                else:
                    command.words.append(word)
        end_pipeline()
        return script

    def nested(self, closer: str) -> Script:
        """A substitution or subshell read from the same text, one level deeper."""
        if self.depth + 1 > MAX_DEPTH:
            raise ShellSyntaxError(f"substitutions nested more than {MAX_DEPTH} deep")
        self.depth += 1
        try:
            return self.script(closer)
        finally:
            self.depth -= 1

    def redirect(self, op: str, command: Command) -> None:
        self.skip_blanks(newlines=False)
        start = self.i
        target = self.word()
        redirect = Redirect(op, target)
        command.redirects.append(redirect)
        if not target.raw or target.raw.startswith("#"):
            self.unmodelled.append(f"{op} with no word after it")
        if op in ("<<", "<<-"):
            raw = self.s[start : self.i]
            if not _DELIMITER.match(raw):
                self.unmodelled.append(f"the here-document delimiter {raw!r}")
            quoted = any(q in raw for q in "'\"\\")
            self.heredocs.append(_Heredoc(redirect, target.text, op == "<<-", quoted))

    def read_heredoc_bodies(self) -> None:
        for doc in self.heredocs:
            lines: list[str] = []
            carried: str | None = None  # an unquoted body's line so far, when its last line ended in a continuation
            while self.i < len(self.s):
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                line = self.s[self.i : end]
                self.i = end + 1
                if carried is None and doc.ends_at(line):
                    break
                if carried is not None:
                    line = carried + line
                    if doc.ends_at(line):  # read as bash reads it, which runs the lines after it
                        self.unmodelled.append(
                            f"a line continuation spells the here-document's delimiter {doc.delimiter!r}: bash ends it "
                            "there, sh does not"
                        )
                        break
                carried = None
                if not doc.quoted and (len(line) - len(line.rstrip("\\"))) % 2:
                    carried = line[:-1]  # bash and sh join it to the next line, as they join $\<newline>( into $(
                    continue
                lines.append(line)
            if carried is not None:
                lines.append(carried)
            body = "\n".join(lines)
            doc.redirect.body = Word(body) if doc.quoted else self.child(body).expanded_text()
        self.heredocs.clear()

    # --- words ---------------------------------------------------------------------------

    def word(self) -> Word:
        start = self.i
        if self.peek() in "<>" and self.peek(1) == "(":
            self.i += 2
            sub = self.nested(")")
            return Word(self.s[start : self.i], dynamic=True, substitutions=(sub,), process=True)
        out = _WordBuilder()
        out.tilde = self.peek() == "~"
        while self.i < len(self.s) and self.s[self.i] not in _WORD_END:
            c = self.s[self.i]
            if c == "$":
                self.join_after_dollar()
            if c == "\\":
                nxt = self.peek(1)
                self.i += 2
                if nxt != "\n":
                    out.parts.append(nxt)
                elif self.peek() in _OPERATOR:
                    self.unmodelled.append("a line continuation between a word and an operator")
            elif c == "'":
                out.parts.append(self.until("'", start=self.i + 1))
            elif c == '"':
                self.i += 1
                self.double_quoted(out, closer='"')
            elif c == "$" and self.peek(1) == "'":
                self.ansi_c(out)
            elif c == "$" and self.peek(1) == '"':
                self.i += 2
                self.double_quoted(out, closer='"')
            elif c in "?*+@!" and self.peek(1) == "(":
                self.extglob(out)
            else:
                out.glob = out.glob or c in "*?["
                self.expansion_or_char(out, c)
        return out.build(self.s[start : self.i])

    def extglob(self, out: _WordBuilder) -> None:
        """``@(a|b)`` and kin: one word with its group under ``shopt -s extglob``, which an earlier line of the script may
        set; without it, a syntax error that runs nothing. Read as the word it may be, never proven (the lanes)."""
        start, level = self.i, 0
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "\\":
                self.i += 1
            elif c == "(":
                level += 1
            elif c == ")":
                level -= 1
                if level == 0:
                    break
            self.i += 1
        else:
            self.unterminated.append("extglob group (")
        self.i += 1
        out.parts.append(self.s[start : self.i])
        out.glob = True
        self.unmodelled.append(f"{self.s[start : self.i]}: an extglob pattern")

    def expanded_text(self) -> Word:
        """The whole text read as if double-quoted (unquoted heredoc bodies, ``${…}`` insides)."""
        out = _WordBuilder()
        self.double_quoted(out, closer=None)
        return out.build()

    def until(self, closer: str, *, start: int) -> str:
        end = self.s.find(closer, start)
        if end < 0:
            self.unterminated.append(f"quote {closer}")
            end = len(self.s)
        self.i = end + 1
        return self.s[start:end]

    def double_quoted(self, out: _WordBuilder, *, closer: str | None) -> None:
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == closer:
                self.i += 1
                return
            if c == "\\" and self.peek(1) in '$`"\\\n':
                if self.peek(1) != "\n":
                    out.parts.append(self.peek(1))
                self.i += 2
            else:
                self.expansion_or_char(out, c)
        if closer is not None:
            self.unterminated.append(f"quote {closer}")

    def join_after_dollar(self) -> None:
        """At a ``$``: drop the line continuations after it, as the shell's input reader does before it reads the ``$``
        with what follows (``"$\\<newline>(cmd)"`` runs cmd; to bash, ``$\\<newline>'…'`` is ``$'…'``), and note that
        the line is not read exactly."""
        end = self.i + 1
        while self.s.startswith("\\\n", end):
            end += 2
        if end > self.i + 1:
            self.unmodelled.append("a line continuation after $ (the shell reads the $ with what follows it)")
            self.s = self.s[: self.i + 1] + self.s[end:]

    def expansion_or_char(self, out: _WordBuilder, c: str) -> None:
        """``$…`` and backticks expand (outside single quotes); any other character is itself."""
        if c == "$":
            self.dollar(out)
        elif c == "`":
            self.backtick(out)
        else:
            out.parts.append(c)
            self.i += 1

    def dollar(self, out: _WordBuilder) -> None:
        self.join_after_dollar()
        start = self.i
        nxt = self.peek(1)
        if nxt == "(" and self.peek(2) == "(":  # $(( arithmetic )) may hold substitutions
            self.i += 3
            inner = self.balanced("(", ")", depth=2)
            out.absorb(self.child(inner).expanded_text())
        elif nxt == "(":
            self.i += 2
            out.substitutions.append(self.nested(")"))
        elif nxt == "{":
            self.i += 2
            inner = self.balanced("{", "}", depth=1)
            out.absorb(self.child(inner).expanded_text())
        else:
            match = _PARAMETER.match(self.s, self.i + 1)
            if match is None:
                out.parts.append("$")
                self.i += 1
                return
            self.i = match.end()
        out.dynamic = True
        out.parts.append(self.s[start : self.i])

    def balanced(self, opener: str, closer: str, *, depth: int) -> str:
        """Text up to the closer that balances ``depth`` open brackets (quotes respected)."""
        start = self.i
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c in "'\"":
                self.until(c, start=self.i + 1)
                continue
            self.i += 1
            if c == opener:
                depth += 1
            elif c == closer:
                depth -= 1
                if depth == 0:
                    return self.s[start : self.i - 1]
        self.unterminated.append(f"{opener} without {closer}")
        return self.s[start:]

    def backtick(self, out: _WordBuilder) -> None:
        start = self.i
        self.i += 1
        chars: list[str] = []
        while self.i < len(self.s) and self.s[self.i] != "`":
            if self.s[self.i] == "\\" and self.peek(1) in "`$\\":
                chars.append(self.peek(1))
                self.i += 2
            else:
                chars.append(self.s[self.i])
                self.i += 1
        self.i += 1
        out.substitutions.append(self.child("".join(chars)).script(closer=None))
        out.dynamic = True
        out.parts.append(self.s[start : self.i])

    def ansi_c(self, out: _WordBuilder) -> None:
        """``$'…'``: decode escapes so ``$'\\x73udo'`` is seen as ``sudo``."""
        self.i += 2
        while self.i < len(self.s) and self.s[self.i] != "'":
            c = self.s[self.i]
            if c != "\\":
                out.parts.append(c)
                self.i += 1
                continue
            esc = self.peek(1)
            coded = _ANSI_CODED.match(self.s, self.i + 1)
            if esc in _ANSI_SIMPLE:
                out.parts.append(_ANSI_SIMPLE[esc])
                self.i += 2
            elif coded is not None:
                out.parts.append(_decode_escape(coded.group()))
                out.escapes = True
                self.i = coded.end()
            else:
                out.parts.append(esc)
                self.i += 2
        if self.i >= len(self.s):
            self.unterminated.append("quote $'")
        self.i += 1

    # --- blanks and comments -------------------------------------------------------------

    def skip_blanks(self, *, newlines: bool = False) -> None:
        while self.i < len(self.s):
            if self.s[self.i] in " \t" or (newlines and self.s[self.i] == "\n"):
                self.i += 1
            elif self.s.startswith("\\\n", self.i):
                self.i += 2
            else:
                return

    def skip_comment(self) -> None:
        end = self.s.find("\n", self.i)
        self.i = len(self.s) if end < 0 else end


def _decode_escape(code: str) -> str:
    if code[0] in "xuU":
        return chr(min(int(code[1:], 16), 0x10FFFF))
    if code[0] == "c":
        return chr(ord(code[1]) & 0x1F)
    return chr(int(code, 8) & 0xFF)


class _WordBuilder:
    __slots__ = ("parts", "dynamic", "substitutions", "escapes", "glob", "tilde")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.dynamic = False
        self.substitutions: list[Script] = []
        self.escapes = False
        self.glob = False
        self.tilde = False

    def absorb(self, inner: Word) -> None:
        """Keep what an expansion's inside contains (substitutions in ``${x:-$(cmd)}``)."""
        self.substitutions.extend(inner.substitutions)
        self.escapes = self.escapes or inner.escapes

    def build(self, raw: str | None = None) -> Word:
        return Word(
            "".join(self.parts),
            self.dynamic,
            tuple(self.substitutions),
            False,
            self.escapes,
            self.glob,
            self.tilde,
            raw,
        )
