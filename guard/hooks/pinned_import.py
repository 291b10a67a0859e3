"""Running a pinned callable hook's code: only the source ``guard trust`` pinned, never a changed or unpinned file.

A callable hook (``callable: policy:no_deletes``) runs in guard's own process, and so does
every module its code imports: a ``helpers.py`` the agent rewrote would run inside guard
and could allow every call. ``guard trust`` pins the hook's module and the local modules
it imports (:func:`guard.config.hook_scripts.module_closure`). While the hook's code runs
(its import, and each call), any module Python finds in a local file
(:class:`~guard.config.hook_scripts.LocalCode`: the hook's folder or the home, outside
guard's installation), or through a link there to a file elsewhere, is loaded by
:class:`_PinnedLoader` instead: it reads the source,
checks those very bytes against the pin and compiles them itself, so a byte-code cache
planted beside the source is never run and the file cannot change between the check and
the run. An import the trust-time reading missed (a name built at run time) is refused
with :class:`UnpinnedCode`, and the hook fails under its ``failure_mode``.

Under ``python -I`` (how ``guard install`` runs the hook, and the warm service) the interpreter
ignored ``PYTHONPATH``, where a user keeps their hooks' modules: only the hook's code looks
there (:func:`hook_path`), after every folder of ``sys.path``. guard and its dependencies never
do, so an optional module they try (httpx's ``brotli``) that the agent left in such a folder is
not found, instead of run inside guard.

The check follows the hook's context (a :class:`~contextvars.ContextVar`: its task, and the
worker thread ``asyncio.to_thread`` runs a sync hook in), so imports of other code in the
same process (another hook, a test suite around ``guard eval``) are not touched. A thread
the hook starts itself runs without it, and so does code the hook loads by path on its own
(``runpy.run_path``, ``spec_from_file_location``), which no finder sees; self-protection
still refuses the agent's writes to the pinned files.
"""

from __future__ import annotations

import contextvars
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import ModuleType

from guard.config.hook_scripts import LocalCode, pin_problem

__all__ = ["UnpinnedCode", "hook_path", "pinned_code"]


class UnpinnedCode(ImportError):
    """A hook's code imported a local file that is not the one the user trusted."""


class _Pins:
    """What one hook's code may load from local files: the pinned files (path → sha256), or any (None: a hook guard
    trust did not pin); and the folders only its code imports from (:func:`hook_path`)."""

    __slots__ = ("files", "local", "folders")

    def __init__(self, files: Mapping[str, str] | None, local: LocalCode, folders: list[str]) -> None:
        self.files = files
        self.local = local
        self.folders = folders


def hook_path() -> list[str]:
    """The absolute folders of ``PYTHONPATH`` an interpreter that ignored it (``-I``, ``-E``) did not put on
    ``sys.path``: where a hook's code, and only it, imports from after ``sys.path``."""
    if not sys.flags.ignore_environment:
        return []
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return [entry for entry in dict.fromkeys(entries) if os.path.isabs(entry) and entry not in sys.path]


_ACTIVE: contextvars.ContextVar[_Pins | None] = contextvars.ContextVar("guard_pinned_code", default=None)


class _PinnedLoader(importlib.abc.Loader):
    """Loads one local module from the bytes it checked against the pin (never from a byte-code cache)."""

    def __init__(self, path: str, files: Mapping[str, str], named: str) -> None:
        self.path = path  # resolved
        self.files = files
        self.named = named  # the path Python found it by, which may be a link to ``path``

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # the default module object

    def exec_module(self, module: ModuleType) -> None:
        if not self.path.endswith(".py"):
            raise UnpinnedCode(f"{self.path} is not Python source guard trust could read and pin")
        try:
            with open(self.path, "rb") as fh:
                source = fh.read()
        except OSError as exc:
            raise ImportError(f"cannot read {self.path}: {exc}") from exc
        problem = pin_problem(self.files, self.path, source)
        if problem:
            raise UnpinnedCode(problem if self.named == self.path else f"{self.named} is a link: {problem}")
        exec(compile(source, self.path, "exec", dont_inherit=True), module.__dict__)


class _PinnedFinder(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path``: while a pinned hook's code runs, hands its local modules to :class:`_PinnedLoader`."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        pins = _ACTIVE.get()
        if pins is None:
            return None
        found = None
        for finder in sys.meta_path:  # whoever would find it (the path finder, an editable install's finder …)
            if finder is not self and hasattr(finder, "find_spec"):
                found = finder.find_spec(fullname, path, target)
                if found is not None:
                    break
        hook_only = found is None and path is None and bool(pins.folders)
        if hook_only:  # not on sys.path: the hook's own folders, which nothing but its code sees
            found = importlib.machinery.PathFinder.find_spec(fullname, pins.folders, target)
        if found is None:
            return None
        if not found.has_location or found.origin is None:  # built in, frozen or a namespace package: no file runs
            return found if hook_only else None
        named = os.path.abspath(found.origin)
        real = os.path.realpath(named)
        local = real in pins.local or named in pins.local  # a local link to a file elsewhere is local code
        if not local or pins.files is None:
            return found if hook_only else None  # loaded as found
        return importlib.util.spec_from_file_location(
            fullname,
            real,
            loader=_PinnedLoader(real, pins.files, named),
            submodule_search_locations=found.submodule_search_locations,
        )


_FINDER = _PinnedFinder()


@contextmanager
def pinned_code(files: Sequence[tuple[str, str]] | None, workdir: str) -> Iterator[None]:
    """Within this block (and what it hands to ``asyncio.to_thread``), a hook's code runs: it imports from
    :func:`hook_path` too, and local modules load only as pinned (``files``: path, sha256 from ``guard trust``; None
    for a hook it did not pin, whose modules load as found); ``workdir`` is the hook's folder."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    token = _ACTIVE.set(_Pins(None if files is None else dict(files), LocalCode(workdir), hook_path()))
    try:
        yield
    finally:
        _ACTIVE.reset(token)
