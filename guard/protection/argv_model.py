"""How a program reads its arguments, modelled exactly: GNU ``getopt_long`` and bash's builtin option reader.

The read-only prover decides what a program does from its options, so it must read
them as the program's own parser does, or an option hides in a spelling the prover
did not expect: ``-ne'w /tmp/x'`` is ``-n`` and ``-e 'w /tmp/x'`` to sed, ``--comp``
is ``--compress-program`` to sort, ``--output`` abbreviated. This module reads an
argv (the words bash passes, :class:`guard.command_analysis.expansion.Field`) with a
program's full option table, as glibc 2.36's ``getopt_long`` reads it:

* long options by name or by a unique prefix of one (resolved against the whole
  table, hidden options too; a prefix shared by options that differ is ambiguous,
  one shared by aliases of the same option is not), ``--opt=value``, ``--opt value``
  for a required argument, an optional argument only with ``=``;
* short options alone or clustered, a required argument attached (``-n5``,
  ``-ne'p'``) or the next word (whatever it holds: ``-e -v``), an optional one only
  attached;
* options after operands (GNU permutation) unless the option string starts with
  ``+``; ``--`` ends options, ``-`` is an operand.

A word the model cannot read (an unknown or ambiguous option, a missing argument)
is a refusal: the program would stop with a usage error, and the prover only proves
what it has read. Standard library only: it runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from guard.command_analysis.expansion import Field
from guard.core.record import FrozenRecord

__all__ = [
    "END",
    "NO",
    "OPTIONAL",
    "REQUIRED",
    "Option",
    "Parsed",
    "Table",
    "Use",
    "builtin_getopt",
    "getopt_long",
    "operand",
]

NO, REQUIRED, OPTIONAL = 0, 1, 2


class Option(FrozenRecord):
    """One option as a parser knows it: ``key`` names what it does (aliases share one), ``arg`` is NO, REQUIRED or
    OPTIONAL (getopt's ``has_arg``)."""

    __slots__ = ("key", "arg")
    key: str
    arg: int

    def __init__(self, key: str, arg: int) -> None:
        self._assign(locals())


class Table(FrozenRecord):
    """A program's options: ``short`` by letter, ``long`` by full name, in the order of the program's table (getopt
    resolves an abbreviation to the first match); ``permute``: options may follow operands."""

    __slots__ = ("short", "long", "permute")
    short: Mapping[str, Option]
    long: tuple[tuple[str, Option], ...]
    permute: bool

    def __init__(self, short: Mapping[str, Option], long: tuple[tuple[str, Option], ...], permute: bool) -> None:
        self._assign(locals())


class Use(FrozenRecord):
    """One option as given: ``spelled`` as written (``--comp``, ``-e``), its ``value`` (None when it takes none), the
    ``word`` holding the option and whether the value came from the next word (``detached``)."""

    __slots__ = ("option", "spelled", "value", "word", "detached")
    option: Option
    spelled: str
    value: str | None
    word: Field
    detached: Field | None

    def __init__(
        self, option: Option, spelled: str, value: str | None, word: Field, detached: Field | None = None
    ) -> None:
        self._assign(locals())


class Parsed:
    """What a parser read: the options in order, the operands in order (or why it could not read the argv)."""

    __slots__ = ("uses", "operands", "problem")

    def __init__(self) -> None:
        self.uses: list[Use] = []
        self.operands: list[Field] = []
        self.problem: str | None = None

    def keys(self) -> set[str]:
        return {use.option.key for use in self.uses}

    def fail(self, problem: str) -> Parsed:
        self.problem = problem
        return self


def _long(table: Table, name: str) -> tuple[str, Option] | str:
    """``process_long_option``: the exact name, else the only option (or the first of identical aliases) it prefixes."""
    found: tuple[str, Option] | None = None
    ambiguous: list[str] = []
    for full, option in table.long:
        if full == name:
            return full, option
    for full, option in table.long:
        if full.startswith(name):
            if found is None:
                found = (full, option)
            elif found[1] != option:
                ambiguous.append(full)
    if found is None:
        return f"--{name} is not an option of this program"
    if ambiguous:
        return f"--{name} is ambiguous (--{found[0]}, --{ambiguous[0]} …)"
    return found


END = "end"


def operand(parsed: Parsed, words: Sequence[Field], after: int, *, permute: bool = True) -> str:
    """Whether ``words[after - 1]`` is no option: ``--`` or an operand that ends the options (END, the rest made operands),
    an operand ("operand", appended), or an option to read ("")."""
    word = words[after - 1]
    if word.text == "--":
        parsed.operands += words[after:]
        return END
    if word.text.startswith("-") and word.text != "-":
        return ""
    if not permute:
        parsed.operands += words[after - 1 :]
        return END
    parsed.operands.append(word)
    return "operand"


def getopt_long(table: Table, words: Sequence[Field]) -> Parsed:
    """Read ``words`` (the arguments after the program's name) as glibc's ``getopt_long`` does with ``table``."""
    parsed = Parsed()
    i, n = 0, len(words)
    while i < n:
        word = words[i]
        text = word.text
        i += 1
        taken = operand(parsed, words, i, permute=table.permute)
        if taken == END:
            break
        if taken:
            continue
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            resolved = _long(table, name)
            if isinstance(resolved, str):
                return parsed.fail(resolved)
            full, option = resolved
            if eq:
                if option.arg == NO:
                    return parsed.fail(f"--{full} takes no value")
                parsed.uses.append(Use(option, f"--{full}", value, word))
            elif option.arg == REQUIRED:
                if i >= n:
                    return parsed.fail(f"--{full} needs a value")
                parsed.uses.append(Use(option, f"--{full}", words[i].text, word, words[i]))
                i += 1
            else:
                parsed.uses.append(Use(option, f"--{full}", None, word))
            continue
        j = 1
        while j < len(text):
            letter = text[j]
            short = table.short.get(letter)
            if short is None:
                return parsed.fail(f"-{letter} is not an option of this program")
            option = short
            rest = text[j + 1 :]
            if option.arg == NO:
                parsed.uses.append(Use(option, f"-{letter}", None, word))
                j += 1
                continue
            if rest:
                parsed.uses.append(Use(option, f"-{letter}", rest, word))
            elif option.arg == OPTIONAL:
                parsed.uses.append(Use(option, f"-{letter}", None, word))
            elif i >= n:
                return parsed.fail(f"-{letter} needs a value")
            else:
                parsed.uses.append(Use(option, f"-{letter}", words[i].text, word, words[i]))
                i += 1
            break
    return parsed


def builtin_getopt(short: Mapping[str, Option], words: Sequence[Field]) -> Parsed:
    """Read ``words`` as bash's ``internal_getopt`` (and dash's ``getopts``) do for a builtin: clustered letters, a value
    attached or the next word, options only before the first operand, ``--`` ends them, no long options."""
    parsed = Parsed()
    table = Table(short, (), permute=False)
    i = 0
    while i < len(words) and words[i].text.startswith("-") and words[i].text not in ("-", "--"):
        if words[i].text.startswith("--"):
            return parsed.fail(f"{words[i].text}: a builtin has no long options")
        one = getopt_long(table, words[i : i + 2])
        if one.problem:
            return parsed.fail(one.problem)
        parsed.uses += one.uses
        i += 1 + any(use.detached is not None for use in one.uses)
    if i < len(words) and words[i].text == "--":
        i += 1
    parsed.operands = list(words[i:])
    return parsed
