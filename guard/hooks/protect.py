"""The built-in self-protection rule: the guarded agent may not change guard itself.

An agent with a Write or Bash tool could otherwise edit guard.yaml, drop guard's
entry from the client's hook settings, rewrite guard's state, replace the secret
its seals rely on (:mod:`guard.storage.secret`), or run guard's own CLI. This hook judges
every PreToolUse call, of every tool of every client, by what it *names*
(:mod:`guard.protection.naming`: every string of the input, expanded as the shell
and the tool would), never by a list of bad verbs:

* a call naming the secret, or searching a tree above it (``grep -r``, ``find``,
  the Grep and Glob tools, ``tar``, ``cp -r`` …), is refused;
* a call that runs guard or calls its service is refused
  (:mod:`guard.protection.self_invocation`);
* a call naming another protected path (:mod:`guard.protection.targets`), a
  folder holding one, or sweeping the tree it runs in, runs only when the
  read-only prover (:mod:`guard.protection.readonly`) proves that what names it
  only reads; each simple command of a shell line is judged on its own;
* a call too large to look at within the bounds is refused, whatever the
  failure mode: the agent chose its size.

What parsing cannot see (a path built at run time, code that computes one,
base64 fed to a shell) is left to smart rules and the client's sandbox
(docs/threat-model.md). It is on unless guard.yaml says ``protect: false``.
Standard library only: it runs on the ``guard hook`` fast path for every tool call.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
import sys
import time
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from guard.core.decision import DecisionName, HookResult
from guard.core.spec import HookSpec, ProtectSettings
from guard.protection import targets

if TYPE_CHECKING:
    from guard.core.events.model import Event
    from guard.core.hook import HookContext
    from guard.protection.naming import Unit
    from guard.protection.readonly import Proof

__all__ = ["ProtectHook", "judge"]

#: Labels of protected paths, as the deny reason names them (what is protected: :mod:`guard.protection.targets`).
CONFIG, STATE, CLIENT, SECRET = targets.CONFIG, targets.STATE, targets.CLIENT, targets.SECRET
#: Text in a command that names an agent CLI (the programs and packages of :data:`guard.protection.nested_agent.AGENTS`):
#: its check loads only for such a line.
_AGENT_NAMES = ("claude", "codex", "gemini", "copilot")
#: macOS file systems ignore case by default: Guard.yaml is guard.yaml there.
_CASE_INSENSITIVE = sys.platform == "darwin"


def _hard_link(target: str, protected: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The protected file ``target`` is another name of (a hard link shares its inode), if any."""
    try:
        found = os.stat(target)
    except (OSError, ValueError):
        return None
    if found.st_nlink < 2:
        return None  # the common case: one name only, and symlinks are resolved by the caller
    for label, path in protected:
        try:
            if os.path.samestat(found, os.stat(path)):
                return label, path
        except OSError:
            continue
    return None


def _above(path: str, folder: str) -> bool:
    """Whether ``folder`` is a folder holding ``path`` (at any depth)."""
    return folder == "/" or path.startswith(folder.rstrip("/") + "/")


class _Index:
    """Protected paths by name, and the folders holding them, for lookups that cost the same for 5 or 500 paths."""

    def __init__(self, protected: tuple[tuple[str, str], ...]) -> None:
        self.protected = protected
        self.exact: dict[str, tuple[str, str]] = {}
        self.holders: dict[str, tuple[str, str]] = {}
        self.depth = 0
        #: project folders, below which client settings are protected by name (:func:`targets.project_folders`)
        self.below = tuple(_fold(folder).rstrip("/") + "/" for folder in targets.project_folders(protected))
        for label, path in protected:
            path = _fold(path)
            self.exact.setdefault(path, (label, path))
            self.depth = max(self.depth, path.count("/"))
            end = path.rfind("/")
            while end > 0 and path[:end] not in self.holders:  # each folder above it, up to one already listed
                self.holders[path[:end]] = (label, path)
                end = path.rfind("/", 0, end)
            self.holders.setdefault("/", (label, path))

    def named(self, unit: Unit, *, sweeping: bool) -> tuple[str, str, str] | None:
        """(label, protected path, the folder named that holds it, or "") for what ``unit`` names: the path, inside it, a
        folder holding it, or a glob matching one.

        A folder at or above the unit's working directory counts only when ``sweeping``
        (the unit acts on a whole tree) or the unit moves it (:attr:`Unit.moves`: ``mv .. /tmp/p``): ``pytest .``
        names the project, not its guard.yaml.
        A sweep counts only what it can touch: a protected path that exists, unless it may
        create files there (:attr:`Unit.creates`), and not one it leaves alone (:attr:`Unit.spared`).
        What the unit puts onto the root (``cp -r tmp /``) always counts. A folder ``mv`` moves away, where what it moves
        to is known, counts for what it holds that exists: moving ``app`` moves no ``app/.guard`` that is not there (where
        it moves it to, it may create, and so may ``mv --exchange`` or ``rename``, whose every operand may be a target).
        """
        cwd = _fold(unit.cwd)
        existing = sweeping and not unit.creates
        moved = frozenset() if unit.moves is None else frozenset(self.holders) - set(map(_fold, unit.moves))
        for candidate in map(_fold, unit.paths):
            hit = self.exact.get(candidate) or self._inside(candidate) or self._by_name(candidate, glob=False)
            if hit:
                return (*hit, "")
            holder = self.holders.get(candidate)
            if holder and (
                sweeping
                or candidate in unit.onto_root
                or candidate in moved
                or not (candidate == cwd or _above(cwd, candidate))
            ):
                holder = self._under(candidate, unit, existing=existing or (candidate in moved and bool(unit.moves)))
                if holder:
                    return (*holder, candidate)
        for spelt in unit.patterns:
            named = self._by_name(_fold(spelt), glob=True)
            if named:
                return (*named, "")
            pattern = spelt.lower()  # in either case: ``shopt -s nocaseglob`` is the line's to set
            for path, hit in self.exact.items():
                if fnmatch.fnmatchcase(path.lower(), pattern):
                    return (*hit, "")
            for folder in self.holders:
                if (sweeping or folder in moved or not (folder == cwd or _above(cwd, folder))) and fnmatch.fnmatchcase(
                    folder.lower(), pattern
                ):
                    holder = self._under(folder, unit, existing=existing or (folder in moved and bool(unit.moves)))
                    if holder:
                        return (*holder, folder)
        linked = next(filter(None, (_hard_link(p, self.protected) for p in sorted(unit.paths)[:256])), None)
        return (*linked, "") if linked else None

    def _by_name(self, path: str, *, glob: bool) -> tuple[str, str] | None:
        """Client settings below a project folder, by name (:data:`targets.CLIENT_NAMES`): ``path`` is such a file or
        lies in such a folder, or it is a folder holding one that exists (``mv wt/.claude …``). A glob counts when it
        spells the names out: like bash, it matches a name starting with ``.`` only with a ``.`` of its own. A folder
        holding one deeper is not looked for here (that would walk the tree on every call): a Claude Code worktree's
        are named exactly (:func:`targets.worktree_settings`), so ``rm -r .claude/worktrees/x`` reaches them."""
        if "/." not in path:  # every client name starts with a dot: most paths end here
            return None
        for root in self.below:
            if not path.startswith(root):
                continue
            parts = path[len(root) :].split("/")
            for names in targets.CLIENT_NAMES:
                for at in range(len(parts)):
                    size = min(len(names), len(parts) - at)
                    if not all(_same(names[i], parts[at + i], glob=glob) for i in range(size)):
                        continue
                    if size == len(names):
                        return CLIENT, path
                    held = path + "/" + "/".join(names[size:])
                    if not glob and os.path.lexists(held):
                        return CLIENT, held
        return None

    def _under(self, folder: str, unit: Unit, *, existing: bool) -> tuple[str, str] | None:
        """A protected path in ``folder`` that the unit would reach (``find -name PATTERN``: a part of its path below matches),
        one that exists first; with ``existing``, only one that exists; never one the unit spares."""
        missing = None
        for path, hit in self.exact.items():
            if not _above(path, folder) or path in unit.spared:
                continue
            if unit.only_names is not None:
                pattern, fold = unit.only_names
                parts = path[len(folder.rstrip("/")) + 1 :].split("/")
                if not any(
                    fnmatch.fnmatchcase(part.lower() if fold else part, pattern.lower() if fold else pattern)
                    for part in parts
                ):
                    continue
            if os.path.lexists(path):
                return hit
            missing = missing or hit
        return None if existing else missing

    def _inside(self, candidate: str) -> tuple[str, str] | None:
        """The protected folder ``candidate`` lies in, looking only as deep as the deepest protected path."""
        at = 0
        for _ in range(self.depth):
            at = candidate.find("/", at + 1)
            if at < 0:
                return None
            hit = self.exact.get(candidate[:at])
            if hit:
                return hit
        return None


@lru_cache(maxsize=32)
def _index(protected: tuple[tuple[str, str], ...]) -> _Index:
    """The index of ``protected``, built once: a service or an SDK's gate checks the same paths on every call."""
    return _Index(protected)


def _same(name: str, part: str, *, glob: bool) -> bool:
    """Whether the path's name ``part`` (a glob's, with ``glob``) is ``name``."""
    if not glob:
        return part == name
    return fnmatch.fnmatchcase(name, part) and (part[:1] == "." or name[:1] != ".")


def _fold(path: str) -> str:
    return path.lower() if _CASE_INSENSITIVE else path


def _proof(tool: str, tool_input: dict[str, Any], unit: Unit, protected: _Index, cwd: str, before: str | None) -> Proof:
    """Whether what ``unit`` does only reads; a shell command's output sent elsewhere (``> /tmp/out``) does not count against it.

    A command of a shell line is proven alone, so only when the line is one bash reads as the shell reader does, and no
    command ``before`` it in the line may have changed what it runs (an assignment to PATH, a function, ``printf -v``).
    """
    from guard.command_analysis.shell_syntax import Command
    from guard.protection.naming import named_by
    from guard.protection.readonly import Proof, line_problem, prove, prove_command

    if unit.command is None:
        return prove(tool, tool_input, cwd, os.environ)
    problem = before or line_problem(tool, tool_input, os.environ)
    if problem:
        return Proof(False, problem)
    command = unit.command
    kept = [
        r
        for r in command.redirects
        if r.op.startswith("<")
        or r.target.dynamic
        or r.target.tilde  # ~+ and ~- are the line's folders (after a cd), not the hook's PWD and OLDPWD
        or protected.named(named_by(r.target.text, unit.cwd, os.environ), sweeping=True)
    ]
    return prove_command(
        Command(command.assignments, command.words, kept) if len(kept) < len(command.redirects) else command,
        env=os.environ,
        cwd=unit.cwd,
        alone=True,
    )


def _violation(spec: HookSpec, payload: dict[str, Any]) -> tuple[DecisionName, str] | None:
    """Why this call may not run (``deny``) or needs a person (``ask``: it changes only the shell's start-up files,
    which a user may mean to change, but whose aliases would change what every later proven command runs), or None."""
    from guard.protection.naming import TooLarge, units
    from guard.protection.readonly import shell_state_change, tree_walk
    from guard.protection.self_invocation import runs_guard

    tool = str(payload.get("tool_name") or "")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    cwd = str(payload.get("cwd") or os.getcwd())
    if "\0" in cwd:
        return "deny", "the call's working directory holds a NUL byte"
    entries = ProtectSettings.of(spec).paths + targets.event_paths(
        payload
    )  # the project the event runs in, and its transcript
    entries += tuple(targets.worktree_settings(targets.project_folders(entries)))
    urls = [path for label, path in entries if label == targets.SERVICE]
    asking = (targets.SHELL, targets.AUTOSTART, targets.PATH_FOLDER)
    paths = tuple(entry for entry in entries if entry[0] not in (targets.SERVICE, *asking))
    secret = tuple(p for p in paths if p[0] in targets.READ_PROTECTED_LABELS)
    try:
        found = units(tool, tool_input, cwd, os.environ)
    except TooLarge as exc:
        return "deny", f"the call is too large to judge ({exc})"
    except RecursionError:
        return "deny", "the call is too large to judge (it nests too deeply)"
    secret_index, index = _index(secret), _index(paths)
    zsh = _zsh_reading(tool, tool_input, found, index)
    if zsh:
        return "deny", zsh
    shell_index = _index(tuple(entry for entry in entries if entry[0] in (targets.SHELL, targets.AUTOSTART)))
    path_index = _index(tuple(entry for entry in entries if entry[0] == targets.PATH_FOLDER))
    asked: str | None = None  # the first command that changes the shell's start-up files and nothing else protected
    changed: str | None = None  # why the shell's state may differ from the hook's after the commands seen so far
    said: list[str] = []  # the words of the line's commands so far (a variable they set or name)
    for unit in found:
        if unit.command is not None:
            said += [word.text for word in (*unit.command.assignments, *unit.command.words)]
        follows = False
        if unit.command is not None:
            _braced_names(unit)
            walk = tree_walk(unit.command, unit.cwd, os.environ)
            follows = walk.follows
            if not unit.tree and walk.walks:
                unit.tree = (
                    True  # grep x .. --dereferen: naming did not see the recursion the program's own parser reads
                )
                if not any(os.path.isdir(p) for p in unit.paths):
                    unit.paths.add(os.path.normpath(unit.cwd))
        hit = secret_index.named(unit, sweeping=unit.tree)
        if hit:
            return "deny", f"{_what(unit, tool)} {_how(unit, hit, reads=True)}"
        if follows or _follows_links(unit) or _options_follow_links(unit, said, changed):
            return "deny", f"{_what(unit, tool)} {_FOLLOWS_LINKS}"
        itself = runs_guard(unit, urls, os.environ) or _nested_agent(unit, said, cwd, changed)
        if itself:
            return "deny", f"{_what(unit, tool)} {itself}"
        before = f"an earlier command of the line may change what this one runs ({changed})" if changed else None
        denied = _unproven(tool, tool_input, unit, index, cwd, before)
        if denied:
            return "deny", denied
        asked = (
            asked
            or _unproven(tool, tool_input, unit, shell_index, cwd, before)
            or _unproven(tool, tool_input, _without_program(unit), path_index, cwd, before)
        )
        if unit.command is not None and changed is None:
            changed = shell_state_change(unit.command, os.environ)
    return ("ask", asked) if asked else None


def _nested_agent(unit: Unit, said: list[str], cwd: str, changed: str | None) -> str | None:
    """Why ``unit`` starts an agent CLI session that may run without guard's hooks (:mod:`guard.protection.nested_agent`,
    loaded only for a line that names one of them); ``said``: the words of the line so far (an ``export`` before it),
    ``cwd``: the call's folder, ``changed``: why an earlier command may change the shell's state."""
    if not any(name in text for text in unit.texts for name in _AGENT_NAMES):
        return None
    from guard.protection.nested_agent import unhooked_agent

    return unhooked_agent(unit, said, cwd, changed)


def _without_program(unit: Unit) -> Unit:
    """``unit`` without the path of the program it runs: running ``~/.local/bin/uv`` writes nothing into that folder."""
    import copy

    from guard.command_analysis.invocation import unwrap
    from guard.protection.naming import named_by

    invocation = unwrap(unit.command, [], 0) if unit.command is not None else None
    if invocation is None or "/" not in invocation.head.text:
        return unit
    program = copy.copy(unit)
    program.paths = unit.paths - named_by(invocation.head.text, unit.cwd, os.environ).paths
    return program


def _zsh_reading(tool: str, tool_input: dict[str, Any], found: list[Unit], protected: _Index) -> str | None:
    """Why names zsh reads in the call are not known here (:mod:`guard.protection.zsh_reading`): in the line, when zsh
    runs it, and in the code of a ``zsh`` command of any line (``zsh -c '…'``, ``… | zsh``), or of what a line zsh runs
    sources or evaluates (``. =(echo '…')``); or None once the programs the line's ``=name`` words stand for are among
    the names."""
    from guard.protection.readonly import command_text, line_shell

    shell = line_shell(tool, tool_input, os.environ)
    line = command_text(tool_input)
    outer = shell is not None and os.path.basename(shell) == "zsh" and line is not None
    runs_code = ("zsh", ".", "source", "eval") if outer else ("zsh",)
    inner = [unit for unit in found if unit.program and os.path.basename(unit.program) in runs_code]
    if not (outer or inner):
        return None
    from guard.protection import zsh_reading  # lazy: only a line zsh runs

    for unit in inner:
        code = "\n".join(unit.texts)  # its words, and what the line feeds it: a pipe, a file it wrote, a here-document
        problem = zsh_reading.unmodelled(code) or next(
            filter(None, (_zsh_word(raw, "$" in raw, unit, protected) for raw in code.split())), None
        )
        if problem:
            return f"zsh runs {code[:80]!r}, and {problem}: what it names is not known here"
    if not outer:
        return None
    problem = zsh_reading.unmodelled(str(line))
    for unit in found:
        if problem or unit.command is None:
            break
        command = unit.command
        problem = (
            zsh_reading.option_change(os.path.basename(unit.program or ""), unit.args)
            or zsh_reading.runs_after([word.text for word in command.words])
            or next(
                filter(
                    None,
                    (
                        _zsh_word(word.raw, word.dynamic, unit, protected)
                        for word in (*command.assignments, *command.words, *(r.target for r in command.redirects))
                    ),
                ),
                None,
            )
        )
        for path in zsh_reading.equals_paths(unit.texts, os.environ):
            unit.paths.update((path, os.path.realpath(path)))
    return f"the line runs in {shell}, and {problem}: what it names is not known here" if problem else None


def _zsh_word(raw: str, dynamic: bool, unit: Unit, protected: _Index) -> str | None:
    """Why zsh may read the word ``raw`` of ``unit`` as naming a path bash does not: a tilde form, or a glob of its own
    options (``extendedglob``: ``rm ../guard.yam^x``) that may match a ``protected`` path or a value not known here."""
    from guard.protection import zsh_reading
    from guard.protection.naming import named_by

    problem = zsh_reading.word_problem(raw)
    superset = zsh_reading.glob_superset(raw)
    if problem or superset is None:
        return problem
    if dynamic:
        return f"zsh may read {raw!r} as a glob of a value not known here"
    hit = protected.named(named_by(superset, unit.cwd, os.environ), sweeping=False)
    return f"zsh may read {raw!r} as a glob (extendedglob, braceccl) matching {hit[1]} ({hit[0]})" if hit else None


def _unproven(
    tool: str, tool_input: dict[str, Any], unit: Unit, protected: _Index, cwd: str, before: str | None
) -> str | None:
    """Why ``unit``, which names a path of ``protected``, may change it (not proven to only read), or None."""
    hit = protected.named(unit, sweeping=unit.tree)
    if not hit:
        return None
    proof = _proof(tool, tool_input, unit, protected, cwd, before)
    if proof.proven:
        return None
    return f"{_what(unit, tool)} {_how(unit, hit, reads=False)}, and is not proven to only read: {proof.reason}"


#: Why a walk that follows links is refused, and what the agent may run instead.
_FOLLOWS_LINKS = (
    "follows the symbolic links below the folders it walks, wherever they lead, or may (a glob or a $variable can"
    " hand it an option such as -R, and so can the variables some read options from): one may lead to guard's secret,"
    " which no argument names. A form that keeps a link as a link, written out, is not refused (grep -r, rg and find"
    " without -L, tar without -h, cp -r and rsync without -L)"
)


def _follows_links(unit: Unit) -> bool:
    """Whether ``unit``, read loosely as a program that walks a tree (after wrappers, its words as naming reads them),
    follows the symbolic links below it, or a word that expands at run time (``$OPT``) or a glob of its arguments may
    hand it such an option: the back-up of the prover's exact reading (:func:`guard.protection.readonly.tree_walk`) for what that
    cannot parse, and for the copiers and archivers it does not model."""
    from guard.protection.readonly import dash_names
    from guard.protection.tree_effects import SEARCHERS, follows_links

    if unit.command is None or not unit.program:
        return False
    program = os.path.basename(unit.program)
    if not (unit.tree or program in SEARCHERS):
        return False
    return (
        follows_links(program, unit.args)
        or any(word.dynamic for word in unit.command.words[1:])  # $OPT, "$(…)": any option, -R too (none in real use)
        or (any(_leading_glob(arg) for arg in unit.args) and dash_names(unit.cwd))
        or _options_from_input(unit)
    )


#: find's actions that print what its expression says, not the paths it found (``-printf '-R\n'``), or run programs.
_FIND_PRINTS_OTHERWISE = re.compile(r"^-(f?printf|f?ls|fprint0?|exec(dir)?|ok(dir)?)$")
#: grep's options that make it print the names of the files it read, not their lines.
_LISTS_FILES = re.compile(r"^(-[A-Za-z]*[lL][A-Za-z]*|--files-with(out)?-match(es)?)$")


def _options_from_input(unit: Unit) -> bool:
    """Whether ``xargs`` may hand the walk an option from its input (``echo -R | xargs grep token .``): unless it ends
    its own options (``--``) or what feeds it prints only paths that never start with ``-`` (:func:`_lists_paths`)."""
    return _run_by_xargs(unit) and not (unit.args and unit.args[-1] == "--") and not _lists_paths(unit.fed_by)


def _run_by_xargs(unit: Unit) -> bool:
    assert unit.command is not None and unit.program is not None
    program = os.path.basename(unit.program)
    wrappers = itertools.takewhile(lambda word: os.path.basename(word.text) != program, unit.command.words)
    return any(os.path.basename(word.text) == "xargs" for word in wrappers)


def _lists_paths(unit: Unit | None) -> bool:
    """Whether ``unit`` prints only paths starting with a name it was given that does not start with ``-``: ``find``
    printing what it found, or ``grep -l``/``-L`` printing the files it read (given as such, or by such a feeder)."""
    from guard.protection.readonly import dash_names

    if unit is None or unit.command is None or unit.program is None:
        return False
    program = os.path.basename(unit.program)
    if program == "find":
        return not any(_FIND_PRINTS_OTHERWISE.match(arg) for arg in unit.args)
    if program != "grep" or not any(_LISTS_FILES.match(arg) for arg in unit.args):
        return False
    if _run_by_xargs(unit):
        return _lists_paths(unit.fed_by)
    return "--" not in unit.args and not (any(_leading_glob(arg) for arg in unit.args) and dash_names(unit.cwd))


def _options_follow_links(unit: Unit, said: list[str], changed: str | None) -> bool:
    """Whether ``unit``, a tree program that takes options from a variable (:data:`OPTION_VARIABLES
    <guard.protection.tree_effects.OPTION_VARIABLES>`: ``TAR_OPTIONS=-h``, a ripgreprc with ``--follow``), may be told
    there to follow links: the line sets or names that variable (``said``), an earlier command of it may have changed
    the shell's state (``changed``), or the hook's own environment, which the call inherits, says so."""
    if unit.command is None or not unit.program:
        return False
    from guard.protection.tree_effects import OPTION_VARIABLES, follows_links, options_from_environment

    program = os.path.basename(unit.program)
    names = OPTION_VARIABLES.get(program)
    if not names or not (unit.tree or program == "rg"):
        return False
    if changed or any(name in text for name in names for text in said):
        return True
    options = options_from_environment(program, os.environ)
    return options is None or follows_links(program, options)


def _leading_glob(arg: str) -> bool:
    """Whether bash may expand ``arg`` to a name of the working directory starting with ``-`` (``*``, ``?R``, ``[-]R``;
    not ``n*`` or ``src/*``)."""
    return arg[:1] in "*?[" and bool(arg)


def _braced_names(unit: Unit) -> None:
    """Add to ``unit`` what its braced words name once bash has expanded them (``settings.jso{n..n..1}``): naming expands
    braces too, as a superset of bash's common forms; this is bash's own algorithm (:mod:`guard.command_analysis.expansion`)."""
    from guard.command_analysis.expansion import NotModelled, expand_word
    from guard.protection.naming import named_by

    assert unit.command is not None
    for word in [*unit.command.words, *(r.target for r in unit.command.redirects)]:
        if "{" not in word.raw:
            continue
        try:
            fields = expand_word(word.raw, os.environ)
        except NotModelled:
            continue
        for field in fields:
            if field.text != word.text:
                more = named_by(field.text, unit.cwd, os.environ)
                unit.paths |= more.paths
                unit.patterns |= more.patterns


def _what(unit: Unit, tool: str) -> str:
    return f"the command `{unit.label}`" if unit.command is not None else tool


def _how(unit: Unit, hit: tuple[str, str, str], *, reads: bool) -> str:
    """How the unit reaches the protected path: names it, names a folder holding it, or acts on a whole tree holding it."""
    label, path, folder = hit
    if not folder:
        return f"would read {path} ({label})" if reads else f"names {path} ({label})"
    if not unit.tree:
        return f"names {folder}, a folder holding {path} ({label})"
    if os.path.lexists(path):
        return f"acts on all of {folder}, which holds {path} ({label})"
    return f"may create files anywhere in {folder}, {path} ({label}) among them"


def judge(spec: HookSpec, payload: dict[str, Any], env: Mapping[str, str] | None = None) -> HookResult:
    """Deny a call that would change guard's own files, ask a person about one that changes only the shell's start-up
    files; abstain otherwise. Synchronous: the fast path calls it.

    ``env`` (the hook's environment) is the fast path's argument to every kind's verdict: the targets are fixed when the config loads.
    """
    started = time.perf_counter()
    violation = _violation(spec, payload)
    result = HookResult(id=spec.id, type=spec.kind)
    if violation and violation[0] == "ask":
        result.decision, result.reason = (
            "ask",
            (
                f"guard self-protection: {violation[1]}. An alias or function there changes what every later command"
                " runs, including those guard lets through unjudged as reads: a person decides."
            ),
        )
    elif violation:
        result.decision, result.reason = (
            "deny",
            (
                f"guard self-protection: {violation[1]}. The agent may not change guard's config, state or hook settings,"
                " nor read its secret; a person can make the change outside the agent (or set `protect: false` in guard.yaml)."
            ),
        )
    result.latency_ms = round((time.perf_counter() - started) * 1000, 3)
    return result


class ProtectHook:
    """The engine's handle on :func:`judge`: a :class:`~guard.core.hook.Hook` by its shape (a Protocol), so the fast
    path, which calls :func:`judge` directly, does not load the seam's module."""

    def __init__(self, spec: HookSpec, ctx: HookContext) -> None:
        self.spec = spec

    async def prepare(self, event: Event) -> None:
        """Nothing to set up: the rule reads the call and the file system as it runs."""

    async def run(self, event: Event) -> HookResult:
        return judge(self.spec, event.payload())
