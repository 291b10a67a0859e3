"""Finding and loading guard's configuration.

``load_config`` first tries a compiled snapshot of the config (plain JSON, keyed
by the source files' paths, sizes and mtimes) so ``guard hook`` never pays for
YAML and pydantic validation when nothing changed; on a miss it parses and
validates (:mod:`guard.config.parse`) and writes a new snapshot.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from guard.hooks.spec import HookSpec
from guard.settings import Settings

__all__ = ["LoadedConfig", "find_config", "load_config"]


@dataclass
class LoadedConfig:
    """Settings plus the hook specs of one config and the files they came from."""

    settings: Settings = field(default_factory=Settings)
    specs: list[HookSpec] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


def find_config(path: str | None = None) -> Path | None:
    """``--config PATH``, then ``$GUARD_CONFIG``, then ``./guard.yaml``, then ``./.guard/guard.yaml``."""
    explicit = path or os.environ.get("GUARD_CONFIG")
    if explicit:
        return Path(explicit)
    for candidate in (Path("guard.yaml"), Path(".guard/guard.yaml")):
        if candidate.is_file():
            return candidate
    return None


def load_config(path: str | None = None, *, use_snapshot: bool = True) -> LoadedConfig:
    """Load the config found by :func:`find_config`; no config at all = no hooks, defaults.

    Unless the config says ``protect: false``, the built-in self-protection hook
    (:mod:`guard.hooks.protect`) is added after the config's own hooks.
    """
    found = find_config(path)
    if found is None:
        return LoadedConfig()
    loaded = _load(found, use_snapshot)
    if loaded.settings.protect:
        from guard.hooks.protect import protect_spec

        loaded.specs.append(protect_spec(loaded))
    return loaded


def _load(found: Path, use_snapshot: bool) -> LoadedConfig:
    from guard.config import snapshot

    if use_snapshot:
        cached = snapshot.read(found)
        if cached is not None:
            return cached
    from guard.config.parse import parse_config
    from guard.errors import ConfigError

    try:
        loaded = parse_config(found)
    except ConfigError as exc:
        raise exc.with_line() from exc
    if use_snapshot:
        snapshot.write(found, loaded)
    return snapshot.expand_env(loaded)
