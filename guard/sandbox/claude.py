"""Claude Code's sandbox around guard: the settings ``guard install claude`` merges in, and what they guarantee.

Claude Code runs Bash commands in its sandbox (bubblewrap and socat on Linux,
Seatbelt on macOS) when ``sandbox.enabled`` is set: writes only in the project
and its temp folder, except the paths in ``sandbox.filesystem.denyWrite``; reads
everywhere except ``denyRead``. Its file tools (Edit, Write, Read, Grep…) obey
``permissions.deny`` rules, whose ``Edit(…)``/``Read(…)`` paths its sandbox adds to
the same lists. guard writes, beside the user's own settings:

- ``sandbox.enabled: true``, ``failIfUnavailable: true`` (no silent fallback to
  running unsandboxed) and ``allowUnsandboxedCommands: false`` (the model cannot
  ask for a command outside the sandbox);
- every path guard protects in ``denyWrite`` and ``Edit(//…)`` deny rules, the
  secret in ``denyRead`` and ``Read(//…)`` deny rules.

The paths are this user's and this machine's, so in project scope they go to
``.claude/settings.local.json`` (not shared, and above the shared file in
Claude Code's precedence); in user scope to ``~/.claude/settings.json``. What guard
added is recorded (:mod:`guard.sandbox.records`) so ``--uninstall`` removes only that.
"""

from __future__ import annotations

import copy
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from guard.adapters.claude_local import LOCAL_FILE
from guard.adapters.installers import settings_path
from guard.adapters.settings_file import dump_json, parse_json, write_atomic
from guard.core.errors import ConfigError
from guard.sandbox import SandboxChange, records
from guard.sandbox.paths import ProtectedPaths

__all__ = [
    "LOCAL_FILE",
    "SCALARS",
    "apply",
    "denied",
    "effective",
    "gaps",
    "missing_tools",
    "settings_files",
    "wanted_lists",
]

#: The sandbox switches guard sets, and why a different value leaves guard's files within reach.
SCALARS: dict[tuple[str, ...], tuple[bool, str]] = {
    ("sandbox", "enabled"): (True, "sandbox.enabled is not true: Bash commands run unsandboxed"),
    ("sandbox", "failIfUnavailable"): (
        True,
        "sandbox.failIfUnavailable is not true: when the sandbox cannot start, commands run unsandboxed",
    ),
    ("sandbox", "allowUnsandboxedCommands"): (
        False,
        "sandbox.allowUnsandboxedCommands is not false: the model may run a command outside the sandbox",
    ),
}
_DENY_WRITE = ("sandbox", "filesystem", "denyWrite")
_DENY_READ = ("sandbox", "filesystem", "denyRead")
_DENY_RULES = ("permissions", "deny")


def _rule_path(path: str) -> str:
    """A path in a permission rule: ``//`` starts an absolute one (a single ``/`` is relative to the settings' folder)."""
    return "/" + path if path.startswith("/") else path


def _rules(tool: str, paths: tuple[str, ...]) -> list[str]:
    """``Tool(//path)`` and ``Tool(//path/**)`` for each path: the pattern names what is in a folder (a file's matches nothing).

    Both forms for every path, folder or file, existing or not: the list is the same on every install.
    """
    return [rule for path in paths for rule in (f"{tool}({_rule_path(path)})", f"{tool}({_rule_path(path)}/**)")]


def wanted_lists(paths: ProtectedPaths) -> dict[tuple[str, ...], list[str]]:
    """The entries guard needs in each list, in a stable order (outermost paths only: see :func:`guard.sandbox.paths._roots`)."""
    writes, reads = paths.write_roots(), paths.read_roots()
    return {
        _DENY_WRITE: list(writes),
        _DENY_READ: list(reads),
        _DENY_RULES: _rules("Edit", writes) + _rules("Read", reads),
    }


def _key(path: tuple[str, ...]) -> str:
    return ".".join(path)


def _container(data: dict[str, Any], path: tuple[str, ...], created: list[str]) -> dict[str, Any]:
    """The object at ``path`` (made, and noted in ``created``, where missing); ValueError when something else is in the way."""
    node = data
    for depth, name in enumerate(path):
        if not isinstance(node.get(name), dict):
            if name in node:
                raise ValueError(f"{_key(path[: depth + 1])} is not an object")
            node[name] = {}
            created.append(_key(path[: depth + 1]))
        node = node[name]
    return node


def _lookup(data: dict[str, Any], path: tuple[str, ...]) -> object:
    node: object = data
    for name in path:
        if not isinstance(node, dict) or name not in node:
            return None
        node = node[name]
    return node


def _install(data: dict[str, Any], paths: ProtectedPaths, record: dict[str, Any]) -> None:
    """Add what is missing of guard's entries and values to ``data``, noting each in ``record``; drop guard's stale entries."""
    created: list[str] = record.setdefault("created", [])
    added: dict[str, list[str]] = record.setdefault("lists", {})
    changed: dict[str, Any] = record.setdefault("scalars", {})
    for path, wanted in wanted_lists(paths).items():
        parent = _container(data, path[:-1], created)
        if not isinstance(parent.get(path[-1]), list):
            if path[-1] in parent:
                raise ValueError(f"{_key(path)} is not a list")
            parent[path[-1]] = []
            created.append(_key(path))
        entries: list[Any] = parent[path[-1]]
        stale = set(added.get(_key(path), [])) - set(wanted)  # guard's own from an install with other paths
        entries[:] = [e for e in entries if e not in stale]
        new = [w for w in wanted if w not in entries]
        entries.extend(new)
        added[_key(path)] = [w for w in dict.fromkeys([*added.get(_key(path), []), *new]) if w in wanted]
    for path, (value, _) in SCALARS.items():
        parent = _container(data, path[:-1], created)
        if parent.get(path[-1]) != value or _key(path) in changed:
            if _key(path) not in changed:
                changed[_key(path)] = {"before": parent[path[-1]]} if path[-1] in parent else {}
            parent[path[-1]] = value


def _uninstall(data: dict[str, Any], paths: ProtectedPaths, record: dict[str, Any] | None) -> list[str]:
    """Remove guard's entries (the recorded ones; without a record, those it would add now) and restore what it changed."""
    notes: list[str] = []
    lists = record.get("lists", {}) if record else {_key(p): w for p, w in wanted_lists(paths).items()}
    for key, mine in lists.items():
        entries = _lookup(data, tuple(key.split(".")))
        if isinstance(entries, list):
            gone = set(mine)
            entries[:] = [e for e in entries if e not in gone]
    if record:
        for key, was in record.get("scalars", {}).items():
            path = tuple(key.split("."))
            parent = _lookup(data, path[:-1])
            if isinstance(parent, dict) and parent.get(path[-1]) == SCALARS[path][0]:
                if "before" in was:
                    parent[path[-1]] = was["before"]
                else:
                    parent.pop(path[-1], None)
    else:
        notes.append(
            "no record of what guard set: its deny entries were removed, sandbox.enabled and the other switches were left as they are"
        )
    for key in sorted(record.get("created", []) if record else [], key=lambda k: -k.count(".")):
        path = tuple(key.split("."))
        parent = data if len(path) == 1 else _lookup(data, path[:-1])
        if isinstance(parent, dict) and parent.get(path[-1]) in ({}, []):
            del parent[path[-1]]
    return notes


def apply(
    scope: str, paths: ProtectedPaths, *, project_dir: Path, home: Path, uninstall: bool = False, dry_run: bool = False
) -> SandboxChange:
    """Merge guard's sandbox settings into the file for ``scope`` (or with ``uninstall`` take them out); idempotent."""
    path = (
        project_dir / LOCAL_FILE
        if scope == "project"
        else settings_path("claude", scope, project_dir=project_dir, home=home)
    )
    original = path.read_text(encoding="utf-8") if path.exists() else None
    data = parse_json(original, path)
    before = copy.deepcopy(data)
    record = records.recall(path)
    notes: list[str] = []
    try:
        if uninstall:
            notes = _uninstall(data, paths, record)
        else:
            record = record or {}
            _install(data, paths, record)
    except ValueError as exc:
        raise ConfigError(f"{exc}; nothing was written", file=str(path)) from None
    if data == before:
        if uninstall and record and not dry_run:
            records.forget(path)
        return SandboxChange(path, changed=False, notes=tuple(notes))
    if not uninstall:
        assert record is not None
        record.setdefault("made_file", original is None)
    gone = (
        uninstall and not data and bool(record and record.get("made_file"))
    )  # the file guard made, with nothing else in it
    text = None if gone else dump_json(data, original)
    if not dry_run:
        if text is None:
            path.unlink()
        else:
            write_atomic(path, text)
        if uninstall:
            records.forget(path)
        else:
            assert record is not None
            records.remember(path, record)
    return SandboxChange(path, changed=True, text=text, notes=tuple(notes))


def settings_files(project_dir: Path, home: Path) -> list[tuple[str, Path]]:
    """The files Claude Code merges settings from, highest precedence first (managed settings aside)."""
    return [
        ("local", project_dir / LOCAL_FILE),
        ("project", project_dir / ".claude/settings.json"),
        ("user", settings_path("claude", "user", project_dir=project_dir, home=home)),
    ]


def missing_tools() -> list[str]:
    """What Claude Code's sandbox needs on this machine and cannot find (bubblewrap and socat on Linux; nothing on macOS)."""
    if sys.platform == "darwin":
        return [] if shutil.which("sandbox-exec") else ["sandbox-exec"]
    if sys.platform.startswith("linux"):
        return [tool for tool in ("bwrap", "socat") if shutil.which(tool) is None]
    return [f"a sandbox on {sys.platform} (Claude Code sandboxes Linux and macOS only)"]


def effective(
    project_dir: Path, home: Path
) -> tuple[dict[tuple[str, ...], object], dict[tuple[str, ...], list[tuple[Path, object]]]]:
    """The sandbox switches as Claude Code resolves them (first file that sets one), and every list entry with the file it is in."""
    scalars: dict[tuple[str, ...], object] = {}
    lists: dict[tuple[str, ...], list[tuple[Path, object]]] = {
        key: [] for key in (_DENY_WRITE, _DENY_READ, _DENY_RULES)
    }
    for scope, path in settings_files(project_dir, home):
        try:
            data = parse_json(path.read_text(encoding="utf-8"), path) if path.is_file() else {}
        except (OSError, ValueError):
            continue
        root = project_dir if scope != "user" else path.parent
        for key in SCALARS:
            value = _lookup(data, key)
            if key not in scalars and value is not None:
                scalars[key] = value
        for key in lists:
            found = _lookup(data, key)
            lists[key] += [(root, entry) for entry in found] if isinstance(found, list) else []
        excluded = _lookup(data, ("sandbox", "excludedCommands"))
        if isinstance(excluded, list) and excluded:
            scalars.setdefault(("sandbox", "excludedCommands"), excluded)
    return scalars, lists


def _absolute(entry: str, root: Path, home: Path) -> str | None:
    """A sandbox path entry as Claude Code resolves it: ``//abs``, ``~/…``, absolute, or relative to the settings' root."""
    if entry.startswith("//"):
        return entry[1:]
    if entry == "~" or entry.startswith("~/"):
        return str(home) + entry[1:]
    return os.path.normpath(entry if entry.startswith("/") else os.path.join(root, entry))


def _rule_target(rule: object, tool: str, root: Path, home: Path) -> str | None:
    """The path a ``Tool(path)`` deny rule names, without a trailing ``/**``; None for another tool or a pattern."""
    if not isinstance(rule, str) or not rule.startswith(f"{tool}(") or not rule.endswith(")"):
        return None
    inner = rule[len(tool) + 1 : -1].removesuffix("/**")
    if inner.startswith("//"):
        return inner[1:]
    if inner.startswith("~/"):
        return str(home) + inner[1:]
    if inner.startswith("/"):
        return os.path.normpath(os.path.join(root, inner[1:]))
    return None


def _covered(path: str, denied: set[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in denied)


def denied(path: Path, *, reads: bool, project_dir: Path, home: Path) -> bool:
    """Whether the settings here deny the agent writes to ``path`` (``reads``: reads of it), in the sandbox and its file tools."""
    _, lists = effective(project_dir, home)
    listed, tool = (_DENY_READ, "Read") if reads else (_DENY_WRITE, "Edit")
    entries = {p for root, e in lists[listed] if isinstance(e, str) and (p := _absolute(e, root, home))}
    rules = {p for root, r in lists[_DENY_RULES] if (p := _rule_target(r, tool, root, home))}
    return _covered(str(path), entries) and _covered(str(path), rules)


def gaps(paths: ProtectedPaths, project_dir: Path, home: Path) -> Iterator[str]:
    """Why Claude Code's sandbox, as configured here, leaves guard's files within the agent's reach (nothing when it holds)."""
    scalars, lists = effective(project_dir, home)
    for key, (value, why) in SCALARS.items():
        if scalars.get(key) != value:
            yield why
    excluded = scalars.get(("sandbox", "excludedCommands"))
    if isinstance(excluded, list) and excluded:
        yield f"sandbox.excludedCommands runs {', '.join(map(str, excluded))} outside the sandbox"
    writes = {p for root, e in lists[_DENY_WRITE] if isinstance(e, str) and (p := _absolute(e, root, home))}
    reads = {p for root, e in lists[_DENY_READ] if isinstance(e, str) and (p := _absolute(e, root, home))}
    edits = {p for root, r in lists[_DENY_RULES] if (p := _rule_target(r, "Edit", root, home))}
    read_rules = {p for root, r in lists[_DENY_RULES] if (p := _rule_target(r, "Read", root, home))}
    open_writes = [p for p in paths.write if not (_covered(p, writes) and _covered(p, edits))]
    open_reads = [p for p in paths.read if not (_covered(p, reads) and _covered(p, read_rules))]
    if open_writes:
        yield f"{len(open_writes)} protected path(s) are not denied to writes (denyWrite and Edit rules), e.g. {open_writes[0]}"
    if open_reads:
        yield f"guard's secret is not denied to reads (denyRead and Read rules): {open_reads[0]}"
    for tool in missing_tools():
        yield f"{tool} is not installed (Claude Code's sandbox needs it here)"
