"""This user's part of a project's Claude Code settings: ``.claude/settings.local.json``, never committed.

``guard install claude`` writes there what is this machine's alone: ``GUARD_HOOK`` (the program the shared
launcher in ``.claude/settings.json`` runs) and the sandbox settings with this machine's paths. A checkout the user's
install never reached (a teammate's clone, a new git worktree, which Claude Code gives the main checkout's local
settings instead) has neither of its own: :mod:`guard.setup.doctor` reports it, and a hook says so as a session starts
(:func:`guard.adapters.claude.missing_setup`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from guard.adapters.checkout import protected_by
from guard.adapters.installers import settings_path
from guard.adapters.settings_file import parse_json
from guard.core.errors import ConfigError
from guard.core.settings import LAUNCHER_ENV

__all__ = ["LOCAL_FILE", "personal", "sandbox_misses"]

LOCAL_FILE = ".claude/settings.local.json"


def _read(path: Path) -> dict[str, Any]:
    """The settings in ``path``; nothing for a file that is missing or does not parse (reported where its hooks are read).

    Never an error: it runs as a session starts, after the decision, and a file the agent can write (a checkout's
    local settings, not yet sandboxed) that stopped it there would take the session's warnings with it."""
    try:
        return parse_json(path.read_text(encoding="utf-8"), path) if path.is_file() else {}
    except (OSError, ValueError, RecursionError, ConfigError):  # ValueError: not UTF-8
        return {}


def personal(*, project_dir: Path, home: Path) -> tuple[Path, str] | None:
    """Where this user's ``GUARD_HOOK`` is set for the project and its value: the local settings, then the user's."""
    for path in (project_dir / LOCAL_FILE, settings_path("claude", "user", project_dir=project_dir, home=home)):
        data = _read(path)
        env = data.get("env")
        value = env.get(LAUNCHER_ENV) if isinstance(env, dict) else None
        if isinstance(value, str) and value.strip():
            return path, value
    return None


def sandbox_misses(settings: Path, config: Path) -> bool:
    """Whether ``settings`` switch Claude Code's sandbox on without denying writes to ``config``: settings written for
    another folder (a project moved or copied since ``guard install claude`` wrote them). No sandbox there is the
    user's choice (``--no-sandbox``), not a miss."""
    sandbox = _read(settings).get("sandbox")
    if not isinstance(sandbox, dict) or sandbox.get("enabled") is not True:
        return False
    filesystem = sandbox.get("filesystem")
    denied = filesystem.get("denyWrite") if isinstance(filesystem, dict) else None
    if not isinstance(denied, list):
        return True  # Claude Code reads no list of folders there: none is denied
    return not protected_by((folder for folder in denied if isinstance(folder, str)), config)
