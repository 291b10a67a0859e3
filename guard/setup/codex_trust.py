"""Whether Codex will read a project's ``.codex/`` at all: its own trust record for the project, which guard never writes.

Codex (0.171) reads a project's ``.codex/hooks.json`` and ``.codex/config.toml`` (guard's hooks and sandbox profile)
only in a project trusted in ``$CODEX_HOME/config.toml`` (``[projects."<folder>"] trust_level = "trusted"``, which
its TUI writes when you accept the folder, or ``codex exec --trust``). The record names the checkout's root, for a
git worktree the main checkout's. Elsewhere, and under another ``CODEX_HOME`` (a record kept in the first one),
``codex exec`` runs every call with neither, saying nothing (``tests/e2e/test_codex_trust.py``); the TUI asks first.
guard cannot run there to say so: ``guard doctor`` does.
"""

from __future__ import annotations

import os
from pathlib import Path

from guard.adapters.checkout import checkout_root, in_main_checkout
from guard.adapters.codex import read_config
from guard.sandbox.codex import config_file

__all__ = ["untrusted"]


def _trust_folder(project_dir: Path) -> str:
    """The folder Codex keys its trust record by: the checkout's root (the main checkout's for a linked worktree)."""
    root = checkout_root(str(project_dir)) or os.path.realpath(project_dir)
    return in_main_checkout(root) or root


def untrusted(project_dir: Path, home: Path) -> str | None:
    """Why Codex will skip the project's ``.codex/`` here (None: it is trusted in the ``CODEX_HOME`` in effect)."""
    folder = _trust_folder(project_dir)
    settings = config_file("user", project_dir=project_dir, home=home)
    projects = read_config(settings).get("projects")
    records = projects if isinstance(projects, dict) else {}
    record = next((r for key, r in records.items() if os.path.realpath(key) == folder), None)
    level = record.get("trust_level") if isinstance(record, dict) else None
    if level == "trusted":
        return None
    said = f"marks {folder} {level}" if isinstance(level, str) else f"has no trust record for {folder}"
    return (
        f"{settings} {said}: Codex reads this project's .codex/ (guard's hooks and sandbox profile) only in a project "
        "you trusted, and codex exec runs every call without them, saying nothing (another CODEX_HOME holds no record)"
    )
