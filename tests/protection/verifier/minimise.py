"""Delta debugging: the shortest form of an escaping line that still escapes the same way.

The line is cut into shell words and operators (quotes kept whole); each simple
command alone is tried first, then Zeller's ddmin removes ever smaller runs of them while the predicate (proven, and still doing what
the original did) holds; then each word is made simpler where it can be (a part of a
``${IFS}``-joined word dropped, a letter of an option cluster, its quotes). Candidates
the shell or the prover cannot read simply fail the predicate.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["ddmin", "tokens"]

_TOKEN = re.compile(
    r"\n|\d*(?:&>>|&>|>>|>\||>&|<<<|<<-|<<|<>|<&|>|<)(?:\d+(?![\w.])|-)?|[;&|]{1,2}|(?:[^\s'\"\\;&|<>]|\\.|'[^']*'|\"(?:[^\"\\]|\\.)*\")+|\S"
)


_BETWEEN = frozenset({";", "&&", "||", "|", "&", "\n", "|&"})


def tokens(line: str) -> list[str]:
    """The line's words and operators, each quoted part kept inside its word."""
    return _TOKEN.findall(line)


def _join(parts: list[str]) -> str:
    return " ".join(parts).replace(" \n ", "\n").replace("\n ", "\n").replace(" \n", "\n")


def _simpler(word: str) -> list[str]:
    """Simpler forms of one word, simplest first."""
    found = []
    if (
        word.startswith(("'", '"'))
        and word.endswith(word[0])
        and len(word) > 2
        and re.match(r"^[\w./=,:+-]+$", word[1:-1])
    ):
        found.append(word[1:-1])
    pieces = word.split("${IFS}")
    if len(pieces) > 1:
        found += ["${IFS}".join(pieces[:i] + pieces[i + 1 :]) for i in range(len(pieces))]
    if re.match(r"^-[A-Za-z0-9]{2,10}$", word):
        found += [word[:i] + word[i + 1 :] for i in range(1, len(word))]
    return found


def _fewer(parts: list[str], escapes: Callable[[str], bool], budget: int) -> tuple[list[str], int]:
    """Zeller's ddmin over the tokens; the tokens kept and the predicate calls spent."""
    calls, granularity = 0, 2
    while len(parts) >= 2 and calls < budget:
        size = max(1, len(parts) // granularity)
        reduced = False
        for start in range(0, len(parts), size):
            candidate = parts[:start] + parts[start + size :]
            if not candidate:
                continue
            calls += 1
            if escapes(_join(candidate)):
                parts, granularity, reduced = candidate, max(granularity - 1, 2), True
                break
            if calls >= budget:
                break
        if not reduced:
            if size == 1:
                break
            granularity = min(len(parts), granularity * 2)
    return parts, calls


def _alone(parts: list[str], escapes: Callable[[str], bool]) -> tuple[list[str], int]:
    """The first command of the line (split at ``; && || | & newline``) that escapes on its own, else the line."""
    commands: list[list[str]] = [[]]
    for part in parts:
        if part in _BETWEEN:
            commands.append([])
        else:
            commands[-1].append(part)
    commands = [c for c in commands if c]
    if len(commands) < 2:
        return parts, 0
    for calls, command in enumerate(commands, start=1):
        if escapes(_join(command)):
            return command, calls
    return parts, len(commands)


def _plainer(parts: list[str], escapes: Callable[[str], bool], budget: int) -> tuple[list[str], int]:
    """The first word that can be made simpler, made so (once); the tokens and the predicate calls spent."""
    calls = 0
    for at, word in enumerate(parts):
        for simpler in _simpler(word):
            if calls >= budget:
                return parts, calls
            calls += 1
            candidate = parts[:at] + [simpler] + parts[at + 1 :]
            if escapes(_join(candidate)):
                return candidate, calls
    return parts, calls


def ddmin(line: str, escapes: Callable[[str], bool], budget: int = 200) -> str:
    """The smallest form of ``line`` for which ``escapes`` still holds: fewest tokens, then simpler words, again until
    neither changes it; ``budget`` bounds the predicate's calls."""
    parts, spent = _alone(tokens(line), escapes)
    while spent < budget:
        before = parts
        parts, calls = _fewer(parts, escapes, budget - spent)
        spent += calls
        parts, calls = _plainer(parts, escapes, budget - spent)
        spent += calls
        if parts == before:
            break
    return _join(parts)
