"""The first step of loading a config: where it is (``--config``, ``$GUARD_CONFIG``, else the folder's own)."""

from __future__ import annotations

from pathlib import Path

from guard.core.settings import CONFIG_ENV, from_env

__all__ = ["SEARCHED", "find_config"]

#: Where a folder's config is searched, in order (relative to the folder).
SEARCHED = ("guard.yaml", ".guard/guard.yaml")


def find_config(path: str | None = None, *, cwd: str | None = None) -> Path | None:
    """``--config PATH``, then ``$GUARD_CONFIG``, then ``./guard.yaml``, then ``./.guard/guard.yaml`` (of ``cwd``)."""
    explicit = path or from_env(CONFIG_ENV)
    if explicit:
        return Path(explicit)
    for name in SEARCHED:
        candidate = Path(cwd, name) if cwd else Path(name)
        if candidate.is_file():
            return candidate
    return None
