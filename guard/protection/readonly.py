"""The read-only prover: proof, from an allowlist, that a tool call only reads.

Self-protection lets a call that names one of guard's write-protected files run
only when this module proves the call reads and nothing else; the same proof lets
the lanes skip a model call. A proof comes from what is known to be safe, never
from what is known to be bad, and it is a proof of what *runs*, not of what was typed:

* a client's built-in read tools (Claude Code's Read, Grep, Glob, LS; Gemini's
  read_file, list_directory …; Copilot's view), by name;
* a shell line read as bash reads it (:func:`guard.command_analysis.shell_syntax.parse_strict`:
  a construct it does not read exactly is not proven), each word expanded as bash
  expands it (:mod:`guard.command_analysis.expansion`: braces, ``~``, quotes; a
  parameter, command or arithmetic expansion is not proven; a glob only where the
  program takes a plain file), each simple command an allowlisted reading program
  whose arguments are read by a model of its own parser and whose every option is
  known to be safe (:mod:`guard.protection.reading_programs`,
  :mod:`guard.protection.own_parsers`, sed's script by :mod:`guard.protection.sed_script`);
* a bare program name only when ``PATH`` finds it in the system's folder (``/usr/bin``,
  ``/bin``), with nothing the agent may have written before it; bash's builtins by name;
* ``git``'s reading subcommands, given the folder the call runs in, only when
  :mod:`guard.protection.git_config` finds no config key, attribute, hook, submodule or
  ``GIT_*`` variable there that makes git run a program.

Never proven: a leading assignment (``PAGER=…``), a builtin that changes the shell's
state (``cd``, ``export``, ``read``, ``printf -v``, ``source`` …: none is on the list, and a
line is proven only when every command in it is), a redirection that writes (except, for
the write lane, ``>``/``>>`` to a file named as written), an unquoted here-document that
expands ``$…``. The programs modelled are GNU/Linux's (Debian 12's coreutils 9.1, grep 3.8,
sed 4.9, findutils 4.9, diffutils 3.8, file 5.44, tree 2.1.0, git 2.39) under bash 5.2: on
another platform, under another shell (zsh, fish …) or with ``POSIXLY_CORRECT`` /
``_POSIX2_VERSION`` set, no shell line is proven. Standard library only: it runs on the
``guard hook`` fast path.
"""

from __future__ import annotations

import itertools
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from guard.command_analysis.expansion import Field, NotModelled, ansi_c_quoted, expand_word, herestring_text
from guard.command_analysis.shell_syntax import Command, Redirect, ShellSyntaxError, Word, parse_strict
from guard.core.record import FrozenRecord
from guard.protection.argv_model import NO, Parsed

__all__ = [
    "MAX_COMMAND",
    "READ_TOOLS",
    "SHELL_TOOLS",
    "Proof",
    "command_folder",
    "command_text",
    "is_shell_tool",
    "TreeWalk",
    "claude_code_shell",
    "dash_names",
    "line_problem",
    "line_shell",
    "prove",
    "prove_command",
    "prove_script",
    "shell_state_change",
    "tree_walk",
    "which",
]

#: A shell command longer than this is never proven (and self-protection refuses it: too large to judge).
MAX_COMMAND = 256 * 1024


class Proof(FrozenRecord):
    """Whether a call is proven to only read, and why (what proved it, or the first thing that did not).

    ``written``: the files a proof that allows writes found redirected to (``> x.py``, ``>> log.txt``), as bash opens
    them (quotes removed, ``~`` expanded); empty for a call that only reads. Where they point is for the caller to check.
    ``names``: every file or folder the proven commands open by name, as their programs receive it (a glob as the pattern
    it is): their file operands, the values of options that name a file, the files redirected from. ``walks``: a proven
    command reads below the folders it names, or the working directory (``grep -r`` however spelled, ``find``, ``rg`` …).
    With ``changes``, ``written`` also holds the files a proven file utility writes, removes or renames
    (:mod:`guard.protection.file_changes`), and ``made`` the folders a ``mkdir`` makes.
    """

    __slots__ = ("proven", "reason", "written", "names", "walks", "made")
    proven: bool
    reason: str
    written: tuple[str, ...]
    names: tuple[str, ...]
    walks: bool
    made: tuple[str, ...]

    def __init__(
        self,
        proven: bool,
        reason: str,
        written: tuple[str, ...] = (),
        names: tuple[str, ...] = (),
        walks: bool = False,
        made: tuple[str, ...] = (),
    ) -> None:
        self._assign(locals())


#: Built-in tools that only read, by lower-cased name (Claude Code, Gemini CLI, Copilot CLI, Codex, Devin).
READ_TOOLS = frozenset(
    {
        "read",
        "grep",
        "glob",
        "ls",
        "notebookread",
        "read_file",
        "read_many_files",
        "list_directory",
        "glob_tool",
        "search_file_content",
        "view",
        "readfile",
        "list_dir",
        "find_file",
        "file_search",
        "grep_search",
    }
)
#: Tools whose ``command`` (a string, or an argv list) is a shell command line.
SHELL_TOOLS = frozenset({"bash", "run_shell_command", "shell", "local_shell", "exec_command", "container.exec", "exec"})
#: The folders a bare program name may resolve to: Debian's own programs (``/bin`` is ``/usr/bin`` there).
_SYSTEM_BIN = ("/usr/bin", "/bin")
#: bash's PATH when none is set (``config-top.h``'s DEFAULT_PATH_VALUE).
_BASH_DEFAULT_PATH = "/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin:."
#: Keys of a shell tool's input that name the folder its command runs in (Gemini's ``directory``, Codex's ``workdir``).
_FOLDER_KEYS = ("directory", "dir_path", "workdir", "cwd", "dir", "working_directory", "working_dir", "root")
#: Keys of a shell tool's input that change what its command runs with: variables (Codex's ``local_shell`` ``env``:
#: ``LD_PRELOAD``, ``BASH_ENV``, ``PAGER``, ``GIT_*``), or the user it runs as.
_RUN_WITH_KEYS = ("env", "environment", "user")
#: Redirections that write only to a standard stream or /dev/null.
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
#: Environment variables that change how the modelled programs read their arguments.
_PARSING_VARIABLES = ("POSIXLY_CORRECT", "_POSIX2_VERSION")
#: Shells a line may run in that the prover reads it for: bash, and POSIX sh (dash, Debian's /bin/sh), which Codex runs
#: when the agent names it (``exec_command``'s ``shell``, which its hook payload does not carry). A proof holds for both:
#: a word bash brace-expands is proven as sh passes it too, and ``$'…'``, which sh reads otherwise, is not proven.
_BASH_LIKE = frozenset({"bash", "sh", "dash"})
#: Where Claude Code looks for bash and zsh when the environment names neither (its shell finder, 2.1.x).
_CLIENT_SHELL_FOLDERS = ("/bin", "/usr/bin", "/usr/local/bin", "/opt/homebrew/bin")
#: Why a word holding ``$'…'`` is not proven.
_SH_ANSI_C = (
    "{!r}: sh reads $'…' as $ and a quoted string ending at the first ' (the rest of the line is read otherwise), "
    "and the line may run in sh"
)
#: A word's first character that no program reads as an option or an operator: a glob starting with it only makes names.
_PLAIN_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./")
#: bash builtins and keywords that change the state later commands of the line run in (variables, PATH, functions,
#: aliases, options, folder, file descriptors), or run text as code.
_STATE_CHANGERS = frozenset(
    "alias unalias bind builtin caller cd command compgen complete compopt declare typeset dirs disown enable eval exec exit "
    "export fc getopts hash history jobs let local logout mapfile readarray popd pushd read readonly return set shift shopt "
    "source . suspend times trap ulimit umask unset wait for select function coproc [[ ((".split()
)
#: Builtins that only print or ignore their words: a word whose value is not known is inert there (``echo "$PATH"``).
#: Not ``test`` nor ``[``: such a word may be ``-v`` (``: -v; test $_ 'a[$(cmd)]'`` runs cmd, ``$_`` being ``-v``).
_INERT = frozenset({"echo", "true", "false", ":"})
#: A parameter whose expansion runs nothing: ``$NAME``, ``$1``, ``$@``, and ``${NAME}`` with a prefix or suffix removed
#: or a pattern replaced (no ``$`` in them), a slice by plain numbers or a change of case. Not ``${x@P}`` (prompt
#: expansion runs ``$(…)``), nor an offset that is arithmetic (``${x:$y}`` evaluates ``a[$(cmd)]``).
_PARAMETER = r"""\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*(?:(?:\#\#?|%%?|//?|/\#|/%)[^$`'"\\{}]*|:\s*-?[0-9]+(?::\s*-?[0-9]+)?|\^\^?|,,?)?\}|[0-9@*\#?$!_-])"""
#: A word whose only expansions are such parameters: expanding it runs nothing.
_PLAIN_PARAMETERS = re.compile(
    rf"""^(?:[^$`'"\\]|\\.|'[^']*'|"(?:[^"$`\\]|\\.|{_PARAMETER})*"|{_PARAMETER})*$""",
    re.S,
)


def _word_fields(word: Word, env: Mapping[str, str], *, braces: bool = True) -> tuple[Field, ...]:
    """The words bash makes of ``word`` (``braces=False``: the words POSIX sh makes, which has no brace expansion)."""
    if word.process or word.substitutions:
        raise NotModelled(f"{word.raw!r} runs a command to build its text")
    if ansi_c_quoted(word.raw):
        raise NotModelled(_SH_ANSI_C.format(word.raw))
    return expand_word(word.raw, env, braces=braces)


def _one_file(word: Word, env: Mapping[str, str]) -> str:
    """A redirection's target as bash opens it: one word, no glob (bash would open what it matches)."""
    fields = _word_fields(word, env)
    if len(fields) != 1:
        raise NotModelled(f"{word.raw!r} is an ambiguous redirect")
    if fields[0].pattern:
        raise NotModelled(f"{word.raw!r} names a file by a glob")
    return fields[0].text


def _redirects(
    redirects: Sequence[Redirect], env: Mapping[str, str], writes: bool, names: list[str], written: list[str]
) -> str | None:
    """Why the redirections do more than read or write a named file: None, filling ``names`` and ``written``."""
    for redirect in redirects:
        op = redirect.op
        if op in ("<<", "<<-"):
            body = redirect.body
            if body is not None and (body.substitutions or body.dynamic):
                return "its here-document expands $… at run time (the environment's secrets among them)"
            continue
        if op == "<<<":
            if ansi_c_quoted(redirect.target.raw):
                raise NotModelled(_SH_ANSI_C.format(redirect.target.raw))
            herestring_text(redirect.target.raw, env)
            continue
        if op in ("<&", ">&") and (
            redirect.target.raw.isdigit() or redirect.target.raw in ("-",) or redirect.target.raw.rstrip("-").isdigit()
        ):
            continue  # a descriptor duplicated or closed
        target = _one_file(redirect.target, env)
        if target.startswith("/dev/") and target not in _HARMLESS_TARGETS and target != "/dev/stdin":
            return f"it redirects to {target}, which bash opens itself (/dev/tcp and /dev/udp are network connections)"
        if op == "<":
            names.append(target)
        elif target in _HARMLESS_TARGETS:
            continue
        elif writes and op in (">", ">>"):
            written.append(target)
        else:
            return f"it redirects output to {target}" if op != "<&" else f"it redirects from {target}"
    return None


def _resolve(name: str, cwd: str | None, env: Mapping[str, str]) -> str | None:
    """Why the bare program ``name`` may not be the system's: PATH finds another first (the agent may have written it)."""
    path = env.get("PATH", _BASH_DEFAULT_PATH)
    for entry in path.split(":"):
        if not entry or not entry.startswith("/"):
            if cwd is None:
                return f"PATH has a relative entry ({entry or '.'!r}) before the system's {name}"
            entry = os.path.join(cwd, entry or ".")
        candidate = os.path.join(entry, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            real = os.path.realpath(candidate)
            if os.path.dirname(real) in _SYSTEM_BIN or os.path.dirname(os.path.normpath(candidate)) in _SYSTEM_BIN:
                return None
            return f"{name} is {candidate}, not the system's"
    return f"{name} is not installed here"


def _program_name(head: Field, cwd: str | None, env: Mapping[str, str], changes: bool) -> str | Proof:
    """The reading program a command's first word runs (a bash builtin by its bare name), or with ``changes`` a file
    utility :mod:`guard.protection.file_changes` proves, or why it is not proven."""
    from guard.protection.reading_programs import BUILTINS, PROGRAMS

    known = PROGRAMS
    if changes:  # the project-writes lane only: self-protection's proofs (every cache hit's) never load the module
        from guard.protection import file_changes

        known = PROGRAMS | file_changes.PROGRAMS
    text = head.text
    if head.pattern:
        return Proof(False, f"the program {text!r} is a glob")
    if "/" in text:
        folder, name = os.path.split(text)
        if os.path.normpath(folder) not in _SYSTEM_BIN or name not in known or name in BUILTINS:
            return Proof(False, f"the program {text!r} is not a known reading program")
        return name
    if text not in known:
        return Proof(False, f"{text} is not a known reading program")
    if text in BUILTINS:
        return text
    problem = _resolve(text, cwd, env)
    return Proof(False, problem) if problem else text


def _arguments(name: str, args: list[Field], names: list[str], walking: list[bool]) -> str | None:
    """Why ``name``'s arguments are not all known to only read (None: they are; the files they name go in ``names``, and
    whether it walks whole trees in ``walking``)."""
    from guard.protection.reading_programs import (
        DATA,
        FILE,
        PATH,
        SCRIPT,
        VALUE,
        follows_links,
        implied_names,
        program,
        roles_of,
        walks,
    )

    prog = program(name)
    assert prog is not None
    parsed = prog.parse(args)
    if parsed.problem:
        return parsed.problem
    walking.append(walks(name, parsed))
    follows = follows_links(name, parsed)
    if follows:
        return follows
    for use in parsed.uses:
        role = prog.roles.get(use.option.key, "flag" if use.option.arg == NO else None)
        if role not in ("flag", VALUE, PATH, SCRIPT):
            return role or f"{use.spelled} is not modelled"
        if use.word.pattern and not (use.spelled.startswith("--") and "=" in use.word.prefix and use.value is not None):
            return f"{use.word.text!r}: a glob would make other options of the names it matches"
        if use.detached is not None and use.detached.pattern:
            return f"{use.detached.text!r}: a glob as an option's value would make more words of the names it matches"
        if role == PATH and use.value is not None:
            names.append(use.value)
    operand_list = roles_of(prog, parsed)
    if isinstance(operand_list, str):
        return operand_list
    uniform = prog.operands == DATA
    for k, (field, role) in enumerate(zip(parsed.operands, operand_list, strict=True)):
        if field.pattern:
            if field.text[:1] not in _PLAIN_START or not (uniform or all(r == FILE for r in operand_list[k:])):
                return f"{field.text!r}: the names a glob matches here could be read as options or as something other than files"
        if role == FILE:
            names.append(field.text)
    names += implied_names(name, parsed)
    return prog.check(parsed) if prog.check is not None else None


def prove_command(
    command: Command,
    *,
    writes: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    alone: bool = False,
) -> Proof:
    """Whether one simple command (words, assignments, redirections) only reads, as bash runs it in ``cwd`` with ``env``.

    With ``writes``, output redirected with ``>`` or ``>>`` to a file named as written is allowed too, and listed in
    the proof's ``written``; the program must still be a reading one (``cat <<'EOF' > x.py``, ``echo … >> notes.txt``).
    ``alone``: the command is judged on its own by a caller that follows the line's state (self-protection, which asks
    whether a command writes, not what it prints): a ``cd`` to a folder named as written is proven (the caller reads the
    next commands' paths from there), and a builtin that only prints or ignores its words (``echo``, ``:`` …) may be given
    words whose value is not known (``echo "$PATH"``).
    """
    env = {} if env is None else env
    if alone and _followed_cd(command, env):
        return Proof(True, "cd to a folder named as written: only the folder the next commands run in changes")
    if alone and command.words and command.words[0].raw in _INERT and not command.assignments:
        known = [w for w in command.words[1:] if _expands_exactly(w, env)]
        unknown = [w for w in command.words[1:] if not any(w is k for k in known)]
        if unknown and all(not w.substitutions and _PLAIN_PARAMETERS.match(w.raw) for w in unknown):
            return _prove_simple(Command([], [command.words[0], *known], command.redirects), writes, env, cwd, False)[0]
    return _prove_simple(command, writes, env, cwd, False)[0]


def _expands_exactly(word: Word, env: Mapping[str, str]) -> bool:
    try:
        _word_fields(word, env)
    except NotModelled:
        return False
    return True


def _prove_simple(
    command: Command, writes: bool, env: Mapping[str, str], cwd: str | None, changes: bool
) -> tuple[Proof, str]:
    """:func:`prove_command`, and the program it runs ("<" for none); with ``changes`` (and a ``cwd``), a file utility
    whose changes :func:`guard.protection.file_changes.change_of` names too."""
    if command.assignments:
        return Proof(
            False,
            f"it sets {command.assignments[0].text.split('=', 1)[0]} for the command (a pager, a hook, a library)",
        ), "="
    names: list[str] = []
    written: list[str] = []
    try:
        problem = _redirects(command.redirects, env, writes, names, written)
        if problem:
            return Proof(False, problem), "<"
        fields = [field for word in command.words for field in _word_fields(word, env)]
        plain = [field for word in command.words for field in _word_fields(word, env, braces=False)]
    except NotModelled as exc:
        return Proof(False, str(exc)), "?"
    if not fields:
        if written:
            return Proof(True, f"only redirections, writing to {', '.join(written)}", tuple(written), tuple(names)), "<"
        return Proof(True, "only redirections that read", (), tuple(names)), "<"
    changes = changes and writes and cwd is not None
    walking: list[bool] = []
    run: list[str] = []
    changed: list[tuple[list[str], list[str], tuple[str, ...]]] = []  # per reading: written, read, made
    # sh passes a word bash brace-expands as it is: the command is proven as each of the two reads it
    for reading in [fields] if [f.text for f in plain] == [f.text for f in fields] else [fields, plain]:
        name = _program_name(reading[0], cwd, env, changes)
        if isinstance(name, Proof):
            return name, reading[0].text
        run.append(name)
        if changes and cwd is not None:
            from guard.protection.file_changes import change_of

            change = change_of(name, reading[1:], cwd)
            if isinstance(change, str):
                return Proof(False, f"{name}: {change}"), name
            if change is not None:
                changed.append((list(change.written), list(change.read), tuple(change.made)))
                continue
        if name == "rg" and env.get("RIPGREP_CONFIG_PATH"):
            return Proof(
                False, "rg reads more arguments from RIPGREP_CONFIG_PATH's file, whose contents are not proven"
            ), name
        problem = _arguments(name, reading[1:], names, walking)
        if problem:
            return Proof(False, f"{name}: {problem}"), name
    name = run[0]
    if changed:
        if len(changed) != len(run):
            return Proof(False, f"{name}: bash and sh would run it as different programs"), name
        for change_written, _, _ in changed:  # each reading's changes are checked: what either shell would change
            written += [path for path in change_written if path not in written]
        read = [path for _, change_read, _ in changed for path in change_read]
        made = tuple(dict.fromkeys(folder for _, _, change_made in changed for folder in change_made))
        what = ", ".join([*written, *(f"{folder}/" for folder in made)])
        return Proof(
            True,
            f"{name} with known-safe options changes only {what}",
            tuple(written),
            (*names, *read, *written, *made),
            False,
            made,
        ), name
    what = "writes only to " + ", ".join(written) if written else "only reads"
    return Proof(True, f"{name} with known-safe options {what}", tuple(written), tuple(names), any(walking)), name


def line_problem(tool_name: str, tool_input: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """Why no command of this shell call can be proven alone (self-protection proves each command of a line on its own):
    the line runs elsewhere than bash on GNU/Linux, with variables its tool's input sets, or holds a construct bash reads
    otherwise than the shell reader."""
    command = command_text(tool_input)
    if command is None:
        return f"{tool_name} has no command to read"
    problem = _shell_problem(tool_name, tool_input, env) or _input_problem(tool_name, tool_input) or _line_problem(env)
    if problem:
        return problem
    try:
        script = parse_strict(command)
    except ShellSyntaxError as exc:
        return f"the command cannot be read exactly: {exc}"
    for pipeline in script.pipelines:
        for part in pipeline.commands:
            for word in [*part.assignments, *part.words, *(r.target for r in part.redirects)]:
                if ansi_c_quoted(word.raw):
                    return _SH_ANSI_C.format(word.raw)
    return None


def _line_problem(env: Mapping[str, str]) -> str | None:
    """Why no shell line is proven here: another platform's programs, or a variable that changes how they parse."""
    if sys.platform != "linux":
        return f"the reading programs are modelled as GNU/Linux's, not {sys.platform}'s"
    variable = next((v for v in _PARSING_VARIABLES if v in env), None)
    return f"{variable} is set: the programs read their options otherwise" if variable else None


def prove_script(
    text: str,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    writes: bool = False,
    changes: bool = False,
) -> Proof:
    """Whether a shell command line is a list or pipeline of commands that each only read.

    Given the folder it runs in (and the hook's ``env``), a ``git`` command is proven only when nothing there makes git
    run a program (:func:`guard.protection.git_config.git_problem`). Without one, git's options alone are checked
    (self-protection, which only asks whether a protected file is written). With ``writes``, reading programs may also
    redirect their output to files named as written (:func:`prove_command`), listed in ``written``. With ``changes`` too
    (and a ``cwd``: the project-writes lane), the file utilities of :mod:`guard.protection.file_changes` are proven, their
    files listed in ``written`` and their folders in ``made``.
    """
    env = {} if env is None else env
    if len(text) > MAX_COMMAND:
        return Proof(False, f"the command is larger than {MAX_COMMAND} bytes")
    problem = _line_problem(env)
    if problem:
        return Proof(False, problem)
    try:
        script = parse_strict(text)
    except ShellSyntaxError as exc:
        return Proof(False, f"the command cannot be read exactly: {exc}")
    programs: list[str] = []
    written: list[str] = []
    names: list[str] = []
    made: list[str] = []
    walks = False
    for pipeline in script.pipelines:
        for command in pipeline.commands:
            proof, program = _prove_simple(command, writes, env, cwd, changes)
            if not proof.proven:
                return proof
            programs.append(program)
            written += proof.written
            names += proof.names
            made += proof.made
            walks = walks or proof.walks
    if cwd is not None and "git" in programs:
        from guard.protection.git_config import git_problem

        problem = git_problem(cwd, env)
        if problem:
            return Proof(False, f"git may run a program: {problem}")
    programs_run = ", ".join(dict.fromkeys(programs)) or "empty"
    if written or made:
        changed = [*dict.fromkeys(written), *(f"{folder}/" for folder in dict.fromkeys(made))]
        return Proof(
            True,
            f"programs ({programs_run}) that write only to {', '.join(changed)}",
            tuple(written),
            tuple(names),
            walks,
            tuple(made),
        )
    return Proof(True, f"every command only reads ({programs_run})", (), tuple(names), walks)


def shell_state_change(command: Command, env: Mapping[str, str]) -> str | None:
    """Why running ``command`` may change what a later command of the same line runs or reads (a variable such as PATH, a
    function, an alias, a shell option, the folder), or None. Self-protection proves each command of a line alone: past
    such a command, it proves none."""
    if command.assignments and not command.words:
        return f"it assigns {command.assignments[0].text.split('=', 1)[0]}"
    if _followed_cd(command, env):
        return None  # the folder the following commands run in is followed (guard.protection.naming)
    for word in [*command.words, *(r.target for r in command.redirects)]:
        if "$((" in word.raw or "$[" in word.raw or "${" in word.raw:
            return f"{word.raw!r} may assign a variable as it expands"
    if not command.words:
        return None
    try:
        words = [field.text for field in _word_fields(command.words[0], env)]
        if words[:1] == ["printf"] and len(words) == 1 and len(command.words) > 1:
            words += [field.text for field in _word_fields(command.words[1], env)]
    except NotModelled:
        return f"the command {command.words[0].raw!r} … is not known until it runs (printf's first argument included)"
    if words and words[0] in _STATE_CHANGERS:
        return f"{words[0]} changes the shell's state"
    if words[:1] == ["printf"] and any(text.startswith("-v") for text in words[1:2]):
        return "printf -v assigns a variable"
    return None


def _reading_program(command: Command, env: Mapping[str, str]) -> tuple[str, Parsed, tuple[Field, ...]] | None:
    """``command`` read exactly as a reading program, wrappers peeled (``timeout 5``, ``nice``, ``xargs`` …): its name,
    its parsed arguments and the words bash makes of them; None when it is not one or is not read exactly."""
    from guard.command_analysis.invocation import unwrap
    from guard.protection.reading_programs import BUILTINS, PROGRAMS, program

    run = unwrap(command, [], 0)
    if run is None:
        return None
    try:
        fields = [field for word in (run.head, *run.args) for field in _word_fields(word, env)]
    except NotModelled:
        return None
    if not fields or fields[0].pattern:
        return None
    name = os.path.basename(fields[0].text)
    if name not in PROGRAMS or name in BUILTINS:
        return None
    prog = program(name)
    assert prog is not None
    parsed = prog.parse(fields[1:])
    return None if parsed.problem else (name, parsed, tuple(fields[1:]))


class TreeWalk(NamedTuple):
    """What a reading program does below the folders it names (or the working directory), read exactly."""

    #: it reads below them: ``grep x .. --dereferen`` is ``grep -R``
    walks: bool
    #: it follows the symbolic links it meets there (``grep -R``, ``rg -L``, ``find -L`` …:
    #: :func:`guard.protection.reading_programs.follows_links`), or may: a glob of its arguments may match a name in
    #: the working directory that it reads as such an option
    follows: bool


def tree_walk(command: Command, cwd: str, env: Mapping[str, str]) -> TreeWalk:
    """:class:`TreeWalk` of ``command`` run in ``cwd``; neither for a command the prover does not read."""
    from guard.protection.reading_programs import follows_links, walks

    read = _reading_program(command, env)
    if read is None:
        return TreeWalk(False, False)
    name, parsed, fields = read
    follows = follows_links(name, parsed) is not None or (
        any(f.pattern and f.text[:1] not in _PLAIN_START for f in fields) and dash_names(cwd)
    )
    return TreeWalk(walks(name, parsed), follows)


def dash_names(cwd: str) -> bool:
    """Whether ``cwd`` holds a name starting with ``-``, which a glob there (``grep x *``) would hand a program as an
    option (``-R``); bounded: a folder too large to list counts as holding one."""
    try:
        with os.scandir(cwd) as entries:
            for count, entry in enumerate(entries):
                if entry.name.startswith("-") or count > 100_000:
                    return True
    except OSError:
        return False  # no such folder: a glob there matches nothing
    return False


def _followed_cd(command: Command, env: Mapping[str, str]) -> bool:
    """``cd`` or ``pushd`` to a folder named as written (or home), with no CDPATH to search: the one change of state
    self-protection follows, reading the next commands' paths from that folder."""
    words = command.words
    return (
        bool(words)
        and words[0].raw in ("cd", "pushd")
        and len(words) <= 2
        and not command.assignments
        and not command.redirects
        and not env.get("CDPATH")
        and all(_static(w) for w in words[1:])
    )


def _static(word: Word) -> bool:
    return not (
        word.dynamic or word.glob or word.substitutions or word.process or word.text.startswith("-") or "{" in word.raw
    )


def command_text(tool_input: Mapping[str, Any]) -> str | None:
    """A shell tool's command line: ``command`` / ``cmd`` as a string, or an argv list (Codex) joined back. None when
    there is none, or when both keys hold different lines: which one the client runs is not known (Codex's
    ``exec_command`` runs ``cmd``), so neither is read as the call's."""
    lines = {text for text in (_line(tool_input.get(key)) for key in ("command", "cmd")) if text is not None}
    return lines.pop() if len(lines) == 1 else None


def _line(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        if len(value) >= 3 and os.path.basename(value[0]) in ("bash", "sh", "zsh") and value[1] in ("-c", "-lc"):
            return str(value[2])  # Codex runs ["bash", "-lc", SCRIPT]
        import shlex

        return shlex.join(value)
    return None


def _shell_problem(tool_name: str, tool_input: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """Why the shell that runs this call's line may not read it as bash does."""
    shell = line_shell(tool_name, tool_input, env)
    if shell is None:
        return None
    if os.path.basename(shell) not in _BASH_LIKE:
        return f"the line runs in {shell}, not bash"
    if not any(isinstance(tool_input.get(key), list) for key in ("command", "cmd")):
        return None  # the client's own shell (Claude Code's, found as it finds it), not one the call names
    # an argv the client runs as given (Codex's ["bash", "-lc", LINE]): ./bash may be a program the agent wrote
    if "/" in shell:
        folder = os.path.dirname(os.path.normpath(shell))
        real = os.path.dirname(os.path.realpath(shell))
        return None if folder in _SYSTEM_BIN and real in _SYSTEM_BIN else f"{shell} is not the system's shell"
    return _resolve(shell, None, env)


def line_shell(tool_name: str, tool_input: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """The shell that runs this call's line when it is not bash's reading by default: the one Codex names in the argv
    (``zsh -lc``), or for a Bash call the one :func:`claude_code_shell` finds ("no shell found" when none); else None."""
    for key in ("command", "cmd"):
        value = tool_input.get(key)
        if (
            isinstance(value, list)
            and len(value) >= 3
            and value[1:2] in (["-c"], ["-lc"])
            and isinstance(value[0], str)
        ):
            return value[0]
    if tool_name.lower() != "bash":
        return None
    return claude_code_shell(env) or "no shell found"


def claude_code_shell(env: Mapping[str, str]) -> str | None:
    """The shell Claude Code runs a Bash call in, found as it finds it (2.1.x): ``CLAUDE_CODE_SHELL`` then ``SHELL`` when
    it names bash or zsh and runs; else zsh before bash (bash first when ``SHELL`` is bash), on PATH and then in
    :data:`_CLIENT_SHELL_FOLDERS`. With ``SHELL`` unset or ``/bin/sh``, a machine with zsh gets zsh."""
    named = [
        value
        for value in (env.get("CLAUDE_CODE_SHELL"), env.get("SHELL"))
        if value and ("bash" in value or "zsh" in value)
    ]
    order = ("bash", "zsh") if os.path.basename(env.get("SHELL", "")) == "bash" else ("zsh", "bash")
    # looked at one by one, as Claude Code does: a user whose SHELL is bash costs one stat, not two PATH scans
    candidates = itertools.chain(
        named,
        (order[0],),
        (os.path.join(folder, name) for name in order for folder in _CLIENT_SHELL_FOLDERS),
        (order[1],),
    )
    for candidate in candidates:
        # a bare name is run as Claude Code runs it (``zsh --version``): found on PATH
        found = candidate if os.path.isabs(candidate) else which(candidate, env)
        if found and os.path.isfile(found) and os.access(found, os.X_OK):
            return found
    return None


def which(name: str, env: Mapping[str, str]) -> str | None:
    """Where ``PATH`` finds ``name`` (``shutil.which`` without its import), or None."""
    for folder in (env.get("PATH") or os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def is_shell_tool(tool_name: str) -> bool:
    """Whether ``tool_name`` runs its input's ``command`` as a shell line: a client's shell tool, or an MCP server's
    ``…__bash`` / ``…__shell``."""
    name = tool_name.lower()
    return name in SHELL_TOOLS or name.endswith(("__bash", "__shell"))


def command_folder(tool_input: Mapping[str, Any]) -> str | None:
    """The folder a shell tool's input says its command runs in (Gemini's ``directory``, Codex's ``workdir`` …), as
    given: absolute, or relative to the event's ``cwd``; None when it names none."""
    return next((v for v in (tool_input.get(k) for k in _FOLDER_KEYS) if isinstance(v, str) and v), None)


def _input_problem(tool_name: str, tool_input: Mapping[str, Any]) -> str | None:
    """Why a shell tool's input may run its command otherwise than the line says: with variables or as another user it
    sets, or in a folder it names other than as one string (two keys that differ, a list …)."""
    given = next((key for key in _RUN_WITH_KEYS if tool_input.get(key)), None)
    if given:
        return f"{tool_name}'s {given!r} sets what its command runs with"
    folders = {repr(v) for v in (tool_input.get(k) for k in _FOLDER_KEYS) if v not in (None, "")}
    if len(folders) > 1 or (folders and command_folder(tool_input) is None):
        return f"{tool_name} names the folder its command runs in otherwise than as one string"
    return None


def prove(
    tool_name: str,
    tool_input: Mapping[str, Any],
    cwd: str,
    env: Mapping[str, str],
    *,
    writes: bool = False,
    changes: bool = False,
) -> Proof:
    """Whether the call ``tool_name(tool_input)`` only reads, run in ``cwd`` with the hook's ``env`` (what git would read there).

    With ``writes``, a shell command's redirections to named files are allowed and listed (:func:`prove_script`); with
    ``changes`` too, the file utilities of :mod:`guard.protection.file_changes`.
    """
    name = tool_name.lower()
    if name in READ_TOOLS:
        return Proof(True, f"{tool_name} is a built-in read tool")
    if is_shell_tool(name):
        command = command_text(tool_input)
        if command is None:
            return Proof(False, f"{tool_name} has no command to read")
        problem = _shell_problem(tool_name, tool_input, env) or _input_problem(tool_name, tool_input)
        if problem:
            return Proof(False, problem)
        folder = command_folder(tool_input)
        if folder and writes:
            return Proof(False, f"{tool_name} runs in {folder}: the files it writes are not the ones checked")
        return prove_script(command, os.path.join(cwd, folder) if folder else cwd, env, writes=writes, changes=changes)
    return Proof(False, f"{tool_name} is not a known read-only tool")
