"""The read-only prover: proof, from an allowlist, that a tool call only reads.

Self-protection lets a call that names one of guard's write-protected files run
only when this module proves the call reads and nothing else; later, the same
proof lets guard skip a model call. A proof comes from what is known to be safe,
never from what is known to be bad:

* a client's built-in read tools (Claude Code's Read, Grep, Glob, LS; Gemini's
  read_file, list_directory …; Copilot's view), by name;
* a shell command that is a list or pipeline of simple commands, each an
  allowlisted reading program (cat, head, grep, ls, git log …) with only the
  options listed for it. An unknown program, an unknown option, a redirection
  to a file, a leading assignment (``PAGER=…``), a substitution (``$( )``,
  backticks, ``<( )``) or anything the shell reader cannot read is not proven.
* ``git``'s reading subcommands, given the folder the call runs in, only when
  :mod:`guard.protection.git_config` finds no config key, attribute, hook, submodule or
  ``GIT_*`` variable there that makes git run a program.

Options that run a program (``rg --pre``, ``sort --compress-program``, ``git -c``,
``find -exec``), write a file (``sort -o``, ``uniq IN OUT``, ``tree -o``, ``git
diff --output``) or open a pager or editor are simply not on the lists: pagers,
editors and interpreters (less, man, vim, awk, python …) are not reading programs
here at all. Standard library only: it runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from guard.command_analysis.shell_syntax import Command, ShellSyntaxError, Word, parse_strict
from guard.core.record import FrozenRecord

__all__ = ["MAX_COMMAND", "READ_TOOLS", "SHELL_TOOLS", "Proof", "command_text", "prove", "prove_command", "prove_script"]

#: A shell command longer than this is never proven (and self-protection refuses it: too large to judge).
MAX_COMMAND = 256 * 1024


class Proof(FrozenRecord):
    """Whether a call is proven to only read, and why (what proved it, or the first thing that did not).

    ``written``: the files a proof that allows writes found redirected to (``> x.py``, ``>> log.txt``), as written;
    empty for a call that only reads. Where they point is for the caller to check.
    """

    __slots__ = ("proven", "reason", "written")
    proven: bool
    reason: str
    written: tuple[str, ...]

    def __init__(self, proven: bool, reason: str, written: tuple[str, ...] = ()) -> None:
        self._assign(locals())


#: Built-in tools that only read, by lower-cased name (Claude Code, Gemini CLI, Copilot CLI, Codex, Devin).
READ_TOOLS = frozenset(
    {"read", "grep", "glob", "ls", "notebookread", "read_file", "read_many_files", "list_directory", "glob_tool",
     "search_file_content", "view", "readfile", "list_dir", "find_file", "file_search", "grep_search"}
)
#: Tools whose ``command`` (a string, or an argv list) is a shell command line.
SHELL_TOOLS = frozenset({"bash", "run_shell_command", "shell", "local_shell", "exec_command", "container.exec", "exec"})
_SYSTEM_BIN = ("/bin/", "/usr/bin/", "/usr/local/bin/")
#: Keys of a shell tool's input that name the folder its command runs in (Gemini's ``directory``, Codex's ``workdir``).
_FOLDER_KEYS = ("directory", "dir_path", "workdir", "cwd")
#: Redirections that read, or write only to a standard stream or /dev/null.
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


class _Program(FrozenRecord):
    """Options of one reading program: short letters (alone or clustered), letters taking a value, long options.

    ``long_values`` take a value (``--opt=V`` or ``--opt V``); a name in both sets may stand alone or take ``=V``.
    ``numeric``: ``-20`` is allowed (head, tail, git log); ``max_operands``: more would be written to (``uniq IN OUT``);
    ``any_args``: every argument is data (echo); ``check``: a last look at the arguments (sed's script, date's operand);
    ``detached``: a value may be the next argument. git's is never taken so: where git's value is optional
    (``--pretty``, ``-U``), the next argument is an option to git, and it is checked as one.
    """

    __slots__ = ("flags", "values", "long_flags", "long_values", "numeric", "max_operands", "any_args", "check", "detached")
    flags: str
    values: str
    long_flags: frozenset[str]
    long_values: frozenset[str]
    numeric: bool
    max_operands: int | None
    any_args: bool
    check: Callable[[list[str]], str | None] | None
    detached: bool

    def __init__(self, flags: str = "", values: str = "", long_flags: frozenset[str] = frozenset(), long_values: frozenset[str] = frozenset(),
                 numeric: bool = False, max_operands: int | None = None, any_args: bool = False,
                 check: Callable[[list[str]], str | None] | None = None, detached: bool = True) -> None:
        self._assign(locals())


def _longs(text: str) -> frozenset[str]:
    return frozenset(f"--{name}" for name in text.split())


def _sed_script(args: list[str]) -> str | None:
    """sed is proven only with ``-n``/``-E`` and a script of addresses and ``p d q =`` (no ``s``, ``w``, ``e``, ``r``)."""
    scripts = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--expression")]
    if not scripts:
        operands = [a for a in args if not a.startswith("-")]
        scripts = operands[:1]
    for script in scripts:
        bare, i = [], 0
        while i < len(script):
            c = script[i]
            if c == "/":  # an address regex: its text is data
                end = i + 1
                while end < len(script) and script[end] != "/":
                    end += 2 if script[end] == "\\" else 1
                i = end + 1
                continue
            bare.append(c)
            i += 1
        if set("".join(bare)) - set("0123456789,$;pdqn=!{}~+ \n\t"):
            return f"the sed script {script!r} may write or run commands"
    return None


def _no_operands(args: list[str]) -> str | None:
    return "an operand would change it" if any(not a.startswith("-") for a in args) else None


def _date(args: list[str]) -> str | None:
    return None if all(a.startswith("+") for a in args if not a.startswith("-")) else "date with an operand sets the clock"


_COMMON_GREP = (
    "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case word-regexp line-regexp "
    "invert-match count files-with-matches files-without-match only-matching quiet silent no-messages byte-offset "
    "line-number with-filename no-filename null text recursive dereference-recursive initial-tab null-data help version"
)
_PROGRAMS: dict[str, _Program] = {
    "cat": _Program("AbeEnstTuv", long_flags=_longs("show-all number-nonblank number squeeze-blank show-ends show-tabs show-nonprinting")),
    "head": _Program("qvz", "cn", _longs("quiet silent verbose zero-terminated"), _longs("bytes lines"), numeric=True),
    "tail": _Program("fFqvz", "cns", _longs("follow retry quiet silent verbose zero-terminated"), _longs("bytes lines follow sleep-interval pid"), numeric=True),
    "wc": _Program("clmwL", long_flags=_longs("bytes chars lines words max-line-length total"), long_values=_longs("files0-from total")),
    "ls": _Program("aAbBcCdfFghHiklLmnNopqQrRsStuUvwxXZ1", "IT", _longs(
        "all almost-all human-readable si classify directory inode numeric-uid-gid recursive reverse size literal "
        "dereference group-directories-first full-time color author escape no-group hide-control-chars show-control-chars"),
        _longs("color sort time time-style format ignore hide width block-size indicator-style quoting-style tabsize")),
    "grep": _Program("EFGPiywxvclLoqsbnHhZaIrRTUz", "ABCefmdD", _longs(_COMMON_GREP),
                     _longs("regexp file max-count after-context before-context context include exclude exclude-dir color colour "
                            "label binary-files directories devices exclude-from")),
    "rg": _Program("iIsSFwxvclnNoquUHLaz0.", "ABCegtTmMj", _longs(
        "ignore-case smart-case case-sensitive fixed-strings word-regexp line-regexp invert-match count files-with-matches "
        "files-without-match line-number no-line-number only-matching quiet hidden no-ignore follow files no-heading "
        "heading with-filename no-filename vimgrep json multiline pcre2 text null column no-messages sort-files stats "
        "trim no-config count-matches unrestricted type-list"),
        _longs("regexp glob iglob type type-not max-count after-context before-context context max-depth color colors "
               "max-filesize sort sortr threads encoding replace max-columns")),
    "sort": _Program("bdfgiMhnRrsuVzc", "kt", _longs(
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort "
        "human-numeric-sort numeric-sort random-sort reverse stable unique version-sort zero-terminated check"), _longs("key field-separator")),
    "uniq": _Program("cdDiuz", "fsw", _longs("count repeated ignore-case unique zero-terminated"), _longs("skip-fields skip-chars check-chars"), max_operands=1),
    "cut": _Program("nsz", "bcdf", _longs("only-delimited complement zero-terminated"), _longs("bytes characters delimiter fields output-delimiter")),
    "tr": _Program("cCdst", long_flags=_longs("complement delete squeeze-repeats truncate-set1")),
    "file": _Program("bcEhiklLNprsSz0", "eFfmP", _longs("brief mime mime-type mime-encoding no-dereference dereference keep-going raw special-files"), _longs("separator files-from magic-file")),
    "stat": _Program("LfFt", "c", _longs("dereference file-system terse"), _longs("format printf")),
    "diff": _Program("qsyupcairBbwEiNTtlrZ", "UCxXWI", _longs(
        "brief report-identical-files side-by-side unified context text recursive new-file ignore-case ignore-all-space "
        "ignore-space-change ignore-blank-lines expand-tabs initial-tab strip-trailing-cr minimal no-dereference color suppress-common-lines"),
        _longs("unified context exclude exclude-from ignore-matching-lines label width line-format color "
               "old-line-format new-line-format unchanged-line-format")),
    "echo": _Program(any_args=True),
    "printf": _Program(any_args=True),
    "pwd": _Program("LP"),
    "true": _Program(any_args=True),
    "false": _Program(any_args=True),
    ":": _Program(any_args=True),
    "cd": _Program("LPe"),
    "basename": _Program("asz", "s", _longs("multiple zero"), _longs("suffix")),
    "dirname": _Program("z", long_flags=_longs("zero")),
    "realpath": _Program("eEmLPqsz", long_flags=_longs("canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks zero"), long_values=_longs("relative-to relative-base")),
    "readlink": _Program("efmnqsvz", long_flags=_longs("canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero")),
    "which": _Program("as"),
    "whoami": _Program(),
    "id": _Program("gGnruz"),
    "uname": _Program("asnrvmpio"),
    "nproc": _Program(),
    "date": _Program("uRI", "dr", _longs("utc universal rfc-email iso-8601"), _longs("date reference iso-8601 rfc-3339"), check=_date),
    "seq": _Program("w", "fs", _longs("equal-width"), _longs("format separator")),
    "nl": _Program("p", "bdfhilnsvw"),
    "od": _Program("bcdfilosvx", "AjNStw", long_values=_longs("address-radix skip-bytes read-bytes format width")),
    "hexdump": _Program("bcCdovx", "enfsL"),
    "hd": _Program("bcCdovx", "enfsL"),
    "xxd": _Program("bEeiup", "cglos", max_operands=1),
    "md5sum": _Program("bctwz", long_flags=_longs("binary check text warn strict quiet status tag zero")),
    "sha1sum": _Program("bctwz", long_flags=_longs("binary check text warn strict quiet status tag zero")),
    "sha256sum": _Program("bctwz", long_flags=_longs("binary check text warn strict quiet status tag zero")),
    "tac": _Program("br", "s", _longs("before regex"), _longs("separator")),
    "rev": _Program(),
    "fold": _Program("bs", "w", _longs("bytes spaces"), _longs("width")),
    "expand": _Program("i", "t", _longs("initial"), _longs("tabs")),
    "column": _Program("tnx", "sco", long_values=_longs("separator output-separator")),
    "comm": _Program("123iz", long_flags=_longs("check-order nocheck-order zero-terminated"), long_values=_longs("output-delimiter")),
    "join": _Program("iez", "aejotv12", long_flags=_longs("ignore-case check-order nocheck-order header zero-terminated")),
    "paste": _Program("sz", "d", _longs("serial zero-terminated"), _longs("delimiters")),
    "strings": _Program("afw", "nte", _longs("all print-file-name"), _longs("bytes radix encoding")),
    "du": _Program("abchHklLmsSx0", "dBt", _longs("all apparent-size bytes total human-readable si summarize dereference one-file-system null"), _longs("max-depth block-size threshold exclude")),
    "df": _Program("ahHiklPTx", "tB", _longs("all human-readable si inodes local portability print-type total"), _longs("type exclude-type output block-size")),
    "tree": _Program("adlfixpsughDFqNQrtvUCAS", "LIP", _longs("noreport dirsfirst du prune"), _longs("filelimit charset sort")),
    "test": _Program(any_args=True),
    "[": _Program(any_args=True),
    "env": _Program("0", check=_no_operands),
    "printenv": _Program("0"),
    "hostname": _Program("fisdA", check=_no_operands),
    "jq": _Program("rjacnsSCMe", "", _longs("raw-output join-output ascii-output compact-output null-input slurp sort-keys color-output monochrome-output exit-status tab raw-input"),
                   _longs("arg argjson indent slurpfile rawfile")),
    "sed": _Program("nEr", "e", _longs("quiet silent regexp-extended posix"), _longs("expression"), check=_sed_script),
    "type": _Program("aftpP"),
}
#: ``find`` primaries that only test or print to stdout (with the number of values each takes).
_FIND_PRIMARIES = {
    **dict.fromkeys(("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-type", "-xtype",
                     "-maxdepth", "-mindepth", "-newer", "-perm", "-size", "-user", "-group", "-uid", "-gid", "-mtime", "-mmin",
                     "-atime", "-amin", "-ctime", "-cmin", "-links", "-inum", "-samefile", "-printf", "-regextype", "-lname",
                     "-ilname", "-used"), 1),
    **dict.fromkeys(("-print", "-print0", "-ls", "-prune", "-empty", "-readable", "-writable", "-executable", "-true", "-false",
                     "-not", "!", "-a", "-and", "-o", "-or", "(", ")", ",", "-depth", "-mount", "-xdev", "-follow", "-nouser",
                     "-nogroup", "-daystart", "-noleaf", "-quit", "-L", "-H", "-P"), 0),
}
def _no_signature(args: list[str]) -> str | None:
    """A ``%G…`` placeholder of ``git log --format`` runs gpg to check a commit's signature (refused in any word: a format
    may stand apart from its option)."""
    return "a %G placeholder runs gpg" if any("%G" in a for a in args) else None


#: git subcommands that read, with the options known to be safe (``-c``, ``--output``, ``--ext-diff``, ``--textconv``, a
#: pager, ``--show-signature`` (gpg) … are not). What the repository's config, hooks and attributes may make git run
#: is :mod:`guard.protection.git_config`'s to prove, when the call is decided.
_GIT_LOG = _Program("pqsuwbnzMC", "nSGUL", _longs(
    "oneline stat shortstat numstat name-only name-status graph all decorate no-decorate no-merges merges reverse "
    "abbrev-commit patch no-patch follow first-parent cached staged ignore-all-space ignore-space-change word-diff color "
    "no-color raw summary full-index check minimal patience histogram relative source topo-order date-order "
    "no-abbrev-commit exit-code quiet no-renames find-renames binary pretty"),
    _longs("format pretty author committer since until after before grep max-count skip date unified color word-diff "
           "abbrev diff-filter relative find-renames stat decorate"), numeric=True, check=_no_signature, detached=False)
_GIT: dict[str, _Program] = {
    "log": _GIT_LOG,
    "show": _GIT_LOG,
    "diff": _GIT_LOG,
    "status": _Program("sbvz", "u", _longs("short branch porcelain long verbose ignored untracked-files ahead-behind no-ahead-behind show-stash"),
                       _longs("porcelain untracked-files ignored"), detached=False),
    "branch": _Program("arvl", long_flags=_longs("all remotes list show-current verbose no-color merged no-merged"),
                       long_values=_longs("sort format"), check=_no_operands, detached=False),
    "rev-parse": _Program("q", long_flags=_longs("show-toplevel abbrev-ref git-dir short verify symbolic-full-name is-inside-work-tree absolute-git-dir show-prefix"),
                          long_values=_longs("short abbrev-ref"), detached=False),
    "ls-files": _Program("cdmoiskuvtz", "x", _longs("cached deleted modified others ignored stage killed unmerged exclude-standard full-name error-unmatch"),
                         _longs("exclude"), detached=False),
    "blame": _Program("lstwefnpc", "L", _longs("show-name show-number porcelain line-porcelain root show-stats"), _longs("date"), detached=False),
    "remote": _Program("v", long_flags=_longs("verbose"), check=_no_operands),
    "shortlog": _Program("nse", long_flags=_longs("numbered summary email")),
    "grep": _Program("EFGPiywxvclLoqsbnhHz", "ABCefm", _longs(_COMMON_GREP.removesuffix(" help version") + " cached untracked no-index full-name"),
                     _longs("regexp file max-count after-context before-context context max-depth color"), detached=False),
}


def _program(name: str) -> str | None:
    """The bare program a command word names, when it can only be the system's: ``cat`` or ``/usr/bin/cat``."""
    if "/" not in name:
        return name
    for prefix in _SYSTEM_BIN:
        if name.startswith(prefix) and "/" not in name[len(prefix):]:
            return name[len(prefix):]
    return None


def _options(program: _Program, args: list[str]) -> str | None:
    """Why ``args`` are not all known-safe for ``program``, or None."""
    if program.any_args:
        return None
    operands, i = 0, 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            operands += len(args) - i
            break
        if arg == "-" or not arg.startswith("-"):
            operands += 1
            continue
        if arg.startswith("--"):
            name, eq, _ = arg.partition("=")
            if name in program.long_values and not eq and name not in program.long_flags:
                i += program.detached
            elif not ((eq and name in program.long_values) or (not eq and name in program.long_flags)):
                return f"the option {arg} is not known to be safe"
            continue
        if program.numeric and arg[1:].isdigit():
            continue
        for position, letter in enumerate(arg[1:], start=1):
            if letter in program.values:
                i += program.detached and position == len(arg) - 1  # its value is the next argument
                break
            if letter not in program.flags:
                return f"the option {arg} is not known to be safe"
    if program.max_operands is not None and operands > program.max_operands:
        return f"more than {program.max_operands} operand: the last one would be written"
    return program.check(args) if program.check else None


def _find(args: list[str]) -> str | None:
    i = 0
    while i < len(args) and not args[i].startswith(("-", "(", "!")):
        i += 1  # the starting points
    while i < len(args):
        arg = args[i]
        if arg not in _FIND_PRIMARIES:
            return f"find {arg} is not known to only read"
        i += 1 + _FIND_PRIMARIES[arg]
    return None


def _git(args: list[str]) -> str | None:
    i = 0
    while i < len(args) and args[i] in ("--no-pager", "-P", "--no-optional-locks"):
        i += 1
    if i >= len(args):
        return "git with no subcommand"
    spec = _GIT.get(args[i])
    if spec is None:
        return f"git {args[i]} is not known to only read"
    return _options(spec, args[i + 1 :])


def _word_problem(word: Word) -> str | None:
    if word.substitutions or word.process:
        return f"{word.text!r} runs a command to build its text"
    if word.escapes:
        return f"{word.text!r} hides text behind $'\\x..' escapes"
    return None


def _file_target(word: Word) -> bool:
    """Whether a redirection's target is one file named as written: no expansion, glob or file descriptor."""
    return not (word.dynamic or word.glob or word.substitutions or word.process or word.escapes) and bool(word.text) and not word.text.startswith("&")


def prove_command(command: Command, *, writes: bool = False) -> Proof:
    """Whether one simple command (words, assignments, redirections) only reads.

    With ``writes``, output redirected with ``>`` or ``>>`` to a file named as written is allowed too, and listed in
    the proof's ``written``; the program must still be a reading one (``cat <<'EOF' > x.py``, ``echo … >> notes.txt``).
    """
    if command.assignments:
        return Proof(False, f"it sets {command.assignments[0].text.split('=', 1)[0]} for the command (a pager, a hook, a library)")
    written: list[str] = []
    for redirect in command.redirects:
        problem = _word_problem(redirect.target) or (_word_problem(redirect.body) if redirect.body else None)
        if problem:
            return Proof(False, problem)
        if redirect.body is not None and redirect.body.dynamic:
            return Proof(False, "its here-document expands $… at run time (the environment's secrets among them)")
        output = redirect.op not in ("<", "<<", "<<-", "<<<", ">&", "<&") or (redirect.op == ">&" and not redirect.target.text.isdigit())
        if output and redirect.target.text not in _HARMLESS_TARGETS:
            if not (writes and redirect.op in (">", ">>") and _file_target(redirect.target)):
                return Proof(False, f"it redirects output to {redirect.target.text}")
            written.append(redirect.target.text)
        if redirect.op == "<&" and not redirect.target.text.isdigit():
            return Proof(False, f"it redirects from {redirect.target.text}")
    if not command.words:
        return Proof(True, f"only redirections, writing to {', '.join(written)}", tuple(written)) if written else Proof(True, "only redirections that read")
    for word in command.words:
        problem = _word_problem(word)
        if problem:
            return Proof(False, problem)
    head, args = command.words[0], [w.text for w in command.words[1:]]
    name = None if head.dynamic else _program(head.text)
    if name is None:
        return Proof(False, f"the program {head.text!r} is not a known reading program")
    if name == "find":
        problem = _find(args)
    elif name == "git":
        problem = _git(args)
    elif name in _PROGRAMS:
        problem = _options(_PROGRAMS[name], args)
    else:
        return Proof(False, f"{name} is not a known reading program")
    if problem:
        return Proof(False, f"{name}: {problem}")
    return Proof(True, f"{name} with known-safe options " + ("writes only to " + ", ".join(written) if written else "only reads"), tuple(written))


def prove_script(text: str, cwd: str | None = None, env: Mapping[str, str] | None = None, *, writes: bool = False) -> Proof:
    """Whether a shell command line is a list or pipeline of commands that each only read.

    Given the folder it runs in (and the hook's ``env``), a ``git`` command is proven only when nothing there makes git
    run a program (:func:`guard.protection.git_config.git_problem`), and when no ``cd`` moves it to another repository.
    Without one, git's options alone are checked (self-protection, which only asks whether a protected file is written).
    With ``writes``, reading programs may also redirect their output to files named as written (:func:`prove_command`),
    listed in ``written``; never in a line that changes folder (``cd``): a name must mean the file checked.
    """
    if len(text) > MAX_COMMAND:
        return Proof(False, f"the command is larger than {MAX_COMMAND} bytes")
    try:
        script = parse_strict(text)
    except ShellSyntaxError as exc:
        return Proof(False, f"the command cannot be read: {exc}")
    names: list[str] = []
    written: list[str] = []
    for pipeline in script.pipelines:
        for command in pipeline.commands:
            proof = prove_command(command, writes=writes)
            if not proof.proven:
                return proof
            names.append(command.words[0].text if command.words else "<")
            written += proof.written
    programs = {_program(name) for name in names}
    if written and "cd" in programs:
        return Proof(False, f"it writes {written[0]} after changing folder: the file written is not the one checked")
    if cwd is not None and "git" in programs:
        if "cd" in programs:
            return Proof(False, "git after a cd: the repository it reads is not the one checked")
        from guard.protection.git_config import git_problem

        problem = git_problem(cwd, {} if env is None else env)
        if problem:
            return Proof(False, f"git may run a program: {problem}")
    programs_run = ", ".join(dict.fromkeys(names)) or "empty"
    if written:
        return Proof(True, f"reading programs ({programs_run}) that write only to {', '.join(dict.fromkeys(written))}", tuple(written))
    return Proof(True, f"every command only reads ({programs_run})")


def command_text(tool_input: Mapping[str, Any]) -> str | None:
    """A shell tool's command line: ``command`` / ``cmd`` as a string, or an argv list (Codex) joined back."""
    for key in ("command", "cmd"):
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            if len(value) >= 3 and _program(value[0]) in ("bash", "sh", "zsh") and value[1] in ("-c", "-lc"):
                return str(value[2])  # Codex runs ["bash", "-lc", SCRIPT]
            import shlex

            return shlex.join(value)
    return None


def prove(tool_name: str, tool_input: Mapping[str, Any], cwd: str, env: Mapping[str, str], *, writes: bool = False) -> Proof:
    """Whether the call ``tool_name(tool_input)`` only reads, run in ``cwd`` with the hook's ``env`` (what git would read there).

    With ``writes``, a shell command's redirections to named files are allowed and listed (:func:`prove_script`).
    """
    name = tool_name.lower()
    if name in READ_TOOLS:
        return Proof(True, f"{tool_name} is a built-in read tool")
    if name in SHELL_TOOLS or name.endswith(("__bash", "__shell")):
        command = command_text(tool_input)
        if command is None:
            return Proof(False, f"{tool_name} has no command to read")
        folder = next((v for v in (tool_input.get(k) for k in _FOLDER_KEYS) if isinstance(v, str) and v), None)
        if folder and writes:
            return Proof(False, f"{tool_name} runs in {folder}: the files it writes are not the ones checked")
        return prove_script(command, os.path.join(cwd, folder) if folder else cwd, env, writes=writes)
    return Proof(False, f"{tool_name} is not a known read-only tool")
