"""The reading programs the prover knows, each with its whole option table and what each option does.

Every table is its program's own, transcribed from the source of the version Debian 12
(bookworm) ships: GNU coreutils 9.1, grep 3.8, sed 4.9, diffutils 3.8, file 5.44, and bash
5.2's builtins. The table says how the parser reads an argument (:mod:`guard.protection.argv_model`:
abbreviations are resolved against *all* of it, hidden options too); the ``roles`` say what an
option does once read:

* a flag (the default for an option without a value) or a ``VALUE`` (data: a count, a format,
  a regular expression, a glob of names to skip) only changes what is printed;
* a ``PATH`` names a file the program reads: it is one of the names the caller checks;
* a ``SCRIPT`` is program text (sed's ``-e``): every one is collected and checked whole;
* anything else is the reason the option is refused: it writes (``sort -o``, ``sed -i``), runs a
  program (``sort --compress-program``, ``diff -l`` runs pr, ``file -z`` runs decompressors), or
  reads names, patterns or code from a file (``--files0-from``, ``grep -f``, ``--exclude-from``,
  ``file -m``, ``md5sum -c``), whose contents are not proven.

Operands are files the program reads unless the program says otherwise (grep's and sed's
first one is a pattern or a script; ``echo``'s are text). Programs whose parsing is their own
(find, tree, git) are in :mod:`guard.protection.own_parsers`. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache

from guard.command_analysis.expansion import Field
from guard.protection.argv_model import NO, OPTIONAL, REQUIRED, Option, Parsed, Table, builtin_getopt, getopt_long

__all__ = [
    "BUILTINS",
    "DATA",
    "FILE",
    "GETOPT_PROGRAMS",
    "PATH",
    "PROGRAMS",
    "SCRIPT",
    "VALUE",
    "Program",
    "follows_links",
    "implied_names",
    "option_table",
    "program",
    "roles_of",
    "walks",
]

#: Roles of an option's value or of an operand.
VALUE, PATH, SCRIPT, FILE, DATA = "value", "path", "script", "file", "data"
_ROLES = frozenset({VALUE, PATH, SCRIPT, FILE, DATA})
_WRITES_INPUT_FROM = "reads the names of the files it opens from a file, whose contents are not proven"


def option_table(short: str, longs: str) -> Table:
    """A getopt table from the program's option string (``"c:n:qv"``, a leading ``+`` stops at the first operand) and
    its long options, each ``name[/key]`` with ``=`` after the name for a required value, ``==`` for an optional one
    (``"bytes=/c lines=/n quiet/q silent/q"``); the key is the letter or name of what the option does."""
    permute = not short.startswith("+")
    letters = short.lstrip("+-")
    short_table: dict[str, Option] = {}
    i = 0
    while i < len(letters):
        letter = letters[i]
        colons = len(letters[i + 1 :]) - len(letters[i + 1 :].lstrip(":"))
        short_table[letter] = Option(letter, (NO, REQUIRED, OPTIONAL)[min(colons, 2)])
        i += 1 + colons
    long_table: list[tuple[str, Option]] = []
    for entry in longs.split():
        spelled, _, key = entry.partition("/")
        name = spelled.rstrip("=")
        arg = (NO, REQUIRED, OPTIONAL)[len(spelled) - len(name)]
        long_table.append((name, Option(key or name, arg)))
    return Table(short_table, tuple(long_table), permute)


class Program:
    """One reading program: how to read its arguments (``parse``), what each option does (``roles``: key -> role or the
    reason it is refused), what its operands are (``operands``: FILE, DATA, or a function of the parse giving each one's
    role), and a last ``check`` of the whole parse (sed's script, date's operand)."""

    __slots__ = ("parse", "roles", "operands", "check", "most", "table")

    def __init__(
        self,
        parse: Callable[[Sequence[Field]], Parsed],
        roles: Mapping[str, str] | None = None,
        operands: str | Callable[[Parsed], list[str] | str] = FILE,
        check: Callable[[Parsed], str | None] | None = None,
        most: int | None = None,
        table: Table | None = None,
    ) -> None:
        self.parse, self.roles, self.operands, self.check, self.most = parse, roles or {}, operands, check, most
        #: The getopt table it is read with (None for a builtin or a program with its own parser): tests check it against the binary.
        self.table = table


def _getopt(short: str, longs: str, roles: Mapping[str, str] | None = None, **more: object) -> Callable[[], Program]:
    def build() -> Program:
        table = option_table(short, longs)
        for option in [*table.short.values(), *(o for _, o in table.long)]:
            if option.arg != NO and option.key not in (roles or {}):
                raise AssertionError(f"the value of option {option.key} has no role")
        return Program(lambda words: getopt_long(table, words), roles, table=table, **more)  # type: ignore[arg-type]

    return build


def _builtin(short: str, roles: Mapping[str, str] | None = None, **more: object) -> Callable[[], Program]:
    def build() -> Program:
        table = option_table("+" + short, "")
        return Program(lambda words: builtin_getopt(table.short, words), roles, **more)  # type: ignore[arg-type]

    return build


def _data_only(words: Sequence[Field]) -> Parsed:
    parsed = Parsed()
    parsed.operands = list(words)
    return parsed


_STD = " help version"  # coreutils' GETOPT_HELP_OPTION_DECL and GETOPT_VERSION_OPTION_DECL

# --- operands and last checks -------------------------------------------------------------------------------


def _first_is(role: str, given_by: frozenset[str]) -> Callable[[Parsed], list[str]]:
    """The first operand is a pattern or script (``role``) unless an option in ``given_by`` gave it; the rest are files."""

    def roles(parsed: Parsed) -> list[str]:
        if parsed.keys() & given_by:
            return [FILE] * len(parsed.operands)
        return [role] + [FILE] * (len(parsed.operands) - 1) if parsed.operands else []

    return roles


def _date_operand(parsed: Parsed) -> list[str] | str:
    """``date +FORMAT`` prints; any other operand sets the system clock."""
    if any(not field.text.startswith("+") for field in parsed.operands):
        return "date with an operand that is not +FORMAT sets the system clock"
    return [DATA] * len(parsed.operands)


def _sed_script(parsed: Parsed) -> str | None:
    from guard.protection.sed_script import script_problem

    scripts = [use.value for use in parsed.uses if use.option.key == "e" and use.value is not None]
    if not scripts and parsed.operands:
        scripts = [parsed.operands[0].text]
    if not scripts:
        return "sed with no script"
    return script_problem("\n".join(scripts))


def _printf_format(parsed: Parsed) -> str | None:
    return "printf with no format" if not parsed.operands else None


def _test(parsed: Parsed) -> str | None:
    """``test -v 'a[$(cmd)]'`` evaluates the subscript, running cmd (``-R`` looks up a variable by name too)."""
    if any(field.text in ("-v", "-R") for field in parsed.operands):
        return "test -v and -R look up a variable by name, and bash evaluates an array subscript in it"
    return None


def _test_closed(parsed: Parsed) -> str | None:
    return _test(parsed) or (None if parsed.operands and parsed.operands[-1].text == "]" else "[ without its closing ]")


_HEAD_OBSOLETE = re.compile(r"^-[0-9]+[cbkmlqvz]*$")


def _head(table: Table) -> Callable[[Sequence[Field]], Parsed]:
    """head reads ``-NUM[bkm…]`` as its first argument before getopt (``head -5 f``)."""

    def parse(words: Sequence[Field]) -> Parsed:
        if words and words[0].text[:1] == "-" and words[0].text[1:2].isdigit():
            if not _HEAD_OBSOLETE.match(words[0].text) or words[0].pattern:
                return Parsed().fail(f"head {words[0].text}: not a count head reads")
            return getopt_long(table, words[1:])
        return getopt_long(table, words)

    return parse


_TAIL_OBSOLETE = re.compile(r"^[+-][0-9]*[bcl]?f?$")


def _tail(table: Table) -> Callable[[Sequence[Field]], Parsed]:
    """tail reads ``-NUM``, ``+NUM`` (``[bcl][f]``) as its one option when at most one file follows (tail.c's
    ``parse_obsolete_option``, with the default POSIX level)."""

    def parse(words: Sequence[Field]) -> Parsed:
        n = len(words) + 1  # argc
        fits = (
            n == 2
            or (n == 3 and not (words[1].text.startswith("-") and len(words[1].text) > 1))
            or (3 <= n <= 4 and words[1].text == "--")
        )
        if words and fits and not words[0].pattern:
            first = words[0].text
            body = first[1:]
            eligible = first.startswith("+") or (
                first.startswith("-") and body[1 if body[:1] == "c" else 0 :][:1] != ""
            )
            if eligible and _TAIL_OBSOLETE.match(first):
                rest = list(words[1:])
                parsed = Parsed()
                parsed.operands = rest[1:] if rest and rest[0].text == "--" else rest
                return parsed
        if words and words[0].text.startswith("+"):
            return Parsed().fail(f"tail {words[0].text}: read as a count or a file depending on the POSIX level")
        return getopt_long(table, words)

    return parse


def _with(
    parse: Callable[[Table], Callable[[Sequence[Field]], Parsed]],
    short: str,
    longs: str,
    roles: Mapping[str, str],
    **more: object,
) -> Callable[[], Program]:
    def build() -> Program:
        table = option_table(short, longs)
        return Program(parse(table), roles, table=table, **more)  # type: ignore[arg-type]

    return build


def _no_plus_operands(parsed: Parsed) -> list[str] | str:
    """sort, uniq and od read an operand starting with ``+`` as a key, a skip count or an offset."""
    if any(field.text.startswith("+") for field in parsed.operands):
        return "an operand starting with + is read as an option of the program's old syntax"
    return [FILE] * len(parsed.operands)


_GREP_LONG = (
    "basic-regexp/G extended-regexp/E fixed-regexp/F fixed-strings/F perl-regexp/P after-context=/A before-context=/B "
    "binary-files=/BINARY_FILES byte-offset/b context=/C color==/COLOR colour==/COLOR count/c devices=/D directories=/d "
    "exclude=/EXCLUDE exclude-from=/EXCLUDE_FROM exclude-dir=/EXCLUDE_DIRECTORY file=/f files-with-matches/l "
    "files-without-match/L group-separator=/GROUP_SEPARATOR help/help include=/INCLUDE ignore-case/i no-ignore-case/NO_IGNORE_CASE "
    "initial-tab/T label=/LABEL line-buffered/LINE_BUFFERED line-number/n line-regexp/x max-count=/m no-filename/h "
    "no-group-separator/GROUP_SEPARATOR no-messages/s null/Z null-data/z only-matching/o quiet/q recursive/r "
    "dereference-recursive/R regexp=/e invert-match/v silent/q text/a binary/U unix-byte-offsets/u version/V "
    "with-filename/H word-regexp/w"
)
_LS_LONG = (
    "all/a escape/b directory/d dired/D full-time group-directories-first human-readable/h inode/i kibibytes/k "
    "numeric-uid-gid/n no-group/G hide-control-chars/q reverse/r size/s width=/w almost-all/A ignore-backups/B "
    "classify==/F file-type si dereference-command-line/H dereference-command-line-symlink-to-dir hide= ignore=/I "
    "indicator-style= dereference/L literal/N quote-name/Q quoting-style= recursive/R format= show-control-chars sort= "
    "tabsize=/T time= time-style= zero color== hyperlink== block-size= context/Z author" + _STD
)
_DIGEST = "check/c ignore-missing quiet status warn/w strict tag zero/z binary/b text/t" + _STD
_DIGEST_ROLES = {"c": "md5sum -c reads the names of the files it checks from a file, whose contents are not proven"}

#: Every program by name: a builder, run once on first use (most calls use a handful of them).
_BUILDERS: dict[str, Callable[[], Program]] = {
    "cat": _getopt(
        "benstuvAET",
        "number-nonblank/b number/n squeeze-blank/s show-nonprinting/v show-ends/E show-tabs/T show-all/A" + _STD,
    ),
    "tac": _getopt("brs:", "before/b regex/r separator=/s" + _STD, {"s": VALUE}),
    "nl": _getopt(
        "h:b:f:v:i:pl:s:w:n:d:",
        "header-numbering=/h body-numbering=/b footer-numbering=/f starting-line-number=/v "
        "line-increment=/i no-renumber/p join-blank-lines=/l number-separator=/s number-width=/w number-format=/n "
        "section-delimiter=/d" + _STD,
        dict.fromkeys("hbfvilswnd", VALUE),
    ),
    "head": _with(
        _head,
        "c:n:qvz0123456789",
        "bytes=/c lines=/n -presume-input-pipe quiet/q silent/q verbose/v zero-terminated/z" + _STD,
        {"c": VALUE, "n": VALUE},
    ),
    "tail": _with(
        _tail,
        "c:n:fFqs:vz0123456789",
        "bytes=/c follow==/LONG_FOLLOW lines=/n max-unchanged-stats= -disable-inotify pid= "
        "-presume-input-pipe quiet/q retry silent/q sleep-interval=/s verbose/v zero-terminated/z" + _STD,
        {"c": VALUE, "n": VALUE, "s": VALUE, "LONG_FOLLOW": VALUE, "max-unchanged-stats": VALUE, "pid": VALUE},
    ),
    "wc": _getopt(
        "clLmw",
        "bytes/c chars/m lines/l words/w debug files0-from= max-line-length/L" + _STD,
        {"files0-from": _WRITES_INPUT_FROM},
    ),
    "ls": _getopt(
        "abcdfghiklmnopqrstuvw:xABCDFGHI:LNQRST:UXZ1",
        _LS_LONG,
        {
            **dict.fromkeys(
                (
                    "w",
                    "I",
                    "T",
                    "F",
                    "hide",
                    "indicator-style",
                    "quoting-style",
                    "format",
                    "sort",
                    "time",
                    "time-style",
                    "color",
                    "hyperlink",
                    "block-size",
                ),
                VALUE,
            )
        },
    ),
    "sort": _getopt(
        "-bcCdfghik:mMno:rRsS:t:T:uVy:z",
        (
            "ignore-leading-blanks/b check==/CHECK compress-program= debug dictionary-order/d ignore-case/f files0-from= general-numeric-sort/g "
            "ignore-nonprinting/i key=/k merge/m month-sort/M numeric-sort/n human-numeric-sort/h version-sort/V random-sort/R "
            "random-source= sort= output=/o reverse/r stable/s batch-size= buffer-size=/S field-separator=/t temporary-directory=/T "
            "unique/u zero-terminated/z parallel=" + _STD
        ),
        {
            "k": VALUE,
            "S": VALUE,
            "t": VALUE,
            "y": "sort -y takes the next word only when it is a number",
            "CHECK": VALUE,
            "sort": VALUE,
            "batch-size": VALUE,
            "parallel": VALUE,
            "random-source": PATH,
            "o": "sort -o writes its output to a file",
            "T": "sort -T writes its temporary files in a folder it names",
            "compress-program": "sort --compress-program runs a program",
            "files0-from": _WRITES_INPUT_FROM,
        },
        operands=_no_plus_operands,
    ),
    "uniq": _getopt(
        "-0123456789Dcdf:is:uw:z",
        "count/c repeated/d all-repeated==/D group==/GROUP ignore-case/i unique/u skip-fields=/f "
        "skip-chars=/s check-chars=/w zero-terminated/z" + _STD,
        {"D": VALUE, "GROUP": VALUE, "f": VALUE, "s": VALUE, "w": VALUE},
        operands=_no_plus_operands,
        most=1,
    ),
    "cut": _getopt(
        "b:c:d:f:nsz",
        "bytes=/b characters=/c fields=/f delimiter=/d only-delimited/s output-delimiter= complement "
        "zero-terminated/z" + _STD,
        {**dict.fromkeys("bcdf", VALUE), "output-delimiter": VALUE},
    ),
    "tr": _getopt("+AcCdst", "complement/c delete/d squeeze-repeats/s truncate-set1/t" + _STD, operands=DATA),
    "paste": _getopt("d:sz", "serial/s delimiters=/d zero-terminated/z" + _STD, {"d": VALUE}),
    "fold": _getopt(
        "bsw:0::1::2::3::4::5::6::7::8::9::", "bytes/b spaces/s width=/w" + _STD, dict.fromkeys("w0123456789", VALUE)
    ),
    "expand": _getopt(
        "it:0::1::2::3::4::5::6::7::8::9::", "tabs=/t initial/i" + _STD, dict.fromkeys("t0123456789", VALUE)
    ),
    "comm": _getopt(
        "123z",
        "check-order nocheck-order output-delimiter= total zero-terminated/z" + _STD,
        {"output-delimiter": VALUE},
    ),
    "od": _getopt(
        "A:aBbcDdeFfHhIij:LlN:OoS:st:vw::Xx",
        "skip-bytes=/j address-radix=/A read-bytes=/N format=/t output-duplicates/v "
        "strings==/S traditional width==/w endian=" + _STD,
        dict.fromkeys(("A", "j", "N", "S", "t", "w", "endian"), VALUE),
        operands=_no_plus_operands,
    ),
    "md5sum": _getopt("bctwz", _DIGEST, _DIGEST_ROLES),
    "sha1sum": _getopt("bctwz", _DIGEST, _DIGEST_ROLES),
    "sha256sum": _getopt("bctwz", _DIGEST, _DIGEST_ROLES),
    "stat": _getopt(
        "c:fLt",
        "dereference/L file-system/f format=/c printf= terse/t cached=" + _STD,
        {"c": VALUE, "printf": VALUE, "cached": VALUE},
    ),
    "du": _getopt(
        "0abd:chHklmst:xB:DLPSX:",
        (
            "all/a apparent-size block-size=/B bytes/b count-links/l dereference/L dereference-args/D exclude= exclude-from=/X "
            "files0-from= human-readable/h inodes si max-depth=/d null/0 no-dereference/P one-file-system/x separate-dirs/S summarize/s "
            "total/c threshold=/t time== time-style=" + _STD
        ),
        {
            "B": VALUE,
            "d": VALUE,
            "t": VALUE,
            "exclude": VALUE,
            "time": VALUE,
            "time-style": VALUE,
            "X": "du -X reads the patterns of names to skip from a file, whose contents are not proven",
            "files0-from": _WRITES_INPUT_FROM,
        },
    ),
    "df": _getopt(
        "aB:iF:hHklmPTt:vx:",
        "all/a block-size=/B inodes/i human-readable/h si/H local/l output== portability/P print-type/T "
        "sync no-sync total type=/t exclude-type=/x" + _STD,
        {"B": VALUE, "F": VALUE, "t": VALUE, "x": VALUE, "output": VALUE},
    ),
    "basename": _getopt("+as:z", "multiple/a suffix=/s zero/z" + _STD, {"s": VALUE}, operands=DATA),
    "dirname": _getopt("z", "zero/z" + _STD, operands=DATA),
    "realpath": _getopt(
        "eLmPqsz",
        "canonicalize-existing/e canonicalize-missing/m relative-to= relative-base= quiet/q strip/s "
        "no-symlinks/s zero/z logical/L physical/P" + _STD,
        {"relative-to": PATH, "relative-base": PATH},
    ),
    "readlink": _getopt(
        "efmnqsvz",
        "canonicalize/f canonicalize-existing/e canonicalize-missing/m no-newline/n quiet/q silent/s "
        "verbose/v zero/z" + _STD,
    ),
    "id": _getopt("agnruzGZ", "context/Z group/g groups/G name/n real/r user/u zero/z" + _STD, operands=DATA),
    "uname": _getopt(
        "asnrvmpio",
        "all/a kernel-name/s sysname/s nodename/n kernel-release/r release/r kernel-version/v machine/m "
        "processor/p hardware-platform/i operating-system/o" + _STD,
        most=0,
    ),
    "nproc": _getopt("", "all ignore=" + _STD, {"ignore": VALUE}, most=0),
    "whoami": _getopt("", _STD, most=0),
    "date": _getopt(
        "d:f:I::r:Rs:u",
        "date=/d debug file=/f iso-8601==/I reference=/r resolution rfc-email/R rfc-822/R rfc-2822/R "
        "rfc-3339=/RFC_3339 set=/s uct/u utc/u universal/u" + _STD,
        {"d": VALUE, "I": VALUE, "RFC_3339": VALUE, "r": PATH, "f": PATH, "s": "date -s sets the system clock"},
        operands=_date_operand,
        most=1,
    ),
    "seq": _getopt("+f:s:w", "equal-width/w format=/f separator=/s" + _STD, {"f": VALUE, "s": VALUE}, operands=DATA),
    "printenv": _getopt(
        "+iu:0",
        "null/0" + _STD,
        {"i": "printenv -i is a usage error", "u": "printenv -u is a usage error"},
        operands=DATA,
    ),
    "env": _getopt(
        "+C:iS:u:v0",
        "ignore-environment/i null/0 unset=/u chdir=/C default-signal== ignore-signal== block-signal== "
        "list-signal-handling debug/v split-string=/S" + _STD,
        {
            "u": VALUE,
            "C": "env -C changes folder",
            "S": "env -S runs its text as a command",
            "default-signal": VALUE,
            "ignore-signal": VALUE,
            "block-signal": VALUE,
        },
        operands="env with an operand runs it as a command",
    ),
    "grep": _getopt(
        "0123456789A:B:C:D:EFGHIPTUVX:abcd:e:f:hiLlm:noqRrsuvwxyZz",
        _GREP_LONG,
        {
            **dict.fromkeys(
                (
                    "A",
                    "B",
                    "C",
                    "D",
                    "d",
                    "X",
                    "m",
                    "e",
                    "BINARY_FILES",
                    "COLOR",
                    "EXCLUDE",
                    "INCLUDE",
                    "EXCLUDE_DIRECTORY",
                    "GROUP_SEPARATOR",
                    "LABEL",
                ),
                VALUE,
            ),
            "f": "grep -f reads its patterns from a file, whose contents are not proven",
            "EXCLUDE_FROM": "grep --exclude-from reads the patterns of names to skip from a file, whose contents are not proven",
        },
        operands=_first_is(DATA, frozenset("ef")),
    ),
    "sed": _getopt(
        "bsnrzuEe:f:l:i::V:",
        "binary/b regexp-extended/r debug/DEBUG expression=/e file=/f in-place==/i line-length=/l "
        "null-data/z zero-terminated/z quiet/n posix/p silent/n sandbox/SANDBOX separate/s unbuffered/u version/v help/h "
        "follow-symlinks/F",
        {
            "e": SCRIPT,
            "l": VALUE,
            "f": "sed -f reads its script from a file, whose contents are not proven",
            "i": "sed -i edits the files in place",
            "V": "sed -V is a usage error",
            "p": "sed --posix reads the script by other rules",
        },
        operands=_first_is(SCRIPT, frozenset("ef")),
        check=_sed_script,
    ),
    "diff": _getopt(
        "0123456789abBcC:dD:eEfF:hHiI:lL:nNpPqrsS:tTuU:vwW:x:X:yZ",
        (
            "binary/BINARY brief/q changed-group-format=/CHANGED_GROUP_FORMAT color==/COLOR context==/C ed/e exclude=/x exclude-from=/X "
            "expand-tabs/t forward-ed/f from-file=/FROM_FILE help/HELP horizon-lines=/HORIZON_LINES ifdef=/D ignore-all-space/w "
            "ignore-blank-lines/B ignore-case/i ignore-file-name-case/IGNORE_FILE_NAME_CASE ignore-matching-lines=/I ignore-space-change/b "
            "ignore-tab-expansion/E ignore-trailing-space/Z inhibit-hunk-merge/INHIBIT_HUNK_MERGE initial-tab/T label=/L "
            "left-column/LEFT_COLUMN line-format=/LINE_FORMAT minimal/d new-file/N new-group-format=/NEW_GROUP_FORMAT "
            "new-line-format=/NEW_LINE_FORMAT no-dereference/NO_DEREFERENCE no-ignore-file-name-case/NO_IGNORE_FILE_NAME_CASE normal/NORMAL "
            "old-group-format=/OLD_GROUP_FORMAT old-line-format=/OLD_LINE_FORMAT paginate/l palette=/COLOR_PALETTE rcs/n recursive/r "
            "report-identical-files/s sdiff-merge-assist/SDIFF_MERGE_ASSIST show-c-function/p show-function-line=/F side-by-side/y "
            "speed-large-files/H starting-file=/S strip-trailing-cr/STRIP_TRAILING_CR suppress-blank-empty/SUPPRESS_BLANK_EMPTY "
            "suppress-common-lines/SUPPRESS_COMMON_LINES tabsize=/TABSIZE text/a to-file=/TO_FILE unchanged-group-format=/UNCHANGED_GROUP_FORMAT "
            "unchanged-line-format=/UNCHANGED_LINE_FORMAT unidirectional-new-file/P unified==/U version/v width=/W "
            "-presume-output-tty/PRESUME_OUTPUT_TTY"
        ),
        {
            **dict.fromkeys(
                (
                    "C",
                    "D",
                    "F",
                    "I",
                    "L",
                    "S",
                    "U",
                    "W",
                    "x",
                    "COLOR",
                    "COLOR_PALETTE",
                    "HORIZON_LINES",
                    "TABSIZE",
                    "LINE_FORMAT",
                    "CHANGED_GROUP_FORMAT",
                    "NEW_GROUP_FORMAT",
                    "OLD_GROUP_FORMAT",
                    "UNCHANGED_GROUP_FORMAT",
                    "NEW_LINE_FORMAT",
                    "OLD_LINE_FORMAT",
                    "UNCHANGED_LINE_FORMAT",
                ),
                VALUE,
            ),
            "FROM_FILE": PATH,
            "TO_FILE": PATH,
            "l": "diff -l runs pr on its output",
            "X": "diff -X reads the patterns of names to skip from a file, whose contents are not proven",
        },
    ),
    "file": _getopt(
        "bcCde:Ef:F:hiklLm:nNpP:rsSvzZ0",
        (
            "help/HELP version/v magic-file=/m uncompress/z uncompress-noreport/Z brief/b checking-printout/c exclude=/e "
            "exclude-quiet=/EXCLUDE_QUIET files-from=/f separator=/F mime/i apple/APPLE extension/EXTENSIONS mime-type/MIME_TYPE "
            "mime-encoding/MIME_ENCODING keep-going/k list/l dereference/L no-dereference/h no-buffer/n no-pad/N print0/0 "
            "preserve-date/p parameter=/P raw/r special-files/s no-sandbox/S compile/C debug/d"
        ),
        {
            "e": VALUE,
            "EXCLUDE_QUIET": VALUE,
            "F": VALUE,
            "P": VALUE,
            "f": _WRITES_INPUT_FROM,
            "m": "file -m reads its magic (the rules it runs) from a file, whose contents are not proven",
            "z": "file -z runs decompressors",
            "Z": "file -Z runs decompressors",
            "C": "file -C writes a compiled magic file",
            "p": "file -p sets the files' access times",
            "E": "file -E is not modelled",
        },
    ),
}

#: bash builtins among the reading programs (PATH is not searched for them; their own option reader).
_BUILTIN_BUILDERS: dict[str, Callable[[], Program]] = {
    "echo": lambda: Program(_data_only, operands=DATA),
    "printf": _builtin("v:", {"v": "printf -v assigns a shell variable"}, operands=DATA, check=_printf_format),
    "pwd": _builtin("LP", most=0),
    "true": lambda: Program(_data_only, operands=DATA),
    "false": lambda: Program(_data_only, operands=DATA),
    ":": lambda: Program(_data_only, operands=DATA),
    "test": lambda: Program(_data_only, operands=DATA, check=_test),
    "[": lambda: Program(_data_only, operands=DATA, check=_test_closed),
    "type": _builtin("afptP", operands=DATA),
}
#: Programs by name: the allowlist (builtins first, as bash looks them up).
PROGRAMS = (
    frozenset(_BUILDERS) | frozenset(_BUILTIN_BUILDERS) | frozenset({"find", "tree", "git", "rg", "which", "hostname"})
)
BUILTINS = frozenset(_BUILTIN_BUILDERS)
#: The programs read with GNU getopt_long (each table is checked against the installed binary by the tests).
GETOPT_PROGRAMS = frozenset(_BUILDERS)


@cache
def program(name: str) -> Program | None:
    """The model of the reading program ``name`` (a builtin's for a builtin's name), or None if it is not one."""
    build = _BUILTIN_BUILDERS.get(name) or _BUILDERS.get(name)
    if build is not None:
        return build()
    if name in ("find", "tree", "git"):
        from guard.protection import own_parsers

        return Program(getattr(own_parsers, name), {"value": VALUE, "path": PATH})
    if name == "rg":
        from guard.protection.own_parsers import RG_ROLES
        from guard.protection.own_parsers import rg as read_rg

        return Program(read_rg, RG_ROLES, operands=_first_is(DATA, frozenset({"regexp", "file", "files", "type-list"})))
    if name == "which":
        return _builtin("a", operands=DATA)()  # Debian's which: a sh script reading its options with getopts
    if name == "hostname":
        return Program(_data_only, operands="hostname with an operand sets the host's name", most=0)
    return None


def implied_names(name: str, parsed: Parsed) -> list[str]:
    """The files ``name`` may open that no argument names: ``diff FILE DIR`` compares FILE with ``DIR/FILE`` (its last
    part), as ``--from-file``/``--to-file`` do with each operand. Whichever of the two is a folder when it runs, both
    joins are named."""
    if name != "diff":
        return []
    given = [u.value for u in parsed.uses if u.option.key in ("FROM_FILE", "TO_FILE") and u.value is not None]
    files = [*given, *(field.text for field in parsed.operands)]
    return [
        f"{folder.rstrip('/')}/{file.rstrip('/').rsplit('/', 1)[-1]}"
        for folder in files
        for file in files
        if folder != file and file.rstrip("/") and folder
    ]


def walks(name: str, parsed: Parsed) -> bool:
    """Whether ``name`` with these arguments reads below the folders it is given, or the working directory (a search of a
    whole tree, where a protected or credential file may be read though no argument names it): ``grep -r`` however
    spelled (``--dereferen`` is ``-R``, ``-d recurse``), ``ls -R``, ``diff -r``, ``du``, ``find``, ``tree``, ``rg``,
    ``git grep``, and ``git diff A B`` (with a path outside the repository it compares folders, as ``diff -r`` does)."""
    keys = parsed.keys()
    if name in ("find", "tree", "rg", "du"):
        return True
    if name == "grep":
        return bool(keys & {"r", "R"}) or any(
            u.option.key == "d" and u.value not in ("read", "skip") for u in parsed.uses
        )
    if name == "git":
        return "git grep" in keys or ("git diff" in keys and len(parsed.operands) == 2)
    return {"ls": "R", "diff": "r"}.get(name, "") in keys


def follows_links(name: str, parsed: Parsed) -> str | None:
    """Why ``name`` with these arguments follows the symbolic links it meets below the folders it walks, or None. Such a
    link is not named by the call, and may lead anywhere: one the agent made (``ln -s / up``, which only names ``/``), or
    that came with the repository, to guard's secret folder or the root. So ``grep -R``, ``rg -L``, ``find -L`` /
    ``-follow``, ``tree -l``, ``ls -RL``, ``du -L`` and ``diff -r`` (which follows them unless ``--no-dereference``)
    are not proven; ``grep -r``, ``rg``, ``find``, ``tree``, ``ls -R``, ``du`` and ``diff -r --no-dereference`` see a
    link as a link."""
    keys = parsed.keys()
    follows = {
        "grep": "R" in keys,
        "rg": "follow" in keys,
        "find": "follow" in keys,
        "tree": "follow" in keys,
        "ls": {"R", "L"} <= keys,
        "du": "L" in keys,
        "diff": "r" in keys and "NO_DEREFERENCE" not in keys,
    }.get(name, False)
    return f"{name} follows the symbolic links below the folders it reads, wherever they lead" if follows else None


def roles_of(prog: Program, parsed: Parsed) -> list[str] | str:
    """Each operand's role (FILE, DATA, SCRIPT), or why the operands are refused."""
    if prog.most is not None and len(parsed.operands) > prog.most:
        return f"more than {prog.most} operand{'s' if prog.most != 1 else ''}: " + (
            "the next would be written" if prog.most else "this program takes none"
        )
    if callable(prog.operands):
        return prog.operands(parsed)
    if prog.operands in _ROLES:
        return [prog.operands] * len(parsed.operands)
    return prog.operands if parsed.operands else []
