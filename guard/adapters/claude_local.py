"""This user's part of a project's Claude Code settings: ``.claude/settings.local.json``, never committed.

``guard install claude`` writes there what is this machine's alone: ``GUARD_HOOK`` (the program the shared
launcher in ``.claude/settings.json`` runs) and the sandbox settings with this machine's paths. A checkout the user's
install never reached (a teammate's clone, a new git worktree, which Claude Code gives the main checkout's local
settings instead) has neither of its own: :mod:`guard.setup.doctor` reports it, and a hook says so as a session starts
(:func:`guard.adapters.claude.missing_setup`).
"""

from __future__ import annotations

from pathlib import Path

from guard.adapters.installers import settings_path
from guard.adapters.settings_file import parse_json
from guard.core.errors import ConfigError
from guard.core.settings import LAUNCHER_ENV

__all__ = ["LOCAL_FILE", "personal"]

LOCAL_FILE = ".claude/settings.local.json"


def personal(*, project_dir: Path, home: Path) -> tuple[Path, str] | None:
    """Where this user's ``GUARD_HOOK`` is set for the project and its value: the local settings, then the user's."""
    for path in (project_dir / LOCAL_FILE, settings_path("claude", "user", project_dir=project_dir, home=home)):
        try:
            data = parse_json(path.read_text(encoding="utf-8"), path) if path.is_file() else {}
        except (OSError, ConfigError):
            continue  # reported where the hooks of that file are read
        env = data.get("env")
        value = env.get(LAUNCHER_ENV) if isinstance(env, dict) else None
        if isinstance(value, str) and value.strip():
            return path, value
    return None
