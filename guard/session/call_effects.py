"""What a tool call does with the project's files: which it writes, whether it may run code it does not name, which code it runs.

Three questions the record of what the agent wrote (:mod:`guard.session.provenance`) asks of a call:

- :func:`written_paths`: the files the call names as written: a Write, Edit, MultiEdit or NotebookEdit's file, each
  file of an ``apply_patch``, the path arguments of an MCP tool whose name says it writes, and in a shell line the
  targets of output redirections, ``tee``, ``sed -i``, ``cp``/``mv``/``ln``/``install`` destinations, ``touch``,
  ``truncate``, ``dd of=``, and what ``rm`` deletes; a name that is a link to a file, and the file it leads to (the
  write lands there). A program that writes files it does not name (``tar x``, ``git checkout``, a script) is found by
  the project walk instead (:func:`guard.session.provenance.changed_since`).
- :func:`writes_unnamed`: whether a shell line may put content in a file :func:`written_paths` does not name: a
  redirection to a name that expands at run time, or a copy, move, link or ``tee`` the prover cannot name every file of
  (an option it does not model, a link the line makes or removes on the way).
- :func:`runs_code`: whether the call may run code of the project without naming it. Proven not to only for a shell
  line whose every command is a reading program the prover knows (:mod:`guard.protection.readonly`) or a file utility
  that runs nothing (``rm``, ``mkdir``, ``cp``, ``mv`` …), each a shell builtin or found on ``PATH`` in a system folder
  (not one the agent could have written), with no assignment before it and nothing substituted, in its words, its
  redirections or its here-documents (a file utility's operands may name files through ``~`` or a pattern:
  ``rm -rf ~/old``, ``rm *.pyc``). Any other program
  (``python``, ``pytest``, ``make``, ``npm``, ``cargo``, ``go``, ``tox``, an unknown runner) and every MCP tool may.
- :func:`run_identity`: the code a shell call runs, spelled one way, so a judgement of ``python3 x.py`` answers
  ``python x.py``, ``./x.py`` (a Python shebang), ``/abs/x.py`` and ``cd /p && python x.py 2>&1`` too. Only a line of
  the plain form ``[cd DIR &&]… COMMAND [| COMMAND]… [&& …]`` has one: literal words, separators ``&&`` and ``|``
  only, no here-document; the interpreter's name is read as its family (``python3.11`` → python), a script as its
  resolved path (the caller keys it on the script's content), redirections that only merge or drop output
  (``2>&1``, ``>/dev/null``) and filters of a pipeline's output (``| head -20``, ``| grep error``: reading programs
  with no file operand) are left out, and everything else is kept as written.

Standard library only: the ``guard hook`` fast path asks these of every shell call that is not decided in a lane.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from guard.command_analysis.shell_syntax import Command, Script, Word

__all__ = ["family", "outlives", "run_identity", "runs_code", "shell_command", "writes_unnamed", "written_paths"]

#: Programs that change files and never run one: a line of these (and reading programs) runs no project code.
_FILE_UTILITIES = frozenset(
    {"rm", "rmdir", "mkdir", "touch", "cp", "mv", "ln", "chmod", "chown", "chgrp", "tee", "truncate", "unlink"}
)
#: File utilities that put content in a file; with the removals, what may change which file a name leads to: a line
#: that writes and holds one is named exactly only as the project-writes lane's prover names it.
_PUTTING = frozenset({"cp", "mv", "ln", "tee", "install"})
_PLACING = _PUTTING | {"rm", "unlink", "rmdir"}
#: Programs that leave what they run going after the line ends (or start it later).
_DETACHING = frozenset(
    {
        "nohup",
        "setsid",
        "disown",
        "at",
        "batch",
        "screen",
        "tmux",
        "systemd-run",
        "daemonize",
        "start-stop-daemon",
        "coproc",
    }
)
#: Routes that make, replace or remove a link itself, not the file it leads to.
_ON_LINKS = frozenset({"shell: ln", "shell: rm", "shell: unlink"})
#: bash builtins that run nothing found on PATH (and ``cd``, which only moves).
_BUILTINS = frozenset({"cd", "echo", "printf", "pwd", "true", "false", ":", "test", "[", "type"})
#: Where a program the agent cannot have written lives.
_SYSTEM_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")
#: Output redirections that write a file (the operator without its descriptor number).
_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})
#: Redirections that only merge or drop output: left out of a run's identity.
_PLUMBING = re.compile(r"^(?:[12]?>&[12]|[12]?>\s*/dev/null|&>\s*/dev/null)$")
#: Reading programs that, later in a pipeline with no file operand, only filter the output before them: their
#: options that take the next word as a value, and how many operands are not files (a pattern, tr's sets).
_FILTERS = {
    "head": ("nc", 0),
    "tail": ("nc", 0),
    "grep": ("efmABCd", 1),
    "egrep": ("efmABCd", 1),
    "fgrep": ("efmABCd", 1),
    "sort": ("kt", 0),
    "uniq": ("fsw", 0),
    "wc": ("", 0),
    "cut": ("dfcb", 0),
    "tr": ("", 2),
    "cat": ("", 0),
    "nl": ("", 0),
    "tac": ("", 0),
    "column": ("sc", 0),
    "fold": ("w", 0),
}
#: An MCP tool whose name says it changes files.
_MCP_WRITES = re.compile(
    r"write|edit|create|move|copy|rename|patch|delete|remove|save|append|upload|put", re.IGNORECASE
)
_PATH_KEYS = ("file_path", "path", "absolute_path", "notebook_path", "destination", "dest", "target", "new_path", "to")
#: Interpreter names and the family a run is keyed on (python3.11 runs a script as python3 does).
_FAMILIES = (
    (re.compile(r"^python(?:\d+(?:\.\d+)?)?$"), "python"),
    (re.compile(r"^pypy\d?$"), "pypy"),
    (re.compile(r"^(?:node|nodejs)$"), "node"),
    (re.compile(r"^(?:sh|dash)$"), "sh"),
    (re.compile(r"^(bash|zsh|ksh|ruby|perl|php|Rscript)$"), None),
)


def family(program: str) -> str | None:
    """The interpreter family ``program`` (a name or path) belongs to, or None when it is no interpreter."""
    name = os.path.basename(program)
    for pattern, fam in _FAMILIES:
        if pattern.match(name):
            return fam or name
    return None


def shell_command(tool_name: str, tool_input: Mapping[str, Any]) -> str | None:
    """The command line of a shell tool's call (Bash, run_shell_command, exec …), or None for any other tool."""
    from guard.protection.readonly import SHELL_TOOLS, command_text

    name = tool_name.lower()
    if name not in SHELL_TOOLS and not name.endswith(("__bash", "__shell")):
        return None
    return command_text(tool_input) or ""


@lru_cache(maxsize=16)
def _parsed(command: str, strict: bool) -> Script | None:
    """The line as the shell reader reads it (None when it cannot be read): the same line is asked about several times
    per call (does it run code, what does it write, which code), and read once."""
    from guard.command_analysis.shell_syntax import ShellSyntaxError, parse, parse_strict

    try:
        return parse_strict(command) if strict else parse(command)
    except ShellSyntaxError:
        return None


def _system_program(word: str, env: Mapping[str, str]) -> bool:
    """Whether ``word`` runs a builtin or a program in a system folder (never one under the project or the home folder)."""
    from guard.protection.readonly import which

    if word in _BUILTINS:
        return True
    found = word if "/" in word else which(word, env)
    return (
        found is not None
        and os.path.isabs(found)
        and os.path.realpath(found).startswith(_SYSTEM_DIRS)
        and found.startswith(_SYSTEM_DIRS)
    )


def _literal(word: Word) -> bool:
    """Whether the shell runs the word as written: nothing expands in it (a variable, a glob, a substitution, a leading ``~``)."""
    return not (word.dynamic or word.glob or word.substitutions or word.process or word.escapes or word.tilde)


def _named(word: Word) -> bool:
    """Whether the word is literal but for a leading ``~`` or a file-name pattern: expanding it runs nothing."""
    return not (word.dynamic or word.substitutions or word.process or word.escapes)


def _made_by_running(part: Command) -> bool:
    """Whether making an assignment, a redirection's target or a here-document may run a command: a substitution, or
    any parameter expansion (``$((x))``, ``${!x}`` and ``${x@P}`` run the substitutions a variable's value holds)."""
    words = [*part.assignments, *(r.target for r in part.redirects), *(r.body for r in part.redirects if r.body)]
    return any(word.dynamic or word.substitutions or word.process for word in words)


def runs_code(tool_name: str, tool_input: Mapping[str, Any], cwd: str, env: Mapping[str, str]) -> bool:
    """Whether the call, run in ``cwd``, may run code of the project that it does not name (see the module's docstring).

    ``git`` reads its repository's config, hooks and attributes, which may name programs: a line with git runs none
    only when :func:`guard.protection.git_config.git_problem` finds nothing there that would.
    """
    if tool_name.startswith("mcp__"):
        return True
    command = shell_command(tool_name, tool_input)
    if command is None:
        return False
    from guard.protection.readonly import MAX_COMMAND, prove_command

    if not command.strip():
        return False
    if len(command) > MAX_COMMAND:
        return True
    script = _parsed(command, True)
    if script is None:
        return True
    for pipeline in script.pipelines:
        for part in pipeline.commands:
            if _made_by_running(part):
                return True
            if not part.words:
                continue
            head = part.words[0]
            if part.assignments or not _literal(head) or not _system_program(head.text, env):
                return True
            if not all(_literal(w) for w in part.words[1:]):
                # a file utility's operands may name files through the home folder or a pattern (rm -rf ~/old,
                # rm *.pyc): that expansion runs nothing, where a parameter's may ($((x)), ${x@P}, ${!x})
                if os.path.basename(head.text) in _FILE_UTILITIES and all(_named(w) for w in part.words[1:]):
                    continue
                return True
            if os.path.basename(head.text) == "git":
                from guard.protection.git_config import git_problem

                if git_problem(cwd, env):
                    return True
            if prove_command(part, writes=True, env=env, cwd=cwd).proven:
                continue
            if os.path.basename(head.text) not in _FILE_UTILITIES:
                return True
    return False


def _folder_steps(command: str) -> Iterator[tuple[str | None, Command]]:
    """Each simple command of the line with the folder it runs in, relative to the call's (None once a ``cd`` is not literal)."""
    script = _parsed(command, False)
    if script is None:
        return
    folder: str | None = "."
    for pipeline in script.pipelines:
        for part in pipeline.commands:
            words = part.words
            if words and words[0].text == "cd":
                literal = len(words) == 2 and _literal(words[1]) and folder is not None
                folder = (
                    os.path.join(folder, os.path.expanduser(words[1].text)) if literal and folder is not None else None
                )
                continue
            yield folder, part


def _operands(texts: list[str]) -> list[str]:
    """The arguments that are not options (everything after ``--`` is an operand)."""
    out: list[str] = []
    rest = False
    for text in texts:
        if rest or not text.startswith("-") or text == "-":
            out.append(text)
        elif text == "--":
            rest = True
    return out


def _sed_files(texts: list[str]) -> list[str]:
    """The files ``sed -i`` edits in place (none without ``-i``): the operands after its script."""
    in_place = any(
        t == "--in-place" or t.startswith("--in-place=") or (t.startswith("-") and not t.startswith("--") and "i" in t)
        for t in texts
    )
    if not in_place:
        return []
    given = any(
        t in ("-e", "-f", "--expression", "--file") or t.startswith(("--expression=", "--file=")) for t in texts
    )
    skip = {i + 1 for i, t in enumerate(texts) if t in ("-e", "-f", "--expression", "--file")}
    operands = [t for i, t in enumerate(texts) if i not in skip and (not t.startswith("-") or t == "-")]
    return operands if given else operands[1:]


def _copied(texts: list[str], folder: str) -> list[str]:
    """Where ``cp``/``mv``/``ln``/``install`` put files: the destination, or each source's name inside a destination folder."""
    target = next((texts[i + 1] for i, t in enumerate(texts[:-1]) if t in ("-t", "--target-directory")), None)
    target = target or next((t.split("=", 1)[1] for t in texts if t.startswith("--target-directory=")), None)
    operands = [t for t in _operands(texts) if t != target]
    if target is not None:
        return [os.path.join(target, os.path.basename(src.rstrip("/"))) for src in operands]
    if len(operands) < 2:
        return []
    *sources, dest = operands
    if dest.endswith("/") or os.path.isdir(os.path.join(folder, dest)) or len(sources) > 1:
        return [os.path.join(dest, os.path.basename(src.rstrip("/"))) for src in sources]
    return [dest]


def _named_by(part: Command, folder: str) -> list[tuple[str, str]]:
    """(file as written, how) for each file one simple command, run in ``folder``, names as written."""
    found = [
        (r.target.text, f"shell: {r.op} redirection")
        for r in part.redirects
        if r.op in _WRITE_OPS and _literal(r.target) and r.target.text and not r.target.text.startswith(("&", "/dev/"))
    ]
    if not part.words or not all(_literal(w) for w in part.words):
        return found
    program, texts = os.path.basename(part.words[0].text), [w.text for w in part.words[1:]]
    how = f"shell: {program}"
    if program == "tee":
        found += [(t, how) for t in _operands(texts)]
    elif program == "sed":
        found += [(t, "shell: sed -i") for t in _sed_files(texts)]
    elif program in ("cp", "mv", "ln", "install"):
        found += [(t, how) for t in _copied(texts, folder)]
    elif program in ("touch", "truncate", "rm", "unlink"):
        skip = {
            i + 1 for i, t in enumerate(texts) if program == "truncate" and t in ("-s", "-r", "--size", "--reference")
        }
        found += [(t, how) for i, t in enumerate(texts) if i not in skip and (not t.startswith("-"))]
    elif program == "dd":
        found += [(t[3:], how) for t in texts if t.startswith("of=")]
    return found


def written_paths(tool_name: str, tool_input: Mapping[str, Any], cwd: str) -> list[tuple[str, str]]:
    """(absolute path, how it is written) for each file the call names as written (see the module's docstring)."""
    from guard.core.actions import PATCH_LINE, patch_text, tool_kind

    kind = tool_kind(tool_name)
    named: list[tuple[str, str]] = []
    if kind in ("write", "edit") or (kind == "mcp" and _MCP_WRITES.search(tool_name.rsplit("__", 1)[-1])):
        how = f"MCP tool {tool_name}" if kind == "mcp" else tool_name
        named = [(v, how) for k in _PATH_KEYS if isinstance(v := tool_input.get(k), str) and v]
        if kind != "mcp":
            named = named[:1]
    elif kind == "patch":
        text = patch_text(dict(tool_input)) or ""
        named = [
            (m.group(2) or m.group(3), tool_name) for line in text.splitlines() if (m := PATCH_LINE.match(line.strip()))
        ]
    else:
        command = shell_command(tool_name, tool_input)
        if command:
            named = [
                (os.path.join(folder, path), how)
                for folder, part in _folder_steps(command)
                if folder is not None
                for path, how in _named_by(part, os.path.join(cwd, folder))
            ]
    out: dict[str, str] = {}
    for raw, how in named:
        path = os.path.normpath(os.path.join(cwd, os.path.expanduser(raw.strip())))
        folder, name = os.path.split(path)
        path = os.path.join(os.path.realpath(folder), name)  # the folder's symlinks resolved, as the walk names files
        out.setdefault(path, how)
        if os.path.islink(path) and how not in _ON_LINKS:  # the content lands in the file it leads to
            out.setdefault(os.path.realpath(path), how)
    return list(out.items())


def writes_unnamed(tool_name: str, tool_input: Mapping[str, Any], cwd: str, env: Mapping[str, str]) -> bool:
    """Whether the shell call may put content in a file :func:`written_paths` does not name: an output redirection to a
    name that expands at run time (``> "$PWD/.venv/…/x.py"``, a glob), or a line that writes with a copy, move, link,
    ``tee`` or removal in it that the project-writes lane's prover does not name every file of (``cp -S``, ``cp
    --parents``, ``ln -s`` to a folder the line then writes through and removes). A program that writes files it does not name (``tar x``,
    a script) is left to the project walk, which does not look below the folders of other people's code."""
    command = shell_command(tool_name, tool_input)
    if not command:
        return False
    script = _parsed(command, False)
    if script is None:
        return True  # a line the shell reader cannot read: none of its writes is named
    writes = placing = False
    for pipeline in script.pipelines:
        for part in pipeline.commands:
            redirected = [r for r in part.redirects if r.op in _WRITE_OPS]
            if any(not _literal(r.target) for r in redirected):
                return True
            program = os.path.basename(part.words[0].text) if part.words else ""
            writes = writes or bool(redirected) or program in _PUTTING
            placing = placing or program in _PLACING
    if not (writes and placing):
        return False
    from guard.protection.readonly import prove_script

    return not prove_script(command, cwd, env, writes=True, changes=True).proven


def outlives(tool_name: str, tool_input: Mapping[str, Any]) -> bool:
    """Whether the shell call may leave something running that writes after the call has ended: a background job
    (``&``, the client's ``run_in_background``) or a program that detaches one (``nohup``, ``setsid``, ``at`` …).
    Its unnamed writes may land after any walk, and a walk that came first must not be the last to look."""
    command = shell_command(tool_name, tool_input)
    if not command:
        return False
    if tool_input.get("run_in_background") is True:
        return True
    quote, previous = "", ""
    for at, c in enumerate(command):
        if quote:  # a backslash escapes nothing in single quotes ('x\' ends there), but does in $'…' (held as "$")
            quote = "" if c == quote.replace("$", "'") and (previous != "\\" or quote == "'") else quote
        elif c in "'\"" and previous != "\\":
            quote = "$" if c == "'" and previous == "$" else c
        elif c == "&" and previous not in ("&", ">", "<", "|", "\\") and command[at + 1 : at + 2] not in ("&", ">"):
            return True
        elif c == "(" and previous in ("<", ">"):  # a process substitution: bash does not wait for it
            return True
        previous = "" if previous == "\\" else c
    script = _parsed(command, False)
    return script is None or any(_detaches(part) for pipeline in script.pipelines for part in pipeline.commands)


def _detaches(command: Command) -> bool:
    """Whether ``command`` is ``coproc`` or a detaching program, itself or behind wrappers (``env setsid -f``)."""
    from guard.command_analysis.invocation import command_name, unwrap

    invocation = unwrap(command, [], 0)
    at = next((k for k, word in enumerate(command.words) if invocation is not None and word is invocation.head), None)
    ahead = command.words if at is None else command.words[: at + 1]  # a head a wrapper made (env -S, flock -c): all
    return any(command_name(word.text) in _DETACHING for word in ahead)


def _separators(command: str) -> list[str] | None:
    """The operators between the line's commands (``&&``, ``|``, ``;`` …) outside quotes, or None when it holds a
    here-document, a subshell or anything else the plain form leaves out."""
    found: list[str] = []
    i, quote = 0, ""
    while i < len(command):
        c = command[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c == "\\":
            i += 2
            continue
        elif c in "'\"":
            quote = c
        elif c in "()`{}" or command.startswith("<<", i) or c == "\n":
            return None
        elif command.startswith(("&&", "||"), i):
            found.append(command[i : i + 2])
            i += 2
            continue
        elif c in ";|&":
            if c == "&" and (command[i - 1 : i] in (">", "<") or command[i + 1 : i + 2] == ">"):
                i += 1  # 2>&1, &>file: a redirection, not a separator
                continue
            found.append(c)
        i += 1
    return None if quote else found


def _shebang_family(path: str) -> str:
    """The interpreter family a script's ``#!`` line names (``sh`` without one: the shell runs it)."""
    try:
        with open(path, "rb") as fh:
            line = fh.readline(256).decode(errors="replace")
    except OSError:
        return "exec"
    if not line.startswith("#!"):
        return "sh"
    words = [w for w in line[2:].split() if not w.startswith("-")]
    if words and os.path.basename(words[0]) == "env":
        words = words[1:]
    return (family(words[0]) or os.path.basename(words[0])) if words else "sh"


def _run_step(part: Command, folder: str, env: Mapping[str, str]) -> tuple[dict[str, Any], list[str]] | None:
    """One command of a run: its identity and the files whose content it runs (a script; a program outside the system's folders)."""
    from guard.command_analysis.invocation import script_word
    from guard.protection.readonly import which

    if not part.words or not all(_literal(w) for w in (*part.words, *part.assignments)):
        return None
    redirects = []
    for r in part.redirects:
        if not _literal(r.target) or r.body is not None:
            return None
        if not _PLUMBING.match(f"{r.op}{r.target.text}"):
            redirects.append([r.op, r.target.text])
    texts = [w.text for w in part.words]
    step: dict[str, Any] = {"set": [w.text for w in part.assignments], "redirects": redirects}
    script = script_word(part.words)
    if script is not None and script.text not in ("-",):
        at = next(i for i, w in enumerate(part.words) if w is script)
        path = os.path.realpath(os.path.join(folder, os.path.expanduser(script.text)))
        fam = _shebang_family(path) if at == 0 else (family(texts[0]) or os.path.basename(texts[0]))
        return {**step, "run": fam, "options": texts[1:at] if at else [], "script": path, "args": texts[at + 1 :]}, [
            path
        ]
    program = texts[0]
    found = which(program, env) if "/" not in program else os.path.join(folder, program)
    if found is None:
        return None
    real = os.path.realpath(found)
    system = real.startswith(_SYSTEM_DIRS) and "/" not in program
    return {**step, "program": program if system else real, "args": texts[1:]}, [] if system else [real]


def _filter(part: Command, folder: str, env: Mapping[str, str]) -> bool:
    """Whether a command after the first of a pipeline only filters what it reads on stdin (``| head -20``, ``| grep x``):
    a proven reading program whose only operand is a pattern, left out of a run's identity."""
    from guard.protection.readonly import prove_command

    name = os.path.basename(part.words[0].text) if part.words else ""
    if name not in _FILTERS or part.redirects or not prove_command(part, env=env, cwd=folder).proven:
        return False
    values, allowed = _FILTERS[name]
    texts = [w.text for w in part.words[1:]]
    operands = [
        t
        for i, t in enumerate(texts)
        if not t.startswith("-")
        and not (i and len(texts[i - 1]) == 2 and texts[i - 1][0] == "-" and texts[i - 1][1] in values)
    ]
    return len(operands) <= allowed


def run_identity(
    tool_name: str, tool_input: Mapping[str, Any], cwd: str, env: Mapping[str, str]
) -> tuple[dict[str, Any], list[str]] | None:
    """The call's code in one spelling, and the files whose content keys it; None when the line is not of the plain form."""
    command = shell_command(tool_name, tool_input)
    if not command or "<<" in command or "\n" in command:
        return None
    separators = _separators(command)
    if separators is None or any(s not in ("&&", "|") for s in separators):
        return None
    script = _parsed(command, True)
    if script is None:
        return None
    folder = os.path.realpath(cwd)
    pipelines: list[list[dict[str, Any]]] = []
    files: list[str] = []
    for pipeline in script.pipelines:
        words = pipeline.commands[0].words if pipeline.commands else []
        if len(pipeline.commands) == 1 and words and words[0].text == "cd" and not pipelines:
            if len(words) != 2 or not _literal(words[1]) or pipeline.commands[0].redirects:
                return None
            folder = os.path.realpath(os.path.join(folder, os.path.expanduser(words[1].text)))
            continue
        steps = []
        for position, part in enumerate(pipeline.commands):
            if position and _filter(part, folder, env):
                continue
            step = _run_step(part, folder, env)
            if step is None:
                return None
            steps.append(step[0])
            files += step[1]
        pipelines.append(steps)
    if not pipelines:
        return None
    return {"folder": folder, "pipelines": pipelines}, files
