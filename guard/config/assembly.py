"""The last step of loading a config: a parsed config made what is enforced.

Under the org policy (either may be absent), each smart hook's timeout fitted to
the tiers' it may spend, and the built-in self-protection hook after the config's
own. Every loader ends here (the disk's, the trusted copy's, the org policy alone),
and this step reads nothing back from them: what it needs of the config's
surroundings (the files its hooks run) it looks up itself and hands to the
protection rule, which finds the org policy's files where core locates them.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

from guard.core.kinds import registered
from guard.core.settings import LoadedConfig
from guard.core.spec import HookSpec, ProtectSettings, SmartSettings
from guard.protection.targets import protect_spec

__all__ = ["fit_tier_timeouts", "loaded_scripts", "protection_for", "with_org", "with_protection"]


def with_org(org: LoadedConfig | None, loaded: LoadedConfig | None) -> LoadedConfig:
    """``loaded`` under the org policy ``org`` (either may be None), its smart hooks' timeouts fitted to the tiers', with the self-protection hook."""
    if org is not None:
        from guard.config.org_policy import merged  # only under an org policy, which its own module loaded

        loaded = merged(org, loaded)
    return with_protection(fit_tier_timeouts(loaded or LoadedConfig()))


def fit_tier_timeouts(loaded: LoadedConfig) -> LoadedConfig:
    """``loaded`` with each judged rule's timeout raised to fit the tier timeouts it may spend (``models.timeouts``, ``GUARD_TIMEOUT_*``).

    A local CPU model needs a minute where a hosted one needs seconds: setting the
    tiers' timeouts is enough, the hook's own budget (and so the engine's, the
    service's and ``guard install``'s advice on the client timeout) follows. Applied on
    every load, after the snapshot, so the variables are read when the config is used;
    no kind is looked up: a plugin's never reads the entry points here.
    """
    settings = loaded.settings
    for index, spec in enumerate(loaded.specs):
        if not isinstance(spec.options, SmartSettings):
            continue
        depth = spec.options.depth
        tiers = ("quick", "thorough") if depth == "auto" else (depth,)
        needed = min(600.0, sum(settings.timeout_for(tier) or 0.0 for tier in tiers))
        if needed > spec.timeout:
            loaded.specs[index] = spec.replace(timeout=needed)
    return loaded


def loaded_scripts(loaded: LoadedConfig) -> Iterator[str]:
    """The files ``loaded``'s hooks run, as ``guard trust`` pinned them (else found now), and a callable module's
    byte-code cache, which Python would run in its source's place; and the folder of a command hook's script
    (:func:`_script_folders`)."""
    for spec in loaded.specs:
        if spec.scripts is not None:  # pinned by guard trust: no command parsing on the hook path
            paths = [path for path, _ in spec.scripts]
        else:
            # a hook not of a trusted copy (the disk's config, the org's): its kind finds its files now
            from guard.config.hook_scripts import hook_scripts

            paths = hook_scripts(spec, spec.workdir or loaded.settings.base_dir)
        yield from paths
        yield from (importlib.util.cache_from_source(path) for path in paths if path.endswith(".py"))
        if paths and (kind := registered(spec.kind)) is not None and kind.script_folders:
            yield from _script_folders(paths, loaded.settings.base_dir)


def _script_folders(scripts: list[str], base_dir: str) -> Iterator[str]:
    """The folders of a command hook's scripts, whose other files the script runs without naming them in the hook:
    Python puts the script's folder first on its import path (a ``json.py`` written beside ``check.py`` runs in its
    place), Node resolves ``require('./lib')`` there, a shell script sources its neighbours. The pin covers the script
    alone. Not a folder holding the config's folder or the home (it would protect the whole project): a script
    there keeps only its own file protected, as the docs say (keep hook scripts in a folder of their own)."""
    from guard.config.hook_scripts import in_a_folder_of_its_own

    yield from (os.path.dirname(os.path.abspath(s)) for s in scripts if in_a_folder_of_its_own(s, base_dir))


def protection_for(loaded: LoadedConfig) -> HookSpec:
    """The self-protection hook for ``loaded``: its files, guard's state, the org policy's files, the hooks' scripts."""
    return protect_spec(loaded, scripts=tuple(loaded_scripts(loaded)))  # found here: targets never calls back


def with_protection(loaded: LoadedConfig) -> LoadedConfig:
    """``loaded`` with the built-in self-protection hook after its own hooks, unless it says ``protect: false``.

    Rules in a lane (``skip_read_only``, ``skip_project_writes``) get the protected paths too, even with
    ``protect: false``: a read that names one of them is never decided without the judge.
    """
    lane = {i: o for i, o in enumerate(s.options for s in loaded.specs) if isinstance(o, SmartSettings) and o.lane}
    if not (loaded.settings.protect or lane):
        return loaded
    protection = protection_for(loaded)
    paths = ProtectSettings.of(protection).paths
    for index, settings in lane.items():
        loaded.specs[index] = loaded.specs[index].replace(options=settings.replace(paths=paths))
    if loaded.settings.protect:
        loaded.specs.append(protection)
    return loaded
