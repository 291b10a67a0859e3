"""Codex CLI's sandbox around guard: a permission profile ``guard install codex`` writes into ``config.toml``.

Codex runs every command in its sandbox (bubblewrap with seccomp on Linux, it
ships its own; Seatbelt on macOS). A permission profile selected by
``default_permissions`` says what those commands may touch; guard's profile
extends the built-in ``:workspace`` one (writes in the workspace and the temp
folders, reads everywhere) with every path guard protects read-only and its
secret unreadable (``"none"``). Codex also keeps ``.codex/`` and ``.git/`` in the
workspace read-only itself.

Codex uses the older settings instead of any profile when ``sandbox_mode``
appears in a loaded config (or ``--sandbox`` is passed): install refuses a
config that sets it, and ``guard doctor`` reports it. Project config is read
only in a project the user trusted in Codex. The profile lives in two blocks
between guard's markers (the ``default_permissions`` key must come before any
table); the rest of the file is left byte for byte, and ``--uninstall``
removes only the blocks. Standard library only (``tomllib`` to check the result).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from guard.adapters.codex import PROFILE, PROJECT_ROOTS, path_rules, read_config
from guard.adapters.installers import settings_path
from guard.adapters.settings_file import write_atomic
from guard.core.errors import ConfigError
from guard.sandbox import SandboxChange
from guard.sandbox.paths import ProtectedPaths

__all__ = ["PROFILE", "apply", "config_files", "gaps"]

_BEGIN = "# >>> guard sandbox: written by `guard install codex` (removed by --uninstall or --no-sandbox)"
_END = "# <<< guard sandbox"
_TOP = re.compile(rf"\A{re.escape(_BEGIN)}\n.*?^{re.escape(_END)}\n\n?", re.MULTILINE | re.DOTALL)
_BOTTOM = re.compile(rf"\n?^{re.escape(_BEGIN)}\n.*?^{re.escape(_END)}\n?\Z", re.MULTILINE | re.DOTALL)
_ANYWHERE = re.compile(rf"^{re.escape(_BEGIN)}\n.*?^{re.escape(_END)}\n?", re.MULTILINE | re.DOTALL)


def config_file(scope: str, *, project_dir: Path, home: Path) -> Path:
    """``.codex/config.toml`` in the project, or ``$CODEX_HOME/config.toml`` (``~/.codex``) for the user."""
    return settings_path("codex", scope, project_dir=project_dir, home=home).with_name("config.toml")


def config_files(project_dir: Path, home: Path) -> list[tuple[str, Path]]:
    """The config layers Codex reads, highest precedence first (managed requirements aside)."""
    return [(scope, config_file(scope, project_dir=project_dir, home=home)) for scope in ("project", "user")]


def _key(path: str) -> str:
    return json.dumps(path)  # a TOML basic string: JSON's escapes are TOML's


def _listed(paths: tuple[str, ...]) -> list[str]:
    """The paths Codex's bubblewrap can mount without making anything: those that exist.

    For a missing one, Codex (0.171) makes a placeholder on the host, mounts over it and removes it afterwards; a
    session starts several sandboxes at once (its skills and AGENTS.md are read through them), one takes another's
    placeholder for a real path, and the session fails to start (``bwrap: Can't find source path …``), most times
    in a real session. Outside the workspace and the temp folders nothing is writable anyway; a protected file made
    there later needs ``guard install codex`` again (``guard doctor`` says so).
    """
    return [p for p in paths if os.path.lexists(p)]


def _blocks(paths: ProtectedPaths) -> tuple[str, str]:
    """The top block (the profile's selection) and the bottom one (the profile), every path by its absolute name.

    Not relative to the session's folder (``:project_roots``), though that would travel with a committed ``.codex/``
    to a worktree: Codex (0.171) joins those keys to the folder the session starts in, so in a subfolder they name
    paths that do not exist (``docs/guard.yaml``), whose placeholders made most sessions started there fail (see
    :func:`_listed`), and two below one missing folder (``docs/.claude/settings.json`` and
    ``docs/.claude/settings.local.json``) made every one fail. A worktree's session is told its files are not covered
    (:data:`guard.adapters.codex.SANDBOX_ELSEWHERE`).
    """
    unreadable = _listed(paths.read_roots())
    read_only = [
        p
        for p in _listed(paths.write_roots())
        if not any(p == r or p.startswith(r.rstrip("/") + "/") for r in unreadable)
    ]
    lines = [f"[permissions.{PROFILE}]", 'extends = ":workspace"', "", f"[permissions.{PROFILE}.filesystem]"]
    lines += [f'{_key(p)} = "read"' for p in read_only]
    lines += [f'{_key(p)} = "none"' for p in unreadable]
    top = f'{_BEGIN}\ndefault_permissions = "{PROFILE}"\n{_END}\n'
    return top, f"{_BEGIN}\n" + "\n".join(lines) + f"\n{_END}\n"


def _without_blocks(text: str) -> str:
    """The file as the user wrote it: guard's two blocks and the blank lines install put beside them taken out."""
    return _ANYWHERE.sub("", _BOTTOM.sub("", _TOP.sub("", text, count=1), count=1))


def _parse(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML ({exc}); nothing was written", file=str(path)) from None


def _refusal(theirs: dict[str, Any]) -> str | None:
    """Why guard's profile cannot take effect beside the user's own settings, or None."""
    if "sandbox_mode" in theirs:
        return (
            f"sandbox_mode = {theirs['sandbox_mode']!r} makes Codex ignore permission profiles, guard's included: "
            "remove it (guard's profile extends :workspace, the same writes as workspace-write), or pass --no-sandbox"
        )
    chosen = theirs.get("default_permissions")
    if chosen not in (None, PROFILE):
        return f"default_permissions = {chosen!r} already selects a profile: add guard's rules to it by hand, or pass --no-sandbox"
    if PROFILE in (theirs.get("permissions") or {}):
        return f"a [permissions.{PROFILE}] table guard did not write is already there: rename it, or pass --no-sandbox"
    return None


def apply(
    scope: str, paths: ProtectedPaths, *, project_dir: Path, home: Path, uninstall: bool = False, dry_run: bool = False
) -> SandboxChange:
    """Write guard's profile blocks into the ``config.toml`` for ``scope`` (or with ``uninstall`` take them out); idempotent."""
    path = config_file(scope, project_dir=project_dir, home=home)
    original = path.read_text(encoding="utf-8") if path.exists() else ""
    theirs = _without_blocks(original)
    parsed = _parse(theirs, path)
    if uninstall:
        text = theirs
    else:
        refusal = _refusal(parsed)
        if refusal:
            raise ConfigError(f"{refusal}; nothing was written", file=str(path))
        top, bottom = _blocks(paths)
        text = top + (f"\n{theirs}\n" if theirs else "") + bottom
        _parse(text, path)  # what Codex will read must parse
    if text == original:
        return SandboxChange(path, changed=False)
    if not dry_run:
        if text:
            write_atomic(path, text)
        else:
            path.unlink()  # nothing of the user's in it: the file guard made goes
    return SandboxChange(path, changed=True, text=text)


def gaps(paths: ProtectedPaths, project_dir: Path, home: Path) -> list[str]:
    """Why Codex's sandbox, as configured here, leaves guard's files within the agent's reach ([] when it holds)."""
    layers = [(scope, file, read_config(file)) for scope, file in config_files(project_dir, home)]
    found = []
    for _, file, data in layers:
        if "sandbox_mode" in data:
            found.append(
                f"{file} sets sandbox_mode = {data['sandbox_mode']!r}: Codex ignores permission profiles, guard's included"
            )
    chosen = next(
        ((file, data["default_permissions"]) for _, file, data in layers if "default_permissions" in data), None
    )
    if chosen is None or chosen[1] != PROFILE:
        found.append(
            f"default_permissions does not select guard's profile ({chosen[1]!r} in {chosen[0]})"
            if chosen
            else "no permission profile is selected (default_permissions): Codex's default sandbox lets commands read guard's secret"
        )
        return found
    profile: dict[str, Any] = next(
        (data["permissions"][PROFILE] for _, _, data in layers if PROFILE in (data.get("permissions") or {})), {}
    )
    filesystem = profile.get("filesystem")
    rules = path_rules(filesystem, str(project_dir.resolve())) if isinstance(filesystem, dict) else {}
    if isinstance(filesystem, dict) and PROJECT_ROOTS in filesystem:
        found.append(
            f"guard's profile names paths relative to the session's folder ({PROJECT_ROOTS}, an older guard install "
            "codex): a Codex session started in a subfolder fails to start; run guard install codex again"
        )

    def held(path: str, access: frozenset[str]) -> bool:
        return any((path == p or path.startswith(p.rstrip("/") + "/")) and rules[p] in access for p in rules)

    writable = [
        str(project_dir.resolve()),
        "/tmp",
        os.environ.get("TMPDIR") or "/tmp",
    ]  # what :workspace lets commands write

    def reachable(path: str) -> bool:
        return any(path == root or path.startswith(root.rstrip("/") + "/") for root in writable)

    # what the profile can list (a path that does not exist cannot be, see _listed) and commands could reach
    open_writes = [p for p in _listed(paths.write) if reachable(p) and not held(p, frozenset({"read", "none"}))]
    open_reads = [p for p in _listed(paths.read) if not held(p, frozenset({"none"}))]
    if open_writes:
        found.append(f"{len(open_writes)} protected path(s) are writable under guard's profile, e.g. {open_writes[0]}")
    if open_reads:
        found.append(f"guard's secret is readable under guard's profile: {open_reads[0]}")
    return found
