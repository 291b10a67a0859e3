"""The files a hook runs: what ``guard trust`` pins beside the config, and self-protection guards.

``python3 .claude/hooks/check.py`` runs whatever check.py holds when the hook
fires, so trusting the command line alone would let whoever rewrites check.py
decide every call. A script here is a file a simple command of the hook runs:
its program when the program is named by a path (``./hooks/check.sh``), the
first operand of an interpreter (``sh``, ``bash``, ``python3``, ``node`` …) or of
``source``/``.``. Only files inside the hook's folder or the user's home count
(``$CLAUDE_PROJECT_DIR`` is that folder), and the files links there lead to: a program on
PATH or in the system's folders cannot be changed by an agent running as the user
without privileges guard cannot hold against anyway. Data files a hook reads or its log are not
scripts, so writing them never makes the hook's config "changed".

A callable hook (``callable: policy:no_deletes``) runs its module's file in guard's
own process: the files that module name can be imported from (each package's
``__init__.py`` on the way, in every folder of ``sys.path`` and ``PYTHONPATH``,
inside the hook's folder or the home) are pinned the same way, and so is every file
those import in turn (any ``import`` statement, at the top or in a function), found
the same way; guard's own installation is left out, since self-protection guards it
whole. At run time :mod:`guard.hooks.pinned_import` loads only pinned source for the
hook's code, so an import this reading misses (a name built at run time) is refused,
not run.
Standard library only: self-protection computes this on the ``guard hook`` path.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Iterator, Mapping
from types import CodeType

from guard.core.kinds import registered
from guard.core.spec import HookSpec
from guard.protection.targets import installation

__all__ = [
    "LocalCode",
    "changed_script",
    "hook_scripts",
    "in_a_folder_of_its_own",
    "module_closure",
    "module_files",
    "pin_problem",
    "scripts_of",
]

_PROJECT_DIR = re.compile(r"\$(?:\{CLAUDE_PROJECT_DIR\}|CLAUDE_PROJECT_DIR\b)")
_INTERPRETER = re.compile(
    r"^(?:ba|da|z|k|fi)?sh$|^python[0-9.]*$|^pypy[0-9.]*$|^node$|^deno$|^bun$|^ruby$|^perl$|^php$|^tsx$|^ts-node$"
)
_SOURCE = frozenset({"source", "."})
_WRAPPERS = frozenset({"env", "exec", "nohup", "command", "time", "nice"})
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "|&", ";;"})
#: Interpreter options after which the next word is code or a module, not a script file.
_CODE_OPTIONS = frozenset({"-c", "-m", "-e", "-p", "--eval", "--print"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _simple_commands(command: str) -> list[list[str]]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    for word in lexer:
        if word in _SEPARATORS:
            commands.append([])
        else:
            commands[-1].append(word)
    return [words for words in commands if words]


def _run_files(words: list[str]) -> list[str]:
    """The words of one simple command that name a file it runs."""
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in _WRAPPERS):
        words = words[1:]
    if not words:
        return []
    program, rest = words[0], words[1:]
    found = [program] if "/" in program else []
    name = os.path.basename(program)
    if _INTERPRETER.match(name) or name in _SOURCE:
        for word in rest:
            if word in _CODE_OPTIONS:
                break
            if not word.startswith("-"):
                found.append(word)
                break
    return found


def _roots(workdir: str) -> tuple[str, ...]:
    """The folders an agent running as the user can change that a hook's files are looked for in."""
    return tuple(os.path.realpath(root) + os.sep for root in (workdir, os.path.expanduser("~")))


def scripts_of(command: str, workdir: str) -> list[str]:
    """The absolute, resolved paths of the script files ``command`` runs from ``workdir`` (sorted, unique)."""
    text = _PROJECT_DIR.sub(lambda _: workdir, command)
    try:
        commands = _simple_commands(text)
    except ValueError:  # unbalanced quotes: the shell would not run it either
        return []
    roots = _roots(workdir)
    scripts = set()
    for words in commands:
        for word in _run_files(words):
            named = os.path.abspath(os.path.join(workdir, os.path.expanduser(word)))
            path = os.path.realpath(named)
            if (path.startswith(roots) or named.startswith(roots)) and os.path.isfile(path):
                scripts.add(path)  # a link there to a file elsewhere too: the agent can point it anywhere
    return sorted(scripts)


def _search_folders(workdir: str) -> list[str]:
    """Where a module name is looked for: every folder of ``sys.path`` and ``PYTHONPATH``, and ``workdir``.

    Each folder, not only the first that holds the module: which one the hook's interpreter picks depends on how it
    was started (under ``python -I`` a hook's code looks in ``PYTHONPATH`` last, ``guard trust`` may run with another),
    and pinning each is safe.
    """
    absolute = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if os.path.isabs(entry)]
    return [entry for entry in dict.fromkeys([*sys.path, *absolute, workdir]) if os.path.isabs(entry)]


def _name_files(parts: list[str], folders: list[str]) -> set[str]:
    """The files the dotted name ``parts`` may be imported from under ``folders``: each package's ``__init__.py`` on
    the way, and the last part as a module or a package."""
    found: set[str] = set()
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        below = []
        for folder in folders:
            package = os.path.join(folder, part)
            candidates = [os.path.join(package, "__init__.py")] + ([package + ".py"] if last else [])
            found.update(path for path in candidates if os.path.isfile(path))
            if os.path.isdir(package):
                below.append(package)
        folders = below
    return found


class LocalCode:
    """The files Python may load that an agent running as the user can change: inside the hook's folder or the home,
    and not in guard's own installation (self-protection guards that whole: :func:`guard.protection.targets.installation`)."""

    __slots__ = ("installed", "roots")

    def __init__(self, workdir: str) -> None:
        self.roots = _roots(workdir)
        self.installed = tuple(os.path.realpath(path).rstrip(os.sep) + os.sep for path in installation())

    def __contains__(self, real_path: str) -> bool:
        """Whether the resolved path ``real_path`` is such a file."""
        return real_path.startswith(self.roots) and not real_path.startswith(self.installed)


def _local(paths: set[str], workdir: str) -> set[str]:
    """``paths`` resolved, those that are :class:`LocalCode` or are reached through it (a link there, which an agent
    running as the user can point elsewhere)."""
    local = LocalCode(workdir)
    return {
        os.path.realpath(path)
        for path in map(os.path.abspath, paths)
        if path in local or os.path.realpath(path) in local
    }


def module_files(target: str, workdir: str) -> list[str]:
    """The files a callable hook's ``module:function`` may be imported from, inside ``workdir`` or the home (sorted)."""
    parts = target.partition(":")[0].split(".")
    if not all(part.isidentifier() for part in parts):
        return []
    return sorted(_local(_name_files(parts, _search_folders(workdir)), workdir))


#: The functions that import the module named by their first argument: a call of one with that name written out
#: (``importlib.import_module("rules")``) is read as an import.
_IMPORTERS = frozenset({"import_module", "__import__"})
_LOADS = frozenset({"LOAD_NAME", "LOAD_GLOBAL", "LOAD_ATTR", "LOAD_METHOD"})


def _imports(code: CodeType) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """(level, module, names taken from it) of each import ``code`` and the code nested in it run, read from the
    byte-code (``LOAD_CONST level; LOAD_CONST fromlist; IMPORT_NAME module``, as :mod:`modulefinder` reads it, and
    ``import_module``/``__import__`` loaded, then called on a constant name): no syntax tree is built, which CPython
    3.11.7 cannot do in two threads at once (python/cpython#106905)."""
    import dis  # guard trust's reading: this module is on the guard hook path

    before: list[dis.Instruction] = []
    for instruction in dis.get_instructions(code):
        if instruction.opname == "EXTENDED_ARG":
            continue  # the high bits of the next one's argument (past 256 names or constants), which dis resolves
        constants = [each.argval if each.opname == "LOAD_CONST" else None for each in before[-2:]]
        if instruction.opname == "IMPORT_NAME" and len(constants) == 2 and isinstance(constants[0], int):
            fromlist = constants[1] if isinstance(constants[1], tuple) else ()
            yield constants[0], str(instruction.argval), tuple(str(name) for name in fromlist)
        elif (
            instruction.opname in ("PRECALL", "CALL")
            and len(before) == 2
            and before[0].opname in _LOADS
            and before[0].argval in _IMPORTERS
            and isinstance(constants[1], str)
            and not constants[1].startswith(".")
        ):
            yield 0, constants[1], ()
        before = [*before[-1:], instruction]
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _imports(const)


def _imported_names(path: str) -> set[tuple[str, ...]]:
    """The dotted names the module at ``path`` imports anywhere in it (relative ones resolved against its package),
    each with the names a ``from`` import takes from it, which may be modules too."""
    try:
        with open(path, "rb") as fh:
            code = compile(fh.read(), path, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError):
        return set()  # unreadable or not Python: the loader refuses to run it as it stands
    package = os.path.dirname(path)
    names: set[tuple[str, ...]] = set()
    for level, name, taken in _imports(code):
        module = tuple(name.split(".")) if name else ()
        if level:  # relative: a path below the package, looked up as a file name from there
            base = package
            for _ in range(level - 1):
                base = os.path.dirname(base)
            names.update(("/", base, *module, each) for each in taken)
            names.add(("/", base, *module))
        else:
            names.add(module)
            names.update((*module, each) for each in taken if each != "*")
    return names


def module_closure(target: str, workdir: str) -> list[str]:
    """:func:`module_files` and, in turn, every local file those import (sorted): what a callable hook runs.

    ``from pkg import name`` may import the module ``pkg.name``: both are looked for, and so is the name
    ``importlib.import_module`` or ``__import__`` is called with when it is written out. A name built at run time
    (``importlib.import_module(text)``) is not seen here; the loader refuses it (:mod:`guard.hooks.pinned_import`).
    """
    pending = module_files(target, workdir)
    folders = _search_folders(workdir)
    seen: set[str] = set()
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        if not path.endswith(".py"):
            continue
        for name in _imported_names(path):
            if name[:1] == ("/",):
                found = _name_files(list(name[2:]), [name[1]]) if len(name) > 2 else set()
            elif all(part.isidentifier() for part in name) and name:
                found = _name_files(list(name), folders)
            else:
                continue
            pending += sorted(_local(found, workdir) - seen)
    return sorted(seen)


def command_files(spec: HookSpec, workdir: str) -> list[str]:
    """A command hook's files (:attr:`guard.core.kinds.Kind.files`): the scripts its ``command`` runs."""
    command = spec.options.get("command")
    return scripts_of(command, workdir) if isinstance(command, str) and command else []


def callable_files(spec: HookSpec, workdir: str) -> list[str]:
    """A callable hook's files: those its ``module:function`` may be imported from and the local modules they import
    (none for a library's own function)."""
    target = spec.options.get("callable")
    return module_closure(target, workdir) if isinstance(target, str) and spec.func is None else []


def in_a_folder_of_its_own(script: str, base_dir: str) -> bool:
    """Whether ``script``'s folder holds neither ``base_dir`` (the config's folder) nor the home: self-protection guards
    such a folder with the script (its neighbours run unnamed), and the script may import them; a script in a folder
    holding the project keeps only its own file guarded, so its hook runs Python without its folder on the import
    path (:class:`guard.hooks.command.CommandHook`)."""
    folder = os.path.dirname(os.path.abspath(script))
    return not any(
        inside == folder or inside.startswith(folder.rstrip(os.sep) + os.sep)
        for inside in (base_dir, os.path.expanduser("~"))
    )


def hook_scripts(spec: HookSpec, workdir: str) -> list[str]:
    """The files ``spec`` runs, found now, as its kind finds them (:attr:`guard.core.kinds.Kind.files`)."""
    kind = registered(spec.kind)
    if kind is None or kind.files is None:
        return []
    return list(kind.load("files")(spec, workdir))


def pin_problem(pinned: Mapping[str, str], path: str, content: bytes) -> str | None:
    """Why running ``content``, read from ``path``, would not run what the user trusted (``pinned``: path → sha256)."""
    from guard.config.trust_store import digest

    if pinned.get(path) == digest(content):
        return None
    return f"{path} {'changed since' if path in pinned else 'was not pinned when'} you trusted the config"


def changed_script(pinned: tuple[tuple[str, str], ...], now: list[str]) -> str | None:
    """Why running the files ``now`` would not run what the user trusted (``pinned``: path, sha256), or None."""
    trusted = dict(pinned)
    for path in now:
        try:
            with open(path, "rb") as fh:
                content = fh.read()
        except OSError:
            continue  # gone: the hook fails on its own, as it would have
        problem = pin_problem(trusted, path, content)
        if problem:
            return problem
    return None
