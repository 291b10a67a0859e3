"""The reading programs that parse their arguments their own way: find's expression, tree's options, git's subcommands,
ripgrep's clap.

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
  run is :mod:`guard.protection.git_config`'s to prove;
* **rg** (ripgrep 13.0.0, clap 2.33): long options by exact name (clap infers no abbreviation) or
  alias, ``--name=value`` or ``--name value``, short letters clustered with a value attached or the
  next word; a value that starts with ``-`` only for the options that allow one (``-e``, ``-g`` …),
  an attached one that starts with ``=`` and a switch given ``=value`` are not proven; the first
  operand is the pattern unless ``-e``, ``-f``, ``--files`` or ``--type-list`` is given. No
  ``--pre`` (runs a program), ``-z`` (runs decompressors), ``-f``/``--ignore-file`` (patterns from
  a file), and no ``RIPGREP_CONFIG_PATH`` (arguments read from a file: the prover's caller checks).
"""

from __future__ import annotations

from collections.abc import Sequence

from guard.command_analysis.expansion import Field
from guard.protection.argv_model import END, NO, REQUIRED, Option, Parsed, Use, operand

__all__ = ["RG_ROLES", "find", "git", "rg", "tree"]

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
    **dict.fromkeys(
        "name iname path ipath wholename iwholename regex iregex lname ilname type xtype maxdepth mindepth perm size "
        "user group uid gid mtime mmin atime amin ctime cmin links inum printf regextype used fstype context".split(),
        VALUE,
    ),
    **dict.fromkeys("newer anewer cnewer samefile".split(), PATH),
}
_FIND_REFUSED = {
    **dict.fromkeys("exec execdir ok okdir".split(), "runs a command"),
    "delete": "deletes files",
    **dict.fromkeys("fprint fprint0 fls fprintf".split(), "writes to a file"),
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
        if words[i].text == "-L":
            _use(parsed, "follow", words[i])  # every symbolic link below the starting points is followed
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
            _use(parsed, "follow" if name == "follow" else "flag", word)
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
_TREE_LONG = frozenset(
    "help version inodes device noreport nolinks dirsfirst filesfirst si du prune ignore-case matchdirs metafirst "
    "gitignore info fflinks".split()
)
_TREE_LONG_VALUED = frozenset({"filelimit", "charset", "timefmt", "sort"})
_TREE_LONG_REFUSED = {
    "fromfile": "tree --fromfile reads the listing from files",
    "gitfile": "tree --gitfile reads patterns from a file",
    "infofile": "tree --infofile reads a file of comments",
    "hintro": "tree --hintro reads a file",
    "houtro": "tree --houtro reads a file",
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
                _use(parsed, "follow" if letter == "l" else "flag", word)
    return parsed


# --- git ---------------------------------------------------------------------------------------------------


class _Sub:
    """A reading subcommand's safe options: short ``flags``, short letters taking an attached value, long options
    standing alone, long options written ``--name=value``; ``numeric``: ``-5``; ``operands``: it may have them."""

    __slots__ = ("flags", "values", "long_flags", "long_values", "numeric", "operands")

    def __init__(
        self,
        flags: str,
        values: str,
        long_flags: str,
        long_values: str,
        *,
        numeric: bool = False,
        operands: bool = True,
    ) -> None:
        self.flags, self.values, self.numeric, self.operands = flags, values, numeric, operands
        self.long_flags, self.long_values = frozenset(long_flags.split()), frozenset(long_values.split())


_GREP_FLAGS = (
    "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case word-regexp line-regexp invert-match "
    "count files-with-matches files-without-match only-matching quiet no-messages byte-offset line-number with-filename "
    "no-filename null text recursive initial-tab"
)
_GIT_LOG = _Sub(
    "pqsuwbnzMC",
    "nSGUL",
    (
        "oneline stat shortstat numstat name-only name-status graph all decorate no-decorate no-merges merges reverse abbrev-commit patch "
        "no-patch follow first-parent cached staged ignore-all-space ignore-space-change word-diff color no-color raw summary full-index "
        "check minimal patience histogram relative source topo-order date-order no-abbrev-commit exit-code quiet no-renames find-renames "
        "binary pretty"
    ),
    (
        "format pretty author committer since until after before grep max-count skip date unified color word-diff abbrev "
        "diff-filter relative find-renames stat decorate"
    ),
    numeric=True,
)
_GIT: dict[str, _Sub] = {
    "log": _GIT_LOG,
    "show": _GIT_LOG,
    "diff": _GIT_LOG,
    "status": _Sub(
        "sbvz",
        "u",
        "short branch porcelain long verbose ignored untracked-files ahead-behind no-ahead-behind show-stash",
        "porcelain untracked-files ignored",
    ),
    "branch": _Sub(
        "arvl", "", "all remotes list show-current verbose no-color merged no-merged", "sort format", operands=False
    ),
    "rev-parse": _Sub(
        "q",
        "",
        "show-toplevel abbrev-ref git-dir short verify symbolic-full-name is-inside-work-tree absolute-git-dir "
        "show-prefix",
        "short abbrev-ref",
    ),
    "ls-files": _Sub(
        "cdmoiskuvtz",
        "x",
        "cached deleted modified others ignored stage killed unmerged exclude-standard full-name error-unmatch",
        "exclude",
    ),
    "blame": _Sub("lstwefnpc", "L", "show-name show-number porcelain line-porcelain root show-stats", "date"),
    "remote": _Sub("v", "", "verbose", "", operands=False),
    "shortlog": _Sub("nse", "", "numbered summary email", ""),
    "grep": _Sub(
        "EFGPiywxvclLoqsbnhHz",
        "ABCem",
        _GREP_FLAGS + " cached untracked no-index full-name",
        "regexp max-count after-context before-context context max-depth color",
    ),
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
    _use(parsed, f"git {words[i].text}", words[i])  # the subcommand, as a flag: what it is decides what it walks
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


# --- rg ----------------------------------------------------------------------------------------------------

_RG_SWITCHES = (
    "auto-hybrid-regex no-auto-hybrid-regex binary no-binary block-buffered no-block-buffered byte-offset/b case-sensitive/s column "
    "no-column no-context-separator count/c count-matches crlf no-crlf debug trace no-encoding files files-with-matches/l "
    "files-without-match fixed-strings/F no-fixed-strings follow/L no-follow glob-case-insensitive no-glob-case-insensitive heading "
    "no-heading hidden/. no-hidden ignore-case/i ignore-file-case-insensitive no-ignore-file-case-insensitive include-zero "
    "invert-match/v json no-json line-buffered no-line-buffered line-number/n no-line-number/N line-regexp/x max-columns-preview "
    "no-max-columns-preview mmap no-mmap multiline/U no-multiline multiline-dotall no-multiline-dotall no-config no-ignore ignore "
    "no-ignore-dot ignore-dot no-ignore-exclude ignore-exclude no-ignore-files ignore-files no-ignore-global ignore-global "
    "no-ignore-messages ignore-messages no-ignore-parent ignore-parent no-ignore-vcs ignore-vcs no-messages messages "
    "no-pcre2-unicode pcre2-unicode no-require-git require-git no-unicode unicode null/0 null-data one-file-system no-one-file-system "
    "only-matching/o passthru passthrough=passthru pcre2/P no-pcre2 pcre2-version no-pre pretty/p quiet/q search-zip/z no-search-zip "
    "smart-case/S sort-files no-sort-files stats no-stats text/a no-text trim no-trim type-list unrestricted/u vimgrep "
    "with-filename/H no-filename/I word-regexp/w help/h version/V"
)
#: Options taking a value (``!``: the value may start with a dash).
_RG_VALUED = (
    "after-context/A before-context/B color colors context/C context-separator dfa-size-limit encoding/E engine field-context-separator "
    "field-match-separator file/f! glob/g! iglob! ignore-file! max-columns/M max-count/m max-depth maxdepth=max-depth max-filesize "
    "path-separator pre pre-glob! regex-size-limit regexp/e! replace/r! sort sortr threads/j type/t type-add type-clear type-not/T"
)
#: What rg's options do that the prover does not prove (every other value is data).
RG_ROLES = {
    **{entry.split("/")[0].split("=")[-1].rstrip("!"): VALUE for entry in _RG_VALUED.split()},
    "pre": "rg --pre runs a program on each file",
    "search-zip": "rg -z runs decompressors",
    "file": "rg -f reads its patterns from a file, whose contents are not proven",
    "ignore-file": "rg --ignore-file reads the patterns of names to skip from a file, whose contents are not proven",
}


def _rg_table() -> tuple[dict[str, tuple[str, bool, bool]], dict[str, tuple[str, bool, bool]]]:
    """(long name or alias, short letter) -> (key, takes a value, its value may start with a dash)."""
    longs: dict[str, tuple[str, bool, bool]] = {}
    shorts: dict[str, tuple[str, bool, bool]] = {}
    for text, valued in ((_RG_SWITCHES, False), (_RG_VALUED, True)):
        for entry in text.split():
            hyphen = entry.endswith("!")
            name, _, rest = entry.rstrip("!").partition("/")
            name, _, key = name.partition("=")
            spec = (key or name, valued, hyphen)
            longs[name] = spec
            if rest:
                shorts[rest] = spec
    return longs, shorts


_RG_LONG, _RG_SHORT = _rg_table()


def rg(words: Sequence[Field]) -> Parsed:
    parsed = Parsed()
    i, n = 0, len(words)

    def value(word: Field, key: str, hyphen: bool, spelled: str) -> Parsed | None:
        nonlocal i
        if i >= n or (words[i].text.startswith("-") and not hyphen):
            return parsed.fail(f"rg {spelled} with no value it reads")
        _use(parsed, key, word, words[i], arg=REQUIRED)
        i += 1
        return None

    while i < n:
        word = words[i]
        text = word.text
        i += 1
        taken = operand(parsed, words, i)
        if taken == END:
            break
        if taken:
            continue
        if text.startswith("--"):
            name, eq, attached = text[2:].partition("=")
            spec = _RG_LONG.get(name)
            if spec is None:
                return parsed.fail(f"rg {text} is not an option of rg")
            key, valued, hyphen = spec
            if not valued:
                if eq:
                    return parsed.fail(f"rg {text}: a switch given a value")
                _use(parsed, key, word)
            elif eq:
                if not attached:
                    return parsed.fail(f"rg {text} with an empty value")
                parsed.uses.append(Use(Option(key, REQUIRED), f"--{name}", attached, word))
            elif value(word, key, hyphen, text):
                return parsed
            continue
        for k, letter in enumerate(text[1:], start=1):
            spec = _RG_SHORT.get(letter)
            if spec is None:
                return parsed.fail(f"rg -{letter} is not an option of rg")
            key, valued, hyphen = spec
            if not valued:
                _use(parsed, key, word)
                continue
            rest = text[k + 1 :]
            if rest.startswith("="):
                return parsed.fail(f"rg {text}: a value written -{letter}=")
            if rest:
                parsed.uses.append(Use(Option(key, REQUIRED), f"-{letter}", rest, word))
            elif value(word, key, hyphen, f"-{letter}"):
                return parsed
            break
    return parsed
