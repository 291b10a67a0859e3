"""Compiled config snapshots: validated config as JSON, reused while its sources are unchanged.

Values are stored as written (``${VAR}`` unexpanded) so secrets never land in
the snapshot and a changed environment takes effect at once; :func:`expand_env`
substitutes them on every load.

The snapshot sits in the user's cache, where the guarded agent can write: it is
sealed (:mod:`guard.storage.secret`) over its text and the config's path, and a snapshot
whose seal fails (emptied, edited, forged, copied from another config) is
ignored and the config parsed again from its source. Standard library only.

Two kinds share the folder: a snapshot of the files on disk, valid while their
sizes and mtimes are unchanged (``guard check``), and a snapshot of a trusted
copy (``guard hook``, ``guard serve``), keyed and validated by the trusted
record's pin alone, whatever the disk holds now.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from guard.core.errors import ConfigError
from guard.core.kinds import kind_of
from guard.core.logs import LazyLogger
from guard.core.settings import LoadedConfig, Settings
from guard.core.spec import HookSpec, KindOptions
from guard.storage.secret import TrustError, seal, verify

__all__ = ["expand_env", "read", "write"]

log = LazyLogger("guard.config")

#: 2: HookSpec.workdir; 3: a seal line before the JSON; 4: pinned snapshots, HookSpec.scripts;
#: 5: an http hook's url, secret, headers and fire_and_forget in HookSpec.options; 6: a smart hook's settings in its
#: options, typed (an older snapshot is parsed again)
FORMAT = 6
_PURPOSE = "snapshot"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _snapshot_path(config: Path, pin: str | None) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "guard" / "config"
    digest = hashlib.sha1(str(config.resolve()).encode()).hexdigest()[:16]
    return base / (f"{digest}.json" if pin is None else f"{digest}-{pin[:16]}.json")


def _fingerprint(paths: list[str]) -> list[list[Any]]:
    out = []
    for p in paths:
        st = os.stat(p)
        out.append([p, st.st_size, st.st_mtime_ns])
    return out


def read(config: Path, *, pin: str | None = None) -> LoadedConfig | None:
    """The snapshot for ``config`` if every source file is unchanged (with ``pin``: of that trusted copy), else None."""
    path = _snapshot_path(config, pin)
    try:
        mac, _, body = path.read_text().partition("\n")
        if not verify(mac, _PURPOSE, str(config.resolve()), body):
            # an older guard's snapshot has no seal line (it starts with "{"): quietly replaced, still never believed
            (log.info if mac.startswith("{") else log.warning)(
                "config snapshot %s fails its seal (tampered or forged); parsing %s again", path, config
            )
            return None
        data = json.loads(body)
        if data.get("format") != FORMAT or data.get("pin") != pin:
            return None
        if pin is None and _fingerprint(data["sources"]) != data["fingerprint"]:
            return None
        loaded = LoadedConfig(
            settings=Settings.from_dict(data["settings"]),
            specs=[HookSpec.from_dict(s) for s in data["specs"]],
            sources=list(data["sources"]),
            pin=pin,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ImportError):
        return None
    return expand_env(loaded)


def write(config: Path, loaded: LoadedConfig, *, pin: str | None = None) -> None:
    """Store ``loaded`` (unexpanded), parsed from the disk or (``pin``) from that trusted copy; failures only cost the next run a re-parse."""
    if any(spec.func is not None for spec in loaded.specs):
        return
    target = _snapshot_path(config, pin)
    try:
        payload = {
            "format": FORMAT,
            "pin": pin,
            "sources": list(loaded.sources),
            "fingerprint": None if pin is not None else _fingerprint(loaded.sources),
            "settings": loaded.settings.to_dict(),
            "specs": [spec.to_dict() for spec in loaded.specs],
        }
        body = json.dumps(payload)
        mac = seal(_PURPOSE, str(config.resolve()), body)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(f"{mac}\n{body}")
        os.replace(tmp, target)
    except (OSError, TrustError):
        pass


def _expand(value: str | None, where: str) -> str | None:
    if value is None or "${" not in value:
        return value

    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        file, _, key = where.partition(": ")
        raise ConfigError(f"environment variable {name} is not set (used as ${{{name}}})", file=file, key=key)

    return _VAR.sub(sub, value)


def expand_env(loaded: LoadedConfig) -> LoadedConfig:
    """Substitute ``${VAR}`` / ``${VAR:-default}`` in models, URLs, secrets and headers (the options a kind names).

    Commands, rules and prompts are left alone: in a shell command ``${X}`` is the
    shell's own syntax, and rule text is the user's words.
    """
    s = loaded.settings
    origin = s.config_path or "guard.yaml"
    settings = s.replace(
        models={tier: _expand(m, f"{origin}: models.{tier}") or "" for tier, m in s.models.items()},
        api_base=_expand(s.api_base, f"{origin}: models.api_base"),
        cache_url=_expand(s.cache_url, f"{origin}: cache.url") or "off",
        server_url=_expand(s.server_url, f"{origin}: server.url"),
        server_token=_expand(s.server_token, f"{origin}: server.token"),
        allow_networks=tuple(_expand(n, f"{origin}: webhooks.allow_networks") or "" for n in s.allow_networks),
        audit_url=_expand(s.audit_url, f"{origin}: audit.url"),
        audit_otlp=_expand(s.audit_otlp, f"{origin}: audit.otlp"),
        approvals_webhook=_expand(s.approvals_webhook, f"{origin}: approvals.webhook"),
        approvals_secret=_expand(s.approvals_secret, f"{origin}: approvals.secret"),
        approvals_link=_expand(s.approvals_link, f"{origin}: approvals.link"),
    )
    specs = []
    for spec in loaded.specs:
        where = spec.origin or spec.id
        specs.append(spec.replace(options=_expanded_options(spec, where)))
    return type(loaded)(settings=settings, specs=specs, sources=loaded.sources, pin=loaded.pin)


def _expanded_options(spec: HookSpec, where: str) -> KindOptions:
    """``spec.options`` with ``${VAR}`` substituted in the options its kind says take it (an http hook's url, secret,
    headers, a smart hook's model).

    The kind is looked up only when an option holds ``${``: a config without variables never loads a plugin's kind here.
    """
    if not spec.options or "${" not in json.dumps(dict(spec.options)):
        return spec.options
    try:
        names = kind_of(spec.kind).expanded
    except (LookupError, ImportError, AttributeError):  # an unknown kind: its hook fails when it runs, and says why
        return spec.options
    expanded: dict[str, Any] = {}
    for name in names:
        value, at = spec.options.get(name), f"{where}.{name}"
        if isinstance(value, str):
            expanded[name] = _expand(value, at)
        elif isinstance(value, list):
            expanded[name] = [_expand(v, f"{at}[{i}]") if isinstance(v, str) else v for i, v in enumerate(value)]
        elif isinstance(value, dict):
            expanded[name] = {k: _expand(v, f"{at}.{k}") if isinstance(v, str) else v for k, v in value.items()}
    return spec.options.replace(**expanded)
