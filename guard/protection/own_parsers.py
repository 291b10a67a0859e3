"""The reading programs that parse their arguments their own way: find's expression, tree's options, git's subcommands.

Each is modelled on its source (findutils 4.9's ``parser.c``, tree 2.1.0's ``main``, git
2.39's option tables) and returns the same :class:`guard.protection.argv_model.Parsed` the
getopt programs do, its options' roles included, so the prover checks them alike:

* **find**: ``-H``/``-L``/``-P`` first, then the starting points (every word before one that
  looks like an expression: ``-x``, ``(``, ``!``), then primaries, each found as find finds it,
  with or without its dash (``delete`` is ``-delete``), and the number of values it takes. Only
  tests and printing to standard output are proven: no ``-exec``/``-ok``/``-delete``/``-fprint``/
  ``-fls``, no ``-files0-from``;
* **tree**: letters anywhere until ``--``, a letter that takes a value takes the *next word*
  (``-Po`` is ``-P WORD -o WORD``), long options by exact name, ``--name=value`` or
  ``--name value`` for the ones that take one (tree's own prefix test would take ``--charsetX``
  too: not proven). No ``-o`` (writes), ``-R`` (writes ``00Tree.html`` files), ``--fromfile``;
* **git**: ``--no-pager``, ``-P``, ``--no-optional-locks`` before a reading subcommand, then each
  word that starts with ``-`` checked alone against that subcommand's list of safe options, in
  the form git reads it (a value never taken from the next word: where git's value is optional,
  the next word is an option to git, and it is checked as one). What git's configuration makes it
  run is :mod:`guard.protection.git_config`'s to prove.
"""

from __future__ import annotations

from collections.abc import Sequence

from guard.command_analysis.expansion import Field
from guard.protection.argv_model import NO, REQUIRED, Option, Parsed, Use

__all__ = ["find", "git", "tree"]

PATH, VALUE = "path", "value"


def _use(parsed: Parsed, key: str, word: Field, value: Field | None = None, *, arg: int = NO) -> None:
    parsed.uses.append(Use(Option(key, arg), word.text, None if value is None else value.text, word, value))


# --- find --------------------------------------------------------------------------------------------------

#: Primaries that take no value: tests, options, operators and printing to standard output.
_FIND_BARE = frozenset(
    "! not ( ) , a and o or print print0 ls prune quit true false empty readable writable executable nouser nogroup depth d mount "
    "xdev noleaf follow daystart warn nowarn ignore_readdir_race noignore_readdir_race help -help version -version".split()
)
#: Primaries that take one value, and what it is (a file whose times or identity they compare is a PATH).
_FIND_VALUED = {
    **dict.fromkeys("name iname path ipath wholename iwholename regex iregex lname ilname type xtype maxdepth mindepth perm size "
                    "user group uid gid mtime mmin atime amin ctime cmin links inum printf regextype used fstype context".split(), VALUE),
    **dict.fromkeys("newer anewer cnewer samefile".split(), PATH),
}
_FIND_REFUSED = {
    **dict.fromkeys("exec execdir ok okdir".split(), "runs a command"),
    "delete": "deletes files", **dict.fromkeys("fprint fprint0 fls fprintf".split(), "writes to a file"),
    "files0-from": "reads the names of its starting points from a file, whose contents are not proven",
}
_NEWER_XY = frozenset("aBcmt")


def _looks_like_expression(text: str) -> bool:
    """findutils' ``looks_like_expression`` for a leading word: ``-x``, or ``(`` / ``!`` alone."""
    return (text.startswith("-") and len(text) > 1) or text in ("(", "!")


def find(words: Sequence[Field]) -> Parsed:
    parsed = Parsed()
    i, n = 0, len(words)
    while i < n and words[i].text in ("-H", "-L", "-P", "--") or (i < n and words[i].text.startswith("-O")):
        i += 1
        if words[i - 1].text == "--":
            break
    while i < n and not _looks_like_expression(words[i].text):
        parsed.operands.append(words[i])
        i += 1
    while i < n:
        word = words[i]
        text = word.text
        i += 1
        if text == "-D":
            return parsed.fail("find -D is not modelled")
        if len(text) == 8 and text.startswith("-newer") and text[6] in _NEWER_XY and text[7] in _NEWER_XY:
            if i >= n:
                return parsed.fail(f"find {text} needs a value")
            _use(parsed, PATH if text[7] != "t" else VALUE, word, words[i], arg=REQUIRED)
            i += 1
            continue
        name = text[1:] if text.startswith("-") else text
        if name in _FIND_REFUSED:
            return parsed.fail(f"find {text} {_FIND_REFUSED[name]}")
        if name in _FIND_BARE:
            _use(parsed, "flag", word)
        elif name in _FIND_VALUED:
            if i >= n:
                return parsed.fail(f"find {text} needs a value")
            _use(parsed, _FIND_VALUED[name], word, words[i], arg=REQUIRED)
            i += 1
        else:
            return parsed.fail(f"find {text} is not known to only read")
    return parsed


# --- tree --------------------------------------------------------------------------------------------------

_TREE_LETTERS = frozenset("NqQdlshugfFapiCnxASDtcrvUXJ")
_TREE_VALUED = frozenset("PIHTL")
_TREE_REFUSED = {"o": "tree -o writes its output to a file", "R": "tree -R writes a 00Tree.html file in each folder"}
_TREE_LONG = frozenset("help version inodes device noreport nolinks dirsfirst filesfirst si du prune ignore-case matchdirs metafirst "
                       "gitignore info fflinks".split())
_TREE_LONG_VALUED = frozenset({"filelimit", "charset", "timefmt", "sort"})
_TREE_LONG_REFUSED = {
    "fromfile": "tree --fromfile reads the listing from files", "gitfile": "tree --gitfile reads patterns from a file",
    "infofile": "tree --infofile reads a file of comments", "hintro": "tree --hintro reads a file", "houtro": "tree --houtro reads a file",
}


def tree(words: Sequence[Field]) -> Parsed:
    parsed = Parsed()
    i, n, options = 0, len(words), True
    while i < n:
        word = words[i]
        text = word.text
        i += 1
        if not (options and text.startswith("-") and len(text) > 1):
            parsed.operands.append(word)
            continue
        if text == "--":
            options = False
            continue
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            if name in _TREE_LONG_REFUSED:
                return parsed.fail(_TREE_LONG_REFUSED[name])
            if name in _TREE_LONG and not eq:
                _use(parsed, "flag", word)
            elif name in _TREE_LONG_VALUED and eq and value:
                parsed.uses.append(Use(Option(VALUE, REQUIRED), f"--{name}", value, word))
            elif name in _TREE_LONG_VALUED and not eq and i < n:
                _use(parsed, VALUE, word, words[i], arg=REQUIRED)
                i += 1
            else:
                return parsed.fail(f"tree {text} is not an option tree reads as written")
            continue
        for letter in text[1:]:
            if letter in _TREE_REFUSED:
                return parsed.fail(_TREE_REFUSED[letter])
            if letter in _TREE_VALUED:
                if i >= n:
                    return parsed.fail(f"tree -{letter} needs a value")
                _use(parsed, VALUE, word, words[i], arg=REQUIRED)
                i += 1
            elif letter not in _TREE_LETTERS:
                return parsed.fail(f"tree -{letter} is not known to only read")
            else:
                _use(parsed, "flag", word)
    return parsed


# --- git ---------------------------------------------------------------------------------------------------


class _Sub:
    """A reading subcommand's safe options: short ``flags``, short letters taking an attached value, long options
    standing alone, long options written ``--name=value``; ``numeric``: ``-5``; ``operands``: it may have them."""

    __slots__ = ("flags", "values", "long_flags", "long_values", "numeric", "operands")

    def __init__(self, flags: str, values: str, long_flags: str, long_values: str, *, numeric: bool = False, operands: bool = True) -> None:
        self.flags, self.values, self.numeric, self.operands = flags, values, numeric, operands
        self.long_flags, self.long_values = frozenset(long_flags.split()), frozenset(long_values.split())


_GREP_FLAGS = ("extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case word-regexp line-regexp invert-match "
               "count files-with-matches files-without-match only-matching quiet no-messages byte-offset line-number with-filename "
               "no-filename null text recursive initial-tab")
_GIT_LOG = _Sub("pqsuwbnzMC", "nSGUL", (
    "oneline stat shortstat numstat name-only name-status graph all decorate no-decorate no-merges merges reverse abbrev-commit patch "
    "no-patch follow first-parent cached staged ignore-all-space ignore-space-change word-diff color no-color raw summary full-index "
    "check minimal patience histogram relative source topo-order date-order no-abbrev-commit exit-code quiet no-renames find-renames "
    "binary pretty"), ("format pretty author committer since until after before grep max-count skip date unified color word-diff abbrev "
                       "diff-filter relative find-renames stat decorate"), numeric=True)
_GIT: dict[str, _Sub] = {
    "log": _GIT_LOG, "show": _GIT_LOG, "diff": _GIT_LOG,
    "status": _Sub("sbvz", "u", "short branch porcelain long verbose ignored untracked-files ahead-behind no-ahead-behind show-stash",
                   "porcelain untracked-files ignored"),
    "branch": _Sub("arvl", "", "all remotes list show-current verbose no-color merged no-merged", "sort format", operands=False),
    "rev-parse": _Sub("q", "", "show-toplevel abbrev-ref git-dir short verify symbolic-full-name is-inside-work-tree absolute-git-dir "
                      "show-prefix", "short abbrev-ref"),
    "ls-files": _Sub("cdmoiskuvtz", "x", "cached deleted modified others ignored stage killed unmerged exclude-standard full-name "
                     "error-unmatch", "exclude"),
    "blame": _Sub("lstwefnpc", "L", "show-name show-number porcelain line-porcelain root show-stats", "date"),
    "remote": _Sub("v", "", "verbose", "", operands=False),
    "shortlog": _Sub("nse", "", "numbered summary email", ""),
    "grep": _Sub("EFGPiywxvclLoqsbnhHz", "ABCem", _GREP_FLAGS + " cached untracked no-index full-name",
                 "regexp max-count after-context before-context context max-depth color"),
}


def git(words: Sequence[Field]) -> Parsed:
    parsed = Parsed()
    i = 0
    while i < len(words) and words[i].text in ("--no-pager", "-P", "--no-optional-locks"):
        i += 1
    if i >= len(words):
        return parsed.fail("git with no subcommand")
    spec = _GIT.get(words[i].text)
    if spec is None:
        return parsed.fail(f"git {words[i].text} is not known to only read")
    rest = words[i + 1 :]
    for k, word in enumerate(rest):
        text = word.text
        if text == "--":
            parsed.operands += rest[k + 1 :]
            break
        if text == "-" or not text.startswith("-"):
            parsed.operands.append(word)
            continue
        if "%G" in text:
            return parsed.fail("a %G placeholder runs gpg")
        if text.startswith("--"):
            name, eq, _ = text[2:].partition("=")
            if not ((eq and name in spec.long_values) or (not eq and name in spec.long_flags)):
                return parsed.fail(f"git {words[i].text} {text} is not known to be safe")
        elif not (spec.numeric and text[1:].isdigit()):
            for letter in text[1:]:
                if letter in spec.values:
                    break  # the rest of the word is its value
                if letter not in spec.flags:
                    return parsed.fail(f"git {words[i].text} {text} is not known to be safe")
        _use(parsed, "flag", word)
    if parsed.operands and not spec.operands:
        return parsed.fail(f"git {words[i].text} with an operand changes the repository")
    if any("%G" in field.text for field in parsed.operands):
        return parsed.fail("a %G placeholder runs gpg")
    return parsed
