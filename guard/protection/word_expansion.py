"""Bash's parameter and brace expansion of a word, as self-protection reads it: every text the word may stand for.

:mod:`guard.protection.naming` turns each word of a call into the paths it can name; this module expands its
``$NAME``, ``${NAME}``, ``${NAME:-default}``, ``${NAME:+word}`` from what the line assigned and the hook's environment,
computes ``${x#…}``, ``${x%…}``, ``${x/…}``, ``${x:1:2}`` and ``${x^^}`` of a known value, and performs brace
expansion (``guard.yam{l,}``, ``{1..9}``). What it does not compute stands for any text
(:data:`guard.protection.naming.UNKNOWN`); braces past :data:`~guard.protection.naming.LIMITS` become a ``*`` glob.
Unlike :mod:`guard.command_analysis.expansion`, the read-only prover's exact expansion that refuses what it cannot know,
this reading may only widen what a word names. Loaded only for a word holding ``$`` or braces. Standard library only:
it runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping

from guard.protection.naming import LIMITS, UNKNOWN, value_of

__all__ = ["braces", "expand_vars"]


def expand_vars(text: str, env: Mapping[str, str], assigned: Mapping[str, str], depth: int = 0) -> str:
    """``$NAME``, ``${NAME}``, ``${NAME:-default}`` / ``${NAME-default}`` from ``assigned`` then ``env``; unset is empty."""
    if "$" not in text or depth > 4:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c != "$" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        if text[i + 1] == "{":
            end, level, j = -1, 1, i + 2
            while j < n:  # the matching brace (defaults may nest ${…})
                if text[j] == "{":
                    level += 1
                elif text[j] == "}":
                    level -= 1
                    if level == 0:
                        end = j
                        break
                j += 1
            if end < 0:
                out.append(text[i:])
                break
            inner = text[i + 2 : end]
            k = 0
            while k < len(inner) and (inner[k].isalnum() or inner[k] == "_"):
                k += 1
            name, rest = inner[:k], inner[k:]
            value = value_of(name, env, assigned)
            unset = value is None or (not value and rest[:1] == ":")
            word = rest[2:] if rest[:1] == ":" else rest[1:]
            if rest[:2] in (":-", ":=") or rest[:1] in ("-", "="):
                value = expand_vars(word, env, assigned, depth + 1) if unset else value
            elif rest[:2] == ":+" or rest[:1] == "+":  # the word when set: ${HOME:+/} is /
                value = "" if unset else expand_vars(word, env, assigned, depth + 1)
            elif not name or rest[:2] not in ("", ":?") and rest[:1] != "?":
                # ${x#…}, ${x%…}, ${x/…}, ${x:1:2}, ${x^^} of a known value are computed; ${#x}, ${!x} and the rest are
                # a value guard does not compute
                known = value is not None and UNKNOWN not in value and bool(name)
                value = (
                    _operate(value, rest, env, assigned, depth) if known and value is not None else None
                ) or UNKNOWN
            out.append(value or "")
            i = end + 1
            continue
        j = i + 1
        while j < n and (text[j].isalnum() or text[j] == "_"):
            j += 1
        if j == i + 1:
            out.append(c)
            i += 1
            continue
        out.append(value_of(text[i + 1 : j], env, assigned) or "")
        i = j
    return "".join(out)


#: ``${x:OFFSET}`` and ``${x:OFFSET:LENGTH}`` with plain numbers.
_SLICE = re.compile(r":\s*(-?[0-9]+)(?::\s*(-?[0-9]+))?")


def _operate(value: str, rest: str, env: Mapping[str, str], assigned: Mapping[str, str], depth: int) -> str | None:
    """bash's ``${x OPERATION}`` on the known ``value`` of x: removing a prefix or suffix (``#``, ``##``, ``%``,
    ``%%``), replacing (``/``, ``//``, ``/#``, ``/%``), a slice with plain numbers, changing case; None for any other,
    or a pattern guard cannot read exactly (quoted, escaped, or holding what it does not know)."""
    if len(value) > 256:
        return None
    if rest[:1] in "^,":
        upper = rest[0] == "^"
        if rest not in ("^", "^^", ",", ",,"):
            return None
        changed = value.upper() if upper else value.lower()
        return changed if len(rest) == 2 else changed[:1] + value[1:]
    if rest[:1] == ":":
        sliced = _SLICE.fullmatch(rest)
        if sliced is None:
            return None
        start = int(sliced.group(1))
        if -start > len(value):
            return ""
        start = len(value) + start if start < 0 else start
        if sliced.group(2) is None:
            return value[start:]
        length = int(sliced.group(2))
        return value[start : start + length] if length >= 0 else value[start : max(len(value) + length, start)]
    operator = next((op for op in ("##", "#", "%%", "%", "//", "/#", "/%", "/") if rest.startswith(op)), None)
    if operator is None:
        return None
    operand = rest[len(operator) :]
    if operator[0] == "/" and operand.startswith("/"):
        return None  # ${x///}: where bash ends such a pattern is not modelled
    pattern, _, replacement = operand.partition("/") if operator[0] == "/" else (operand, "", "")
    pattern = expand_vars(pattern, env, assigned, depth + 1)
    replacement = expand_vars(replacement, env, assigned, depth + 1)
    if any(c in pattern + replacement for c in "'\"\\" + UNKNOWN) or re.search(r"\[(\^|[!^]?\[[:=.])", pattern):
        return None  # quotes, escapes, bash's [^…] and its classes ([[:alpha:]]): read otherwise by fnmatch
    spans = range(len(value) + 1)
    if operator in ("#", "##"):
        cuts = [i for i in spans if fnmatch.fnmatchcase(value[:i], pattern)]
        return value[(max(cuts) if operator == "##" else min(cuts)) :] if cuts else value
    if operator in ("%", "%%"):
        cuts = [i for i in spans if fnmatch.fnmatchcase(value[i:], pattern)]
        return value[: (min(cuts) if operator == "%%" else max(cuts))] if cuts else value
    if operator == "/#":
        ends = [j for j in spans if fnmatch.fnmatchcase(value[:j], pattern)]
        return replacement + value[max(ends) :] if ends else value
    if operator == "/%":
        starts = [i for i in spans if fnmatch.fnmatchcase(value[i:], pattern)]
        return value[: min(starts)] + replacement if starts else value
    if not value:
        return replacement if pattern and fnmatch.fnmatchcase("", pattern) else value
    out, i = [], 0  # / and //: the leftmost longest match; // goes on after it
    while i < len(value) and pattern:
        end = next((j for j in range(len(value), i, -1) if fnmatch.fnmatchcase(value[i:j], pattern)), None)
        if end is None:
            out.append(value[i])
            i += 1
            continue
        out.append(replacement)
        i = end
        if operator == "/":
            break
    return "".join(out) + value[i:]


def braces(text: str) -> tuple[list[str], bool]:
    """Bash brace expansion, bounded: past :data:`LIMITS` ``braces`` results, each ``{…}`` becomes a ``*`` glob."""
    if "{" not in text or "}" not in text:
        return [text], False
    if text.count("{") > LIMITS["brace_groups"]:
        return [_brace_glob(text)], True
    results = [text]
    done: list[str] = []
    while results:
        current = results.pop()
        group = _first_group(current)
        if group is None:
            done.append(current)
        else:
            start, end, choices = group
            results.extend(current[:start] + choice + current[end + 1 :] for choice in choices)
        if len(results) + len(done) > LIMITS["braces"]:
            return [_brace_glob(text)], True
    return done, False


def _first_group(text: str) -> tuple[int, int, list[str]] | None:
    """The first ``{a,b}`` or ``{1..9}`` group: (start, end, its choices)."""
    i = text.find("{")
    while 0 <= i:
        level, j, commas = 0, i, [i]
        while j < len(text):
            if text[j] == "{":
                level += 1
            elif text[j] == "}":
                level -= 1
                if level == 0:
                    break
            elif text[j] == "," and level == 1:
                commas.append(j)
            j += 1
        if j >= len(text):
            return None
        if len(commas) > 1:
            commas.append(j)
            return i, j, [text[a + 1 : b] for a, b in zip(commas, commas[1:], strict=False)]
        sequence = _sequence(text[i + 1 : j])
        if sequence is not None:
            return i, j, sequence
        i = text.find("{", i + 1)
    return None


def _sequence(inner: str) -> list[str] | None:
    low, sep, high = inner.partition("..")
    if not sep:
        return None
    try:
        a, b = int(low), int(high)
    except ValueError:
        if len(low) == len(high) == 1:
            a, b = ord(low), ord(high)
            if abs(b - a) > LIMITS["braces"]:
                return None
            step = 1 if b >= a else -1
            return [chr(x) for x in range(a, b + step, step)]
        return None
    if abs(b - a) > LIMITS["braces"]:
        return None  # more numbers than are worth listing: left as written
    step = 1 if b >= a else -1
    return [str(x) for x in range(a, b + step, step)]


def _brace_glob(text: str) -> str:
    out, level = [], 0
    for c in text:
        if c == "{":
            if level == 0:
                out.append("*")
            level += 1
        elif c == "}" and level:
            level -= 1
        elif level == 0:
            out.append(c)
    return "".join(out)
