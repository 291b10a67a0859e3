"""The built-in self-protection rule: the guarded agent may not change guard itself.

An agent with a Write or Bash tool could otherwise edit guard.yaml, drop guard's
entry from the client's hook settings, rewrite guard's state or replace the
secret its seals rely on (:mod:`guard.trust`). This hook denies, without a model,
every PreToolUse call that would write, move, delete or re-mode one of those
paths, and any call that would read the secret. It is on unless guard.yaml says
``protect: false``.

What it reads: path fields of file tools (``file_path``, ``path``, ``notebook_path``
… of Write, Edit, MultiEdit, NotebookEdit, write_file, replace, MCP file tools),
file headers of ``apply_patch`` bodies, and ``command`` fields, read by the shell
analyser (:func:`guard.command_analysis.touched_paths`: redirections, rm, mv, cp,
tee, sed -i, chmod …). The Bash part is best effort: a path built at run time,
or written by an interpreter's own code, is only caught when the command names
a protected path and does something the analyser cannot follow. Standard library
only: it runs on the ``guard hook`` fast path for every tool call.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from guard.core.decision import HookResult
from guard.core.hook import Hook
from guard.core.spec import HookSpec
from guard.protection import targets

if TYPE_CHECKING:
    from guard.config import LoadedConfig
    from guard.core.events.model import Event
    from guard.core.hook import HookContext

__all__ = ["HOOK_ID", "ProtectHook", "judge", "protect_spec"]

HOOK_ID = "guard.protect"

#: Labels of protected paths, as the deny reason names them (what is protected: :mod:`guard.protection.targets`).
CONFIG, STATE, CLIENT, SECRET = targets.CONFIG, targets.STATE, targets.CLIENT, targets.SECRET
#: Tools that only read: they are refused the secret, nothing else.
_READERS = frozenset(
    {"read", "read_file", "readfile", "read_many_files", "view", "glob", "grep", "ls", "list_directory", "search_file_content",
     "notebookread", "webfetch", "websearch"}
)
_PATH_FIELDS = frozenset(
    {"file_path", "filepath", "filePath", "path", "notebook_path", "absolute_path", "target_file", "file", "filename",
     "destination", "dest", "target", "source", "new_path", "old_path", "paths", "files"}
)
_SHELL_FIELDS = ("command", "cmd")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.MULTILINE)
_GLOB = re.compile(r"[*?\[]")
#: macOS file systems ignore case by default: Guard.yaml is guard.yaml there.
_CASE_INSENSITIVE = sys.platform == "darwin"


def protect_spec(loaded: LoadedConfig) -> HookSpec:
    """The self-protection hook for ``loaded``: every path :func:`guard.protection.targets.protected_paths` names."""
    return HookSpec(
        id=HOOK_ID,
        kind="protect",
        event="pre_tool_use",
        timeout=10.0,
        # its own crash shows in the decision; fail_closed here would make any guard bug block every tool call
        failure_mode="fail_open",
        source="builtin",
        origin="built-in self-protection rule (protect: false in guard.yaml turns it off)",
        paths=targets.protected_paths(loaded),
    )


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        yield from (item for item in value if isinstance(item, str))


def _file_targets(tool_input: dict[str, Any], *, nested: bool = True) -> Iterator[str]:
    """Paths named by a file tool's fields, its edits one level down (MultiEdit-style lists), and apply_patch headers."""
    for key, value in tool_input.items():
        if key in _PATH_FIELDS:
            yield from _strings(value)
        elif nested and isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    yield from _file_targets(item, nested=False)
        if isinstance(value, str) and "*** Begin Patch" in value:
            yield from _PATCH_FILE.findall(value)


def _command(tool_input: dict[str, Any]) -> str | None:
    for key in _SHELL_FIELDS:
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            import shlex

            return shlex.join(value)
    return None


def _absolute(path: str, cwd: str) -> list[str]:
    """The forms ``path`` may take on disk: as written (against ``cwd``) and with symlinks resolved."""
    expanded = os.path.expanduser(os.path.expandvars(path) if "$" in path else path)  # $HOME/…, ~/…
    full = os.path.abspath(os.path.join(cwd, expanded))
    try:
        return list({full, os.path.realpath(full)})
    except (OSError, ValueError):  # e.g. an embedded NUL: no such file can exist, the path as written is compared
        return [full]


def _hard_link(target: str, protected: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
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


def _hit(target: str, removes: bool, protected: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    """The protected (label, path) that changing ``target`` changes: the path itself, inside it, or (removing) above it."""
    if _CASE_INSENSITIVE:
        target = target.lower()
        protected = tuple((label, path.lower()) for label, path in protected)
    pattern = bool(_GLOB.search(target))
    for label, path in protected:
        if pattern:
            candidates = [path] + ([os.path.dirname(path)] if removes else [])
            if any(fnmatch.fnmatchcase(c, target) for c in candidates):
                return label, path
        elif target == path or target.startswith(path + "/") or (removes and path.startswith(target.rstrip("/") + "/")):
            return label, path
    return _hard_link(target, protected)


def _mentions(command: str, protected: tuple[tuple[str, str], ...], cwd: str) -> tuple[str, str] | None:
    home = os.path.expanduser("~")
    for label, path in protected:
        spellings = {path}
        if path.startswith(cwd.rstrip("/") + "/"):
            spellings.add(os.path.relpath(path, cwd))
        if path.startswith(home + "/"):
            spellings |= {"~/" + os.path.relpath(path, home), "$HOME/" + os.path.relpath(path, home)}
        if any(s in command for s in spellings):
            return label, path
    return None


def _violation(spec: HookSpec, payload: dict[str, Any]) -> str | None:
    """Why this call may not run, or None."""
    tool = str(payload.get("tool_name") or "")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    cwd = str(payload.get("cwd") or os.getcwd())
    paths = spec.paths + targets.event_paths(payload)  # the project the event runs in, and its transcript
    secret = tuple(p for p in paths if p[0] in targets.READ_PROTECTED_LABELS)
    protected = secret if tool.lower() in _READERS else paths
    for written in _file_targets(tool_input):
        for target in _absolute(written, cwd):
            hit = _hit(target, False, protected)  # a path field naming a folder above them is most often a search
            if hit:
                verb = "read" if protected is secret else "change"
                return f"{tool} would {verb} {hit[1]} ({hit[0]})"
    command = _command(tool_input)
    if command is None:
        return None
    named = _mentions(command, secret, cwd)
    if named:
        return f"the command names {named[1]} ({named[0]})"
    from guard.command_analysis import analyse, touched_paths

    touched = touched_paths(command)
    for kind, written in touched or ():
        for target in _absolute(written, cwd):
            hit = _hit(target, kind == "removes", paths)
            if hit:
                return f"the command {kind} {hit[1]} ({hit[0]})"
    if touched is None or analyse(command, external=False).refused:
        named = _mentions(command, paths, cwd)
        if named:
            return f"the command names {named[1]} ({named[0]}) and cannot be fully analysed"
    return None


def judge(spec: HookSpec, payload: dict[str, Any]) -> HookResult:
    """Deny a call that would change guard's own files; abstain otherwise. Synchronous: the fast path calls it."""
    started = time.perf_counter()
    problem = _violation(spec, payload)
    result = HookResult(id=spec.id, type=spec.kind)
    if problem:
        result.decision = "deny"
        result.reason = (
            f"guard self-protection: {problem}. The agent may not change guard's config, state or hook settings,"
            " nor read its secret; a person can make the change outside the agent (or set `protect: false` in guard.yaml)."
        )
    result.latency_ms = round((time.perf_counter() - started) * 1000, 3)
    return result


class ProtectHook(Hook):
    """The engine's handle on :func:`judge`."""

    def __init__(self, spec: HookSpec, ctx: HookContext) -> None:
        self.spec = spec

    async def run(self, event: Event) -> HookResult:
        return judge(self.spec, event.payload())
