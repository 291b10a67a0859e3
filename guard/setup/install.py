"""Write (or remove) guard's hook entry in an agent client's own settings file.

People adopt guard by adding one command hook to a file their agent already reads,
so the edit must be safe on a file they care about: it merges with the hooks and
keys already there, installing twice leaves the file byte-identical, uninstalling
removes only guard's entry, and a file guard cannot read is reported (naming the
file and key) with nothing written. Standard library only; no guard hook path.

Where each client reads hooks is its installer (:mod:`guard.adapters.installers`).

Copilot CLI also reads machine-wide policy hooks (scope ``policy``:
``/etc/github-copilot/policy.d/guard.json``, root-owned, not group- or
world-writable), which ``disableAllHooks`` cannot switch off. For Claude Code,
scope ``policy`` is its managed settings (``/etc/claude-code/managed-settings.json``,
on macOS ``/Library/Application Support/ClaudeCode/``), written with
``allowManagedHooksOnly: true``: only managed hooks run, and nothing a user or a
project writes removes guard's (docs/team.md).

Cursor's ``hooks.json`` lists handlers straight under each event (no matcher
groups, ``"version": 1`` at the top) and takes ``failClosed`` per handler; Claude
Code (2.1.295 and later) takes ``onFailure: "block"``. Both make a hook the client
cannot start, that crashes or times out block the call instead of letting it run.

A project-scope command names the project (``guard hook --project DIR``): clients
start hooks in the session's current folder, which the agent's ``cd`` moves.
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import site
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from guard.adapters.installers import ClientProfile, profile_for, settings_path
from guard.adapters.settings_file import dump_json as _dump
from guard.adapters.settings_file import parse_json as _parse
from guard.adapters.settings_file import write_atomic as _write_atomic
from guard.config.own_hook import parse_guard_hook
from guard.core.errors import ConfigError
from guard.core.events.names import canonical_event
from guard.core.settings import PROGRAM_ENV, from_env

__all__ = [
    "DEADLINE_MARGIN_S",
    "InstallResult",
    "InstalledHook",
    "default_command",
    "guard_program",
    "install",
    "installed_hooks",
    "needed_timeout",
    "plugin_commands",
    "plugin_guard",
    "plugin_hooks",
    "plugin_scopes",
]

DEFAULT_TIMEOUT_S = 30
#: Seconds guard needs between its longest hook timeout and the client's kill to answer with its failure policy.
DEADLINE_MARGIN_S = 5


@dataclass
class InstallResult:
    """What an install or uninstall did (or would do): the file, the events touched, the new text."""

    path: Path
    changed: bool
    events: list[str] = field(default_factory=list)  # client event names added, updated or removed
    text: str | None = None  # the file's new content when changed


def needed_timeout(timeouts: Sequence[float]) -> int:
    """The smallest client timeout (seconds) that still lets guard answer after the slowest of these hooks."""
    return math.ceil(max(timeouts, default=0.0) + DEADLINE_MARGIN_S)


@dataclass(frozen=True)
class InstalledHook:
    """One guard entry found in a client's settings file."""

    client: str
    scope: str
    path: Path
    event: str  # the client's event name
    command: str
    timeout_s: float | None  # None: the handler sets none and the client's default applies
    fail_closed: bool = False  # the handler says "failClosed": true (Cursor: a hook that fails blocks)
    on_failure: str | None = None  # the handler's "onFailure" (Claude Code: "block" makes a hook that fails block)


def installed_hooks(client: str, scope: str, *, project_dir: Path, home: Path) -> list[InstalledHook]:
    """guard's entries in ``client``'s settings at ``scope`` ([] without the file); ConfigError when it cannot be read."""
    profile = profile_for(client)
    path = settings_path(client, scope, project_dir=project_dir, home=home)
    if not path.is_file():
        return []
    hooks_key = None if profile.bare_project_file and scope == "project" else "hooks"
    hooks = _hooks_block(_parse(path.read_text(encoding="utf-8"), path), hooks_key, path)
    found = []
    for event in hooks:
        for handlers in _handler_lists(profile, hooks, event, path, hooks_key):
            for handler in handlers:
                if not isinstance(handler, dict) or handler.get("type", "command") != "command":
                    continue
                if parse_guard_hook(handler.get(profile.command_key)) is None:
                    continue
                timeout = handler.get(profile.timeout_key)
                seconds = (
                    None if not isinstance(timeout, (int, float)) else timeout / 1000 if profile.timeout_ms else timeout
                )
                found.append(
                    InstalledHook(
                        client,
                        scope,
                        path,
                        event,
                        handler[profile.command_key],
                        seconds,
                        handler.get("failClosed") is True,
                        handler.get("onFailure"),
                    )
                )
    return found


def guard_script() -> str | None:
    """The ``guard`` console script beside this interpreter, if any: what a bare ``guard`` means in this environment."""
    for folder in (os.path.dirname(os.path.abspath(sys.executable)), sysconfig.get_path("scripts")):
        script = os.path.join(folder, "guard")
        if os.path.isfile(script) and os.access(script, os.X_OK):
            return script
    return None


def guard_program() -> list[str]:
    """The absolute command that runs the guard doing this install, as pre-commit pins its interpreter.

    This interpreter (a venv's runs with a PATH that lacks the venv), isolated with ``-I``:
    the client's working directory, ``PYTHONPATH`` and the other ``PYTHON*`` variables,
    and the user's site-packages stay off ``sys.path``, so nothing the agent can write
    there (a ``guard/`` folder, a ``.pth`` file, a module named like one of the standard
    library's) runs inside the hook. A guard installed in the user's site-packages
    (``pip install --user``) needs that folder: ``-E -P`` then, and the self-protection
    rule guards the folder as guard's installation (:mod:`guard.protection.targets`).
    """

    interpreter = os.path.abspath(sys.executable)
    user_site = site.getusersitepackages()
    package = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if site.ENABLE_USER_SITE and package.startswith(os.path.realpath(user_site) + os.sep):
        return [interpreter, "-E", "-P", "-m", "guard.cli.main"]
    return [interpreter, "-I", "-m", "guard.cli.main"]


def default_command(client: str, timeout_s: int = DEFAULT_TIMEOUT_S, project: Path | None = None) -> str:
    """``/abs/guard hook --format CLIENT --deadline SECONDS [--project DIR]``.

    The client's timeout rides along so guard answers first; ``project`` anchors the hook
    to the project it was installed for, wherever the client starts it.
    """
    anchor = ["--project", str(project)] if project is not None else []
    return shlex.join([*guard_program(), "hook", "--format", client, "--deadline", str(timeout_s), *anchor])


def install(
    client: str,
    *,
    scope: str = "project",
    project_dir: Path | None = None,
    home: Path | None = None,
    events: Sequence[str] | None = None,
    command: str | None = None,
    timeout_s: int = DEFAULT_TIMEOUT_S,
    uninstall: bool = False,
    dry_run: bool = False,
    event_commands: Mapping[str, str] | None = None,
) -> InstallResult:
    """Add (or with ``uninstall`` remove) guard's command hook for ``events`` in ``client``'s settings.

    guard's entry is the command handler whose ``command`` equals ``command``
    (default :func:`default_command`) or runs ``guard hook`` with the same
    ``--format`` and ``--config`` (another venv's path, another ``--deadline``);
    nothing else in the file is touched. ``event_commands`` (client event name → command) sets another
    command for some events (``--client curl`` keeps the plain ``guard hook`` at SessionStart).
    """
    profile = profile_for(client)
    path = settings_path(client, scope, project_dir=project_dir or Path.cwd(), home=home or Path.home())
    names = [_client_event(profile, e) for e in (events or profile.default_events)]
    command = command or default_command(client, timeout_s)
    original = path.read_text(encoding="utf-8") if path.exists() else None
    data = _parse(original, path)
    bare = profile.bare_project_file and scope == "project"
    hooks_key = None if bare else "hooks"
    hooks = _hooks_block(data, hooks_key, path)

    if uninstall:
        touched = [n for n in names if _remove(profile, hooks, n, command, path, hooks_key)]
        if hooks_key and not hooks and hooks_key in data and touched:
            del data[hooks_key]
    else:
        chosen = event_commands or {}
        touched = [
            n
            for n in names
            if _add(profile, hooks, n, _handler(profile, chosen.get(n, command), timeout_s, n), path, hooks_key)
        ]
        if hooks_key and touched:
            data[hooks_key] = hooks
            data = {**{k: v for k, v in profile.file_keys if k not in data}, **data}
    if scope == "policy" and _set_policy_keys(profile, data, remove=uninstall) and not touched:
        touched = ["(managed settings)"]

    if not touched:
        return InstallResult(path=path, changed=False)
    if uninstall and profile.own_file and set(data) <= {key for key, _ in profile.file_keys}:
        if not dry_run:
            path.unlink()
        return InstallResult(path=path, changed=True, events=touched)
    text = _dump(data, original)
    if not dry_run:
        _write_atomic(path, text)
        if scope == "policy":
            path.chmod(0o644)  # Copilot ignores a policy file that is group- or world-writable
    return InstallResult(path=path, changed=True, events=touched, text=text)


def _set_policy_keys(profile: ClientProfile, data: dict[str, Any], *, remove: bool) -> bool:
    """Put the profile's policy keys into (or take them out of) a policy file's ``data``; whether that changed it."""
    changed = False
    for key, value in profile.policy_keys:
        if remove and key in data:
            del data[key]
            changed = True
        elif not remove and data.get(key) != value:
            data[key] = value
            changed = True
    return changed


def _client_event(profile: ClientProfile, name: str) -> str:
    """Map any event spelling guard accepts to the client's name, refusing events it does not have."""
    try:
        canonical = canonical_event(name)
    except ValueError as exc:
        raise ConfigError(str(exc), key="--events") from None
    client_name = profile.event_name(canonical)
    if client_name not in profile.events:
        raise ConfigError(
            f"{profile.name} has no hook event for {name!r}; it supports {', '.join(profile.events)}",
            key="--events",
        )
    return client_name


def _hooks_block(data: dict[str, Any], key: str | None, path: Path) -> dict[str, Any]:
    if key is None:
        return data
    hooks = data.get(key, {})
    if not isinstance(hooks, dict):
        raise ConfigError(
            "must be an object mapping event names to lists; nothing was written", file=str(path), key=key
        )
    return hooks


def _groups(hooks: dict[str, Any], event: str, path: Path, prefix: str | None) -> list[dict[str, Any]]:
    """The event's matcher groups, checked to have the shape every client documents."""
    key = f"{prefix}.{event}" if prefix else event
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise ConfigError("must be a list of matcher groups; nothing was written", file=str(path), key=key)
    for i, group in enumerate(groups):
        if not isinstance(group, dict) or not isinstance(group.get("hooks", []), list):
            raise ConfigError(
                "a matcher group must be an object with a 'hooks' list; nothing was written",
                file=str(path),
                key=f"{key}[{i}]",
            )
    return groups


def _handler_lists(
    profile: ClientProfile, hooks: dict[str, Any], event: str, path: Path, prefix: str | None
) -> list[list[object]]:
    """The handler lists of ``event``: one per matcher group, or the event's own list in a flat file."""
    if not profile.flat:
        return [group.get("hooks", []) for group in _groups(hooks, event, path, prefix)]
    handlers = hooks.get(event, [])
    if not isinstance(handlers, list):
        raise ConfigError(
            "must be a list of hook handlers; nothing was written",
            file=str(path),
            key=f"{prefix}.{event}" if prefix else event,
        )
    return [handlers]


def _handler(profile: ClientProfile, command: str, timeout_s: int, event: str | None = None) -> dict[str, Any]:
    handler: dict[str, Any] = {"type": "command"} if profile.typed else {}
    handler.update(
        {profile.command_key: command, profile.timeout_key: timeout_s * 1000 if profile.timeout_ms else timeout_s}
    )
    if event in profile.fail_closed_events:
        handler["failClosed"] = True
    handler.update(profile.handler_extra)
    return handler


def _is_ours(handler: object, profile: ClientProfile, command: str) -> TypeGuard[dict[str, Any]]:
    """Whether ``handler`` is guard's own (a command handler running guard hook as ``command`` does)."""
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return False
    if handler.get(profile.command_key) == command:
        return True
    ours, theirs = parse_guard_hook(command), parse_guard_hook(handler.get(profile.command_key))
    return ours is not None and theirs is not None and ours.identity == theirs.identity


def _add(
    profile: ClientProfile, hooks: dict[str, Any], event: str, handler: dict[str, Any], path: Path, prefix: str | None
) -> bool:
    """Add guard's handler for ``event`` or refresh it in place; False when it is already exactly there."""
    lists = _handler_lists(profile, hooks, event, path, prefix)
    for handlers in lists:
        for i, existing in enumerate(handlers):
            if _is_ours(existing, profile, handler[profile.command_key]):
                if existing == handler:
                    return False
                handlers[i] = {**existing, **handler}
                return True
    if profile.flat:
        hooks[event] = [*lists[0], handler]
        return True
    group = {"matcher": profile.matcher, "hooks": [handler]} if profile.matcher is not None else {"hooks": [handler]}
    hooks[event] = [*hooks.get(event, []), group]
    return True


def _remove(
    profile: ClientProfile, hooks: dict[str, Any], event: str, command: str, path: Path, prefix: str | None
) -> bool:
    """Drop guard's handler from ``event``, then any group or event list that only it filled."""
    if event not in hooks:
        return False
    if profile.flat:
        handlers = _handler_lists(profile, hooks, event, path, prefix)[0]
        kept_handlers = [h for h in handlers if not _is_ours(h, profile, command)]
        if len(kept_handlers) == len(handlers):
            return False
        if kept_handlers:
            hooks[event] = kept_handlers
        else:
            del hooks[event]
        return True
    groups = _groups(hooks, event, path, prefix)
    removed = False
    kept = []
    for group in groups:
        handlers = group.get("hooks", [])
        others = [h for h in handlers if not _is_ours(h, profile, command)]
        if len(others) != len(handlers):
            removed = True
            if not others:
                continue
            group = {**group, "hooks": others}
        kept.append(group)
    if not removed:
        return False
    if kept:
        hooks[event] = kept
    else:
        del hooks[event]
    return True


#: The Claude Code plugin shipped in the package (its own one-plugin marketplace), and its id there.
PLUGIN_DIR = Path(__file__).parents[1] / "claude_plugin"
PLUGIN_ID = "guard@guard"
#: The plugin's hook command: a plugin cannot know this venv's path, so ``hooks/run-guard.sh`` finds guard
#: as :func:`plugin_guard` does, or blocks the call with a message (a command that does not start lets it through).
PLUGIN_COMMAND = 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/run-guard.sh" hook --format claude --deadline 600'


def plugin_guard(env: Mapping[str, str], home: Path) -> str | None:
    """The guard program the plugin's hook runs with ``env``: ``$GUARD_BIN``, then PATH, then ``~/.local/bin/guard``."""
    candidates = [
        from_env(PROGRAM_ENV, env) or "",
        shutil.which("guard", path=env.get("PATH")) or "",
        str(home / ".local" / "bin" / "guard"),
    ]
    return next((c for c in candidates if c and os.path.isfile(c) and os.access(c, os.X_OK)), None)


def plugin_scopes(*, project_dir: Path, home: Path) -> list[tuple[str, Path]]:
    """The Claude Code settings files (scope, path) that enable guard's plugin (``enabledPlugins``)."""
    enabled = []
    for scope in ("project", "user"):
        path = settings_path("claude", scope, project_dir=project_dir, home=home)
        try:
            data = _parse(path.read_text(encoding="utf-8"), path) if path.is_file() else {}
        except (OSError, ConfigError):
            continue  # an unreadable settings file is reported with the client's hooks
        plugins = data.get("enabledPlugins") if isinstance(data, dict) else None
        if isinstance(plugins, dict) and plugins.get(PLUGIN_ID) is True:
            enabled.append((scope, path))
    return enabled


def plugin_hooks() -> dict[str, Any]:
    """The hooks the plugin declares (``hooks/hooks.json``): the events and handler ``guard install claude`` writes."""
    claude = profile_for("claude")
    handler = _handler(claude, PLUGIN_COMMAND, 600)
    return {claude.event_name(e): [{"matcher": claude.matcher, "hooks": [handler]}] for e in claude.default_events}


def plugin_commands(scope: str, *, claude: str = "claude", uninstall: bool = False) -> list[list[str]]:
    """The ``claude plugin`` commands that install (or remove) guard's plugin at ``scope`` (project or user)."""
    if uninstall:
        return [[claude, "plugin", "uninstall", PLUGIN_ID, "--scope", scope]]
    return [
        [claude, "plugin", "marketplace", "add", str(PLUGIN_DIR)],
        [claude, "plugin", "install", PLUGIN_ID, "--scope", scope],
    ]
