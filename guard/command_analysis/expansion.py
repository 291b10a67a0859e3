"""The words bash passes to a program, from a word as typed: its expansions performed exactly, or a refusal.

The read-only prover must prove what runs, not what was typed: ``sort {-o,/tmp/x} f``
is one word on the command line and ``sort -o /tmp/x f`` to the program. This module
performs, on the raw text of one word (quotes and all, as the shell reader cut it),
the expansions bash 5.2 performs, in its order, and says :class:`NotModelled` for any
it cannot know at proof time:

* **brace expansion**, ported from bash's ``braces.c`` (comma lists, nesting, ``{1..9}``,
  ``{a..e}``, ``{01..10}``, ``{1..9..2}``, what is *not* one: ``{a}``, ``{}``, quoted or
  escaped braces, ``${``), bounded in size;
* **tilde expansion** of ``~`` and ``~/…`` at a word's start from ``HOME`` in the hook's
  environment; ``~user``, ``~+``, ``~-`` and a ``~`` after ``=`` or ``:`` of an
  assignment-like argument (``x=~``, which bash expands) are not modelled;
* parameter, command and arithmetic expansion, process substitution and ``$"…"``: their
  value is not known at proof time (and reading the environment can leak its secrets), so
  a word holding one is not modelled. A ``$`` that bash keeps as text (``'a$'``, ``"$"``,
  ``a$``, ``$.``) is text; ``$'…'`` is decoded when it holds only the letter escapes
  (``$'\\t'``), not a numeric one (``$'\\x2f'`` hides the text it makes);
* **pathname expansion**: a word with an unquoted ``*``, ``?`` or ``[`` stays a *pattern*
  (:attr:`Field.pattern`): the names it will match are not known (the agent can create a
  file named ``-delete`` or ``--output=x``), only the literal text they all start with;
* **quote removal**.

Word splitting only splits the results of expansions this module refuses, so there is
none. Standard library only: the prover runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from guard.core.record import FrozenRecord

__all__ = ["MAX_FIELDS", "Field", "NotModelled", "ansi_c_quoted", "expand_word", "herestring_text"]

#: More words than this from one word's brace expansion is not modelled (``{1..99999999}``).
MAX_FIELDS = 1024
#: More text than this from one word's brace expansion is not modelled.
_MAX_TEXT = 256 * 1024
#: A longer word, or one with more braces, is not brace-expanded here (finding each brace's match is quadratic).
_MAX_BRACED, _MAX_BRACES = 2048, 16
_INTMAX = 2**63 - 1
#: After ``$``, the characters that start an expansion (a name, a special parameter, ``{ ( [``, ``'`` and ``"``).
_EXPANDS = re.compile(r"[A-Za-z0-9_@*#?$!{(\['\"-]")
#: ``$'…'`` escapes decoded to one known character; any other escape (``\x2f``, ``\101``, ``\u…``, ``\cA``) is refused.
_ANSI_LETTERS = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
#: What bash's parser reads as an assignment (``name=``, ``name+=``, ``name[…]=``): it tilde-expands after ``=`` and ``:``.
_ASSIGNMENT_LIKE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\[|\+?=)")


class NotModelled(ValueError):
    """The word holds an expansion whose result is not known at proof time, or one bash performs differently."""


class Field(FrozenRecord):
    """One word the program receives. ``text``: after every expansion and quote removal.

    ``pattern``: it holds an unquoted ``*``, ``?`` or ``[``, so bash replaces it with the names that match (any number of
    words, each starting with ``prefix``, the text before the first unquoted glob character), or keeps it as ``text``.
    """

    __slots__ = ("text", "pattern", "prefix")
    text: str
    pattern: bool
    prefix: str

    def __init__(self, text: str, pattern: bool = False, prefix: str | None = None) -> None:
        self._assign({"text": text, "pattern": pattern, "prefix": text if prefix is None else prefix})


def expand_word(raw: str, env: Mapping[str, str], *, braces: bool = True) -> tuple[Field, ...]:
    """The words bash makes of the word typed as ``raw`` (an argument; a redirection's target too, which bash refuses to
    run when it makes more than one). ``env``: the hook's environment (``HOME`` for ``~``). Raises :class:`NotModelled`."""
    _check_dollars(raw)
    if _ASSIGNMENT_LIKE.match(raw) and "~" in raw.partition("=")[2]:
        raise NotModelled(f"{raw!r}: bash expands a ~ after = or : in a word shaped like an assignment")
    pieces = _brace_expand(raw) if braces and "{" in raw else [raw]
    fields = ((piece, _field(piece, env)) for piece in pieces)
    return tuple(
        field for piece, field in fields if field.text or "'" in piece or '"' in piece
    )  # an unquoted empty word is dropped


def herestring_text(raw: str, env: Mapping[str, str]) -> str:
    """The text a here-string (``<<< word``) feeds: tilde expansion and quote removal, no braces, no globbing."""
    _check_dollars(raw)
    return _field(raw, env, glob=False).text


def ansi_c_quoted(raw: str) -> bool:
    """Whether the word holds bash's ``$'…'`` quoting, which POSIX sh (dash) reads as a ``$`` and a single-quoted string
    that ends at the first ``'``: with a ``\\'`` inside, the rest of the line is read otherwise."""
    i, n, quote = 0, len(raw), ""
    while i < n:
        c = raw[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\":
            i += 1
        elif c == '"':
            quote = "" if quote == '"' else '"'
        elif c == "'" and not quote:
            quote = "'"
        elif c == "$" and raw[i + 1 : i + 2] == "'" and not quote:
            return True
        i += 1
    return False


# --- parameter, command and arithmetic expansion: refused ------------------------------------------------


def _check_dollars(raw: str) -> None:
    """Refuse a word that expands at run time: ``$name``, ``${…}``, ``$( )``, ``$(( ))``, ``$[ ]``, backticks, ``$"…"``,
    process substitution. A ``$`` that bash keeps as a character passes."""
    i, n, quote = 0, len(raw), ""
    while i < n:
        c = raw[i]
        if quote == "'":
            if c == "'":
                quote = ""
            i += 1
            continue
        if c == "\\":
            i += 2
            continue
        if c == "`":
            raise NotModelled(f"{raw!r} runs a command to build its text")
        if c in "<>" and i + 1 < n and raw[i + 1] == "(" and not quote:
            raise NotModelled(f"{raw!r} runs a command to build its text")
        if c == '"':
            quote = "" if quote == '"' else '"'
        elif c == "'" and not quote:
            quote = "'"
        elif c == "$":
            nxt = raw[i + 1] if i + 1 < n else ""
            if nxt == "'" and not quote:
                i = _ansi_c_end(raw, i + 2)
                continue
            if nxt and _EXPANDS.match(nxt) and not (quote and nxt in "'\""):
                raise NotModelled(f"{raw!r} expands ${nxt}… at run time: its value is not known here")
        i += 1


def _ansi_c_end(raw: str, i: int) -> int:
    """The index after the ``'`` closing a ``$'…'`` whose text starts at ``i``."""
    while i < len(raw) and raw[i] != "'":
        i += 2 if raw[i] == "\\" else 1
    return i + 1


# --- tilde expansion, pathname patterns and quote removal ------------------------------------------------


def _field(raw: str, env: Mapping[str, str], *, glob: bool = True) -> Field:
    """One word after brace expansion: its tilde prefix expanded, quotes removed, glob characters noted."""
    chars: list[str] = []
    prefix: int | None = None  # where the first unquoted glob character is, in the text
    bracket: int | None = None  # where the first unquoted [ is
    i, n = 0, len(raw)
    if raw.startswith("~"):
        end = raw.find("/")
        tilde = raw if end < 0 else raw[:end]
        if not any(q in tilde for q in "\\'\""):  # a quoted character in the prefix leaves the ~ as it is
            if tilde != "~":
                raise NotModelled(f"{raw!r}: {tilde} names another user's or the directory stack's folder")
            home = env.get("HOME")
            if not home:
                raise NotModelled(f"{raw!r}: ~ with no HOME in the environment")
            chars.append(home)
            i = 1
    while i < n:
        c = raw[i]
        if c == "'":
            end = raw.find("'", i + 1)
            if end < 0:
                raise NotModelled(f"{raw!r} has an unterminated quote")
            chars.append(raw[i + 1 : end])
            i = end + 1
        elif c == '"':
            i = _double_quoted(raw, i + 1, chars)
        elif c == "\\":
            if i + 1 == n:
                chars.append(c)  # a backslash ending the text stays
            elif raw[i + 1] != "\n":
                chars.append(raw[i + 1])
            i += 2
        elif c == "$" and i + 1 < n and raw[i + 1] == "'":
            i = _ansi_c(raw, i + 2, chars)
        else:
            if glob and c in "*?" and prefix is None:
                prefix = len("".join(chars))
            elif glob and c == "[" and bracket is None:
                bracket = len("".join(chars))
            elif glob and c == "]" and bracket is not None and prefix is None:
                prefix = bracket  # bash globs a word with [ only when an unquoted ] follows it
            chars.append(c)
            i += 1
    text = "".join(chars)
    if bracket is not None and prefix is not None:
        prefix = min(prefix, bracket) if "]" in text[bracket:] else prefix
    return Field(text, True, text[:prefix]) if prefix is not None else Field(text)


def _double_quoted(raw: str, i: int, chars: list[str]) -> int:
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == '"':
            return i + 1
        if c == "\\" and i + 1 < n and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                chars.append(raw[i + 1])
            i += 2
            continue
        chars.append(c)
        i += 1
    raise NotModelled(f"{raw!r} has an unterminated quote")


def _ansi_c(raw: str, i: int, chars: list[str]) -> int:
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == "'":
            return i + 1
        if c == "\\":
            esc = raw[i + 1] if i + 1 < n else ""
            if esc not in _ANSI_LETTERS:
                raise NotModelled(f"{raw!r} hides text behind $'\\{esc}…' escapes")
            chars.append(_ANSI_LETTERS[esc])
            i += 2
            continue
        chars.append(c)
        i += 1
    raise NotModelled(f"{raw!r} has an unterminated quote")


# --- brace expansion: bash 5.2's braces.c ------------------------------------------------------------------


class _Size:
    """What one word's brace expansion has produced so far, against :data:`MAX_FIELDS` and the text bound."""

    def __init__(self) -> None:
        self.text = 0

    def check(self, words: list[str]) -> list[str]:
        if len(words) > MAX_FIELDS:
            raise NotModelled(f"brace expansion makes more than {MAX_FIELDS} words")
        self.text += sum(map(len, words))
        if self.text > _MAX_TEXT:
            raise NotModelled("brace expansion makes too much text")
        return words


def _brace_expand(raw: str) -> list[str]:
    if len(raw) > _MAX_BRACED or raw.count("{") > _MAX_BRACES:
        raise NotModelled(f"a word of {len(raw)} characters with {raw.count('{')} braces: more than is expanded here")
    if "$'" in raw:
        raise NotModelled(f"{raw!r}: braces beside $'…' (bash's brace expansion reads that quote differently)")
    return _expand(raw, _Size())


def _expand(text: str, size: _Size) -> list[str]:
    """``brace_expand``: the preamble, the first valid ``{…}`` expanded, the postamble expanded, concatenated."""
    n = len(text)
    i = 0
    found = ""
    while True:  # the first '{' that begins a brace expression with a matching '}'
        i, found = _gobble(text, i, "{")
        if not found:
            break
        j, closer = _gobble(text, i + 1, "}")
        if closer:
            break
        i += 1
        found = ""
    if found != "{":
        return [text]
    preamble = text[:i]
    start = i + 1
    i, closer = _gobble(text, start, "}")
    if not closer:
        return [text]
    amble = text[start:i]
    tack: list[str]
    if not _has_separator(amble):
        sequence = _sequence(amble, size)
        if sequence is not None:
            tack = sequence
        elif i + 1 < n:
            tack = ["{" + amble + "}"]
        else:
            return [text]
    else:
        tack = _expand_amble(amble, size)
    result = size.check([preamble + t for t in tack])
    postamble = text[i + 1 :]
    if postamble:
        result = size.check([r + t for r in result for t in _expand(postamble, size)])
    return result


def _has_separator(amble: str) -> bool:
    """Whether ``amble`` holds a ',' not escaped by a backslash (bash does not look at quotes here)."""
    j = 0
    while j < len(amble):
        if amble[j] == "\\":
            j += 2
            continue
        if amble[j] == ",":
            return True
        j += 1
    return False


def _expand_amble(amble: str, size: _Size) -> list[str]:
    result: list[str] = []
    start = i = 0
    while True:
        i, found = _gobble(amble, i, ",")
        result += _expand(amble[start:i], size)
        size.check(result)
        if not found:
            return result
        i += 1
        start = i


def _gobble(text: str, i: int, satisfy: str) -> tuple[int, str]:
    """``brace_gobbler``: from ``i``, the index of the first ``satisfy`` outside quotes, escapes, ``${`` and inner braces
    (for ``}``, only once a ',' or '..' was seen at this level), and that character, or (len, "")."""
    level = 0
    commas = 0 if satisfy == "}" else 1
    n = len(text)
    while True:
        found = _GOBBLED.search(text, i)
        if found is None:
            return n, ""
        i = found.start()
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "$":
            if i + 1 < n and text[i + 1] == "{":
                i += 2
                level += 1
            else:
                i += 1
            continue
        if c in "\"'`":
            closer = _CLOSING[c].search(text, i + 1)
            if closer is None:
                return n, ""
            i = closer.end()
            continue
        if c == satisfy and level == 0 and commas > 0:
            before = text[i - 1] if i else ""
            after = text[i + 1] if i + 1 < n else ""
            if c == "{" and (not i or before in " \t\n") and (after in ("", " ", "\t", "\n", "}")):
                i += 1  # a '{' standing alone, or '{}' after a blank, is not a brace expression
                continue
            return i, c
        if c == "{":
            level += 1
        elif c == "}" and level:
            level -= 1
        elif satisfy == "}" and c == "," and level == 0:
            commas += 1
        elif satisfy == "}" and text.startswith("..", i) and (i + 2 >= n or text[i + 2] != satisfy) and level == 0:
            commas += 1
        i += 1


#: The characters brace_gobbler acts on; the rest are skipped in one step.
_GOBBLED = re.compile(r"[\\$\"'`{},.]")
#: The end of a quoted run: for double quotes and backticks a backslash escapes the next character.
_CLOSING = {
    "'": re.compile(r"'"),
    '"': re.compile(r'(?:[^"\\]|\\.)*"', re.S),
    "`": re.compile(r"(?:[^`\\]|\\.)*`", re.S),
}


_NUMBER = re.compile(r"^[ \t\n]*([+-]?[0-9]+)[ \t\n]*$")


def _legal_number(text: str) -> int | None:
    match = _NUMBER.match(text)
    if match is None:
        return None
    value = int(match.group(1))
    return value if -_INTMAX - 1 <= value <= _INTMAX else None


def _sequence(amble: str, size: _Size) -> list[str] | None:
    """``expand_seqterm``: ``{x..y[..incr]}`` of integers (zero-padded when either end is) or of single letters."""
    lhs, sep, rhs = amble.partition("..")
    if not sep or not lhs or not rhs:
        return None
    left = _legal_number(lhs)
    left_type = "int" if left is not None else ("char" if len(lhs) == 1 and lhs.isascii() and lhs.isalpha() else "")
    match = (
        re.match(r"^([+-]?[0-9]+)(\.\.(.*))?$", rhs)
        if rhs[0].isdigit() or (rhs[0] in "+-" and rhs[1:2].isdigit())
        else None
    )
    increment_text: str | None
    if match is not None:
        right_type, right_text, increment_text = "int", match.group(1), match.group(3)
    elif rhs[0].isascii() and rhs[0].isalpha() and (len(rhs) == 1 or rhs[1] == "."):
        right_type, right_text = "char", rhs[0]
        rest = rhs[1:]
        if rest and not rest.startswith(".."):
            return None
        increment_text = rest[2:] if rest else None
    else:
        return None
    increment = 1
    if increment_text is not None:
        if not re.fullmatch(r"[+-]?[0-9]+", increment_text):
            return None  # bash needs digits after the second '..' (an empty one is no sequence)
        increment = int(increment_text)
        if abs(increment) > _INTMAX:
            return None
    if left_type != right_type or not left_type:
        return None
    if left_type == "char":
        a, b = ord(lhs), ord(right_text)
        if lhs.islower() != right_text.islower():
            raise NotModelled(
                f"{{{amble}}}: a letter sequence across cases makes punctuation (bash's own reading of it)"
            )
        return size.check([chr(x) for x in _steps(a, b, increment)])
    right = int(right_text)
    if abs(right) > _INTMAX or left is None:
        return None
    width = 0
    lhs_text = lhs.strip(" \t\n")
    zero = (
        (len(lhs) > 1 and lhs[0] == "0")
        or (len(lhs) > 2 and lhs[:2] == "-0")
        or (len(right_text) > 1 and right_text[0] == "0")
        or (len(right_text) > 2 and right_text[:2] == "-0")
    )
    if zero:
        width = max(len(lhs), len(right_text))
    if lhs_text != lhs:
        raise NotModelled(f"{{{amble}}}: blanks inside a sequence")
    if left < -(2**31) or left >= 2**31 or right < -(2**31) or right >= 2**31:
        raise NotModelled(f"{{{amble}}}: a sequence beyond a C int")
    return size.check([f"{x:0{width}d}" if zero else str(x) for x in _steps(left, right, increment)])


def _steps(start: int, end: int, increment: int) -> list[int]:
    """``mkseq``: from ``start`` towards ``end`` by ``|increment|`` (0 counts as 1), ``start`` at least once."""
    step = abs(increment) or 1
    count = abs(end - start) // step + 1
    if count > MAX_FIELDS:
        raise NotModelled(f"brace expansion makes more than {MAX_FIELDS} words")
    sign = 1 if end >= start else -1
    return [start + sign * step * k for k in range(count)]
