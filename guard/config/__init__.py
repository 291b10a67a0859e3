"""Finding and loading guard's configuration.

``load_config`` first tries a compiled snapshot of the config (plain JSON, keyed
by the source files' paths, sizes and mtimes) so nothing pays for YAML and
pydantic validation when nothing changed; on a miss it parses and validates
(:mod:`guard.config.parse`) and writes a new snapshot. ``guard hook`` and
``guard serve`` do not load the disk at all but the copy the user trusted
(:func:`guard.config.pinning.load_trusted`).
"""

from __future__ import annotations

import os
from pathlib import Path

from guard.core.settings import LoadedConfig

__all__ = ["LoadedConfig", "find_config", "fit_tier_timeouts", "load_config", "with_org", "with_protection"]

#: Where a folder's config is searched, in order (relative to the folder).
SEARCHED = ("guard.yaml", ".guard/guard.yaml")


def find_config(path: str | None = None, *, cwd: str | None = None) -> Path | None:
    """``--config PATH``, then ``$GUARD_CONFIG``, then ``./guard.yaml``, then ``./.guard/guard.yaml`` (of ``cwd``)."""
    explicit = path or os.environ.get("GUARD_CONFIG")
    if explicit:
        return Path(explicit)
    for name in SEARCHED:
        candidate = Path(cwd, name) if cwd else Path(name)
        if candidate.is_file():
            return candidate
    return None


def load_config(path: str | None = None, *, use_snapshot: bool = True) -> LoadedConfig:
    """Load the config found by :func:`find_config`; no config at all = no hooks, defaults.

    Under a signed org policy (:mod:`guard.config.org_policy`) the config is merged
    beneath it (and the org policy alone applies where there is no config); a broken
    org policy raises :class:`~guard.core.errors.OrgPolicyError`. Unless the result says
    ``protect: false``, the built-in self-protection hook (:mod:`guard.hooks.protect`)
    is added after the config's own hooks.
    """
    from guard.config.org_policy import configured

    org = configured()
    found = find_config(path)
    if found is None:
        return LoadedConfig() if org is None else with_org(org, None)
    return with_org(org, _load(found, use_snapshot))


def with_org(org: LoadedConfig | None, loaded: LoadedConfig | None) -> LoadedConfig:
    """``loaded`` under the org policy ``org`` (either may be None), its smart hooks' timeouts fitted to the tiers', with the self-protection hook."""
    if org is not None:
        from guard.config.org_policy import merged

        loaded = merged(org, loaded)
    return with_protection(fit_tier_timeouts(loaded or LoadedConfig()))


def fit_tier_timeouts(loaded: LoadedConfig) -> LoadedConfig:
    """``loaded`` with each smart hook's timeout raised to fit the tier timeouts it may spend (``models.timeouts``, ``GUARD_TIMEOUT_*``).

    A local CPU model needs a minute where a hosted one needs seconds: setting the
    tiers' timeouts is enough, the hook's own budget (and so the engine's, the
    service's and ``guard install``'s advice on the client timeout) follows. Applied on
    every load, after the snapshot, so the variables are read when the config is used.
    """
    settings = loaded.settings
    for index, spec in enumerate(loaded.specs):
        if spec.kind != "smart":
            continue
        tiers = ("quick", "thorough") if spec.depth == "auto" else (spec.depth,)
        needed = min(600.0, sum(settings.timeout_for(tier) or 0.0 for tier in tiers))
        if needed > spec.timeout:
            loaded.specs[index] = spec.replace(timeout=needed)
    return loaded


def with_protection(loaded: LoadedConfig) -> LoadedConfig:
    """``loaded`` with the built-in self-protection hook after its own hooks, unless it says ``protect: false``.

    Rules in a lane (``skip_read_only``, ``skip_project_writes``) get the protected paths too, even with
    ``protect: false``: a read that names one of them is never decided without the judge.
    """
    lane = [i for i, spec in enumerate(loaded.specs) if spec.kind == "smart" and spec.lane is not None]
    if not (loaded.settings.protect or lane):
        return loaded
    from guard.hooks.protect import protect_spec

    protection = protect_spec(loaded)
    for index in lane:
        loaded.specs[index] = loaded.specs[index].replace(paths=protection.paths)
    if loaded.settings.protect:
        loaded.specs.append(protection)
    return loaded


def _load(found: Path, use_snapshot: bool) -> LoadedConfig:
    from guard.config import snapshot

    if use_snapshot:
        cached = snapshot.read(found)
        if cached is not None:
            return cached
    from guard.config.location import located
    from guard.config.parse import parse_config
    from guard.core.errors import ConfigError

    try:
        loaded = parse_config(found)
    except ConfigError as exc:
        raise located(exc) from exc
    if use_snapshot:
        snapshot.write(found, loaded)
    return snapshot.expand_env(loaded)
