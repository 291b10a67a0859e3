"""A sed script read as GNU sed 4.9 reads it (``compile.c``), proven to only print: an allowlist of commands.

sed is a reading program only as long as its script is: ``w`` and ``W`` write a file, ``s///w``
too, ``e`` and ``s///e`` run the shell, ``r`` and ``R`` read a file the script names. A check
by characters (no ``w`` letter anywhere) is walked around by the places sed reads a letter as
text, and a check by regular expressions misses the places sed reads one as a command, so
this module tokenizes the script the way sed's compiler does — addresses (``N``, ``$``,
``/re/I``, ``\\cREc``, ``first~step``, ``addr,+N``, ``addr,~N``), ``!``, regular expressions
with their bracket expressions (a ``/`` inside ``[…]`` does not end one), ``s`` with any
delimiter and its flags, ``y``, labels, ``{ }``, comments, the text of ``a i c`` — and accepts only
these commands: ``{ } = a c d D g G h H i l n N p P q Q x z F : b t T s y #``, with ``s`` flags
``g p i I m M`` and a number. Refused: ``e``, ``r R w W``, ``v``, ``L``, the ``e`` and ``w`` flags,
and anything sed itself would refuse to compile. Several ``-e`` scripts are one script joined
by newlines (a text that runs to the end of one ``-e`` is text in the next one to sed: read as
commands here, it is only checked more). Standard library only.
"""

from __future__ import annotations

__all__ = ["script_problem"]

_BLANK = " \t"
_SPACE = " \t\n\v\f\r"
_SIMPLE = frozenset("=dDFgGhHnNpPxz")
_REFUSED = {
    "e": "runs a shell command",
    "r": "reads a file",
    "R": "reads a file",
    "w": "writes a file",
    "W": "writes a file",
    "v": "is not modelled",
    "L": "is not modelled",
}


class _Unproven(ValueError):
    pass


class _Reader:
    def __init__(self, text: str) -> None:
        self.s, self.i = text, 0

    def get(self) -> str:
        """``inchar``: the next character, "" at the end."""
        if self.i < len(self.s):
            c = self.s[self.i]
            self.i += 1
            return c
        self.i += 1
        return ""

    def unget(self, c: str) -> None:
        """``savchar``."""
        self.i -= 1

    def nonblank(self) -> str:
        c = self.get()
        while c and c in _BLANK:
            c = self.get()
        return c

    def end_of_command(self) -> None:
        """``read_end_of_cmd``: blanks, then ``}``, ``#``, newline, ``;`` or the end."""
        c = self.nonblank()
        if c in ("}", "#"):
            self.unget(c)
        elif c not in ("", "\n", ";"):
            raise _Unproven(f"extra characters after a command: {c!r}")

    def integer(self, c: str) -> None:
        while c.isdigit() and c.isascii():
            c = self.get()
        self.unget(c)

    def slash(self, delimiter: str, *, regex: bool) -> None:
        """``match_slash``: up to the unescaped ``delimiter`` (bracket expressions skipped in a regular expression)."""
        while True:
            c = self.get()
            if c in ("", "\n"):
                raise _Unproven("an unterminated regular expression or replacement")
            if c == delimiter:
                return
            if c == "\\":
                if self.get() == "":
                    raise _Unproven("an unterminated regular expression or replacement")
            elif c == "[" and regex:
                if self.bracket() != "]":
                    raise _Unproven("an unterminated bracket expression")

    def bracket(self) -> str:
        """``snarf_char_class``: a bracket expression, ``[:alpha:]``, ``[.x.]``, ``[=e=]`` inside it; its closing ``]``."""
        c = self.get()
        if c == "^":
            c = self.get()
        if c == "]":
            c = self.get()
        state, delim = 0, ""
        while True:
            if c in ("", "\n"):
                return c
            if c in ".:=":
                if state == 1:
                    delim, state = c, 2
                    c = self.get()
                    continue
                if state == 2 and c == delim:
                    state = 3
                    c = self.get()
                    continue
            elif c == "[":
                if state == 0:
                    state = 1
                c = self.get()
                continue
            elif c == "]":
                if state in (0, 1):
                    return c
                if state == 3:
                    state = 0
            state &= ~1
            c = self.get()

    def text(self) -> None:
        """``read_text`` after ``a``, ``i`` or ``c``: ``\\`` and a first character (a newline starts the text on the
        next line), or the one-line form; then text up to a newline no backslash escapes, or the end."""
        c = self.nonblank()
        if c == "":
            raise _Unproven("a, i or c with no text")
        if c == "\\":
            if self.get() == "":
                return
        else:
            self.unget(c)
        while True:
            c = self.get()
            if c in ("", "\n"):
                return
            if c == "\\" and self.get() == "":
                return

    def label(self) -> None:
        """``read_label``: blanks, then up to a blank, newline, ``;``, ``}`` or ``#``."""
        c = self.nonblank()
        while c not in ("", "\n", ";", "}", "#") and c not in _BLANK:
            c = self.get()
        self.unget(c)

    def address(self, c: str) -> bool:
        """``compile_address``: whether ``c`` starts one (it is then read)."""
        if c in ("/", "\\"):
            if c == "\\":
                c = self.get()
            if c in ("", "\n", "\\") or not c.isascii():
                raise _Unproven("an address with an odd delimiter")
            self.slash(c, regex=True)
            c = self.nonblank()
            while c in ("I", "M"):
                c = self.nonblank()
            self.unget(c)
            return True
        if c.isdigit() and c.isascii():
            self.integer(c)
            c = self.nonblank()
            if c == "~":
                self.integer(self.nonblank())
            else:
                self.unget(c)
            return True
        if c in ("+", "~"):
            self.integer(self.nonblank())
            return True
        return c == "$"


def script_problem(script: str) -> str | None:
    """Why the sed program ``script`` may write, run or read something other than its input, or None when it only prints."""
    reader = _Reader(script)
    depth = 0
    try:
        while True:
            c = reader.get()
            while c == ";" or (c and c in _SPACE):
                c = reader.get()
            if c == "":
                break
            addressed = reader.address(c)
            if addressed:
                c = reader.nonblank()
                if c == ",":
                    if not reader.address(reader.nonblank()):
                        raise _Unproven("a comma with no second address")
                    c = reader.nonblank()
            if c == "!":
                c = reader.nonblank()
            if c == "#":
                while c not in ("", "\n"):
                    c = reader.get()
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth < 0:
                    raise _Unproven("a } that closes nothing")
                reader.end_of_command()
            elif c in "aic":
                reader.text()
            elif c in _REFUSED:
                return f"the sed command {c!r} {_REFUSED[c]}"
            elif c == ":" or c in "btT":
                reader.label()
            elif c in "qQlL":
                c = reader.nonblank()
                if c.isdigit() and c.isascii():
                    reader.integer(c)
                else:
                    reader.unget(c)
                reader.end_of_command()
            elif c in _SIMPLE:
                reader.end_of_command()
            elif c in "sy":
                delimiter = reader.get()
                if delimiter in ("", "\n", "\\") or not delimiter.isascii():
                    raise _Unproven(f"an {c} command with an odd delimiter")
                reader.slash(delimiter, regex=c == "s")  # s/REGEX/REPLACEMENT/, y/SOURCE/DEST/
                reader.slash(delimiter, regex=False)
                if c == "y":
                    reader.end_of_command()
                elif problem := _substitution_flags(reader):
                    return problem
            else:
                raise _Unproven(f"{c!r} is not a sed command known to only print")
    except _Unproven as exc:
        return f"the sed script is not proven to only print: {exc}"
    return None


def _substitution_flags(reader: _Reader) -> str | None:
    """``mark_subst_opts``: the flags after ``s///`` up to the end of the command."""
    while True:
        c = reader.nonblank()
        if c in ("i", "I", "m", "M", "g", "p"):
            continue
        if c.isdigit() and c.isascii():
            reader.integer(c)
            continue
        if c == "e":
            return "the sed flag s///e runs the pattern space as a shell command"
        if c == "w":
            return "the sed flag s///w writes a file"
        if c in ("}", "#"):
            reader.unget(c)
            return None
        if c in ("", "\n", ";"):
            return None
        if c == "\r" and reader.get() == "\n":
            return None
        raise _Unproven(f"an unknown s flag {c!r}")
