"""A config as it is on disk: located, read from its compiled snapshot or parsed and validated, then assembled.

The snapshot (plain JSON, keyed by the source files' paths, sizes and mtimes)
spares YAML and pydantic when nothing changed; on a miss the config is parsed
(:mod:`guard.config.parse`) and a new snapshot written. ``guard hook`` and
``guard serve`` load the copy the user trusted instead (:mod:`guard.config.pinning`).
"""

from __future__ import annotations

from pathlib import Path

from guard.config import org_policy, snapshot
from guard.config.assembly import with_org
from guard.config.location import located
from guard.config.search import find_config
from guard.core.errors import ConfigError
from guard.core.settings import LoadedConfig

__all__ = ["load_config"]


def load_config(path: str | None = None, *, use_snapshot: bool = True) -> LoadedConfig:
    """Load the config found by :func:`~guard.config.search.find_config`; no config at all = no hooks, defaults.

    Under a signed org policy (:mod:`guard.config.org_policy`) the config is merged
    beneath it (and the org policy alone applies where there is no config); a broken
    org policy raises :class:`~guard.core.errors.OrgPolicyError`. Unless the result says
    ``protect: false``, the built-in self-protection hook (:mod:`guard.hooks.protect`)
    is added after the config's own hooks.
    """
    org = org_policy.configured()
    found = find_config(path)
    if found is None:
        return LoadedConfig() if org is None else with_org(org, None)
    return with_org(org, _parsed(found, use_snapshot))


def _parsed(found: Path, use_snapshot: bool) -> LoadedConfig:
    if use_snapshot:
        cached = snapshot.read(found)
        if cached is not None:
            return cached
    from guard.config.parse import parse_config  # pydantic and YAML: only a config that changed pays for them

    try:
        loaded = parse_config(found)
    except ConfigError as exc:
        raise located(exc) from exc
    if use_snapshot:
        snapshot.write(found, loaded)
    return snapshot.expand_env(loaded)
