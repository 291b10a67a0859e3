"""Settings: the non-hook part of a loaded config, as plain data.

Standard library only (it rides the ``guard hook`` fast path). Environment
overrides (``GUARD_MODEL_QUICK``, ``GUARD_MODEL_THOROUGH``, ``GUARD_API_BASE``,
``GUARD_TIMEOUT_QUICK``, ``GUARD_TIMEOUT_THOROUGH``) are read when a model is needed, not when the config is compiled, so a compiled
snapshot never goes stale when they change.

The decision cache and the audit log default to a folder per project under the
user's cache and state directories (keyed by the config's path), not inside the
project: the guarded agent works in the project tree, and guard's state should
not sit among the files it edits.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from guard.core.record import FrozenRecord, Record
from guard.core.spec import HookSpec

__all__ = ["LoadedConfig", "Settings", "default_audit_path", "default_cache_url", "user_dir"]

MODEL_ENV = {"quick": "GUARD_MODEL_QUICK", "thorough": "GUARD_MODEL_THOROUGH"}
TIMEOUT_ENV = {"quick": "GUARD_TIMEOUT_QUICK", "thorough": "GUARD_TIMEOUT_THOROUGH"}


def user_dir(kind: str) -> Path:
    """guard's folder in the user's ``cache``, ``state`` or ``config`` directory (XDG, else the usual ~ paths)."""
    variable, fallback = {"cache": ("XDG_CACHE_HOME", ".cache"), "state": ("XDG_STATE_HOME", ".local/state"),
                          "config": ("XDG_CONFIG_HOME", ".config")}[kind]
    return Path(os.environ.get(variable) or Path.home() / fallback) / "guard"


def _project_dir(kind: str, config_path: str | None) -> Path:
    """``<user dir>/projects/<folder>-<hash>``: one per config file (the working directory when there is none)."""
    anchor = Path(config_path).resolve() if config_path else Path.cwd()
    digest = hashlib.sha1(str(anchor).encode()).hexdigest()[:12]
    folder = (anchor.parent if config_path else anchor).name or "root"
    return user_dir(kind) / "projects" / f"{folder}-{digest}"


def default_cache_url() -> str:
    """The user's decision cache, one for every config: an entry's key is what was judged (rule text, models,
    prompt versions, endpoint, the payload and context shown), so a renamed or edited config, or ``guard backtest
    --config new.yaml``, finds the verdicts of the rules it did not change."""
    return f"sqlite:///{user_dir('cache') / 'cache.db'}"


def default_audit_path(config_path: str | None = None) -> str:
    """The audit log of the project whose config is ``config_path``, in the user's state directory."""
    return str(_project_dir("state", config_path) / "audit.db")


class _Computed:
    """The default of a field whose value is worked out when the settings are made (it depends on the working directory)."""


_COMPUTED = _Computed()


class Settings(FrozenRecord):
    """Models, cache, webhooks, audit and server settings of one config (a frozen value; :meth:`replace` copies).

    ``models`` maps a tier to a LiteLLM model id; ``cache_url`` is sqlite:///path,
    redis://host:port/db or off; ``cache_ttl`` seconds; ``audit_path`` None disables
    the audit log; ``audit_redact`` payload field names replaced by "[redacted]";
    ``server_url`` the ``guard hook --server`` default; ``server_token`` guard
    serve's bearer token (GUARD_SERVE_TOKEN wins); ``base_dir`` where relative
    paths resolve; ``protect`` the built-in self-protection rule (guard.yaml
    ``protect: false`` turns it off); ``prices`` what ``guard eval`` costs a
    model's tokens at, as (input, output) USD per million tokens (guard.yaml ``prices:``);
    ``timeouts`` the seconds a tier's calls may take (guard.yaml ``models.timeouts``).

    Teams (docs/team.md): ``audit_url`` a Postgres every audit row is also shipped to and
    ``audit_otlp`` an OTLP/HTTP collector each is exported to as a log record (both from the
    local log, which is their queue: :mod:`guard.audit.shipping`); ``approvals_*`` where a hook's
    ``on_ask: approval`` sends its request and how long it waits (:mod:`guard.approvals`);
    ``org_policy`` the signed org policy merged in and ``org_serial`` its serial (anti-rollback).
    """

    __slots__ = ("models", "api_base", "cache_url", "cache_ttl", "allow_networks", "audit_path", "audit_redact",
                 "server_url", "server_token", "base_dir", "config_path", "protect", "prices",
                 "audit_url", "audit_otlp", "approvals_webhook", "approvals_timeout", "approvals_secret", "approvals_format",
                 "approvals_link", "org_policy", "org_serial", "timeouts")
    models: dict[str, str]
    api_base: str | None
    cache_url: str
    cache_ttl: float
    allow_networks: tuple[str, ...]
    audit_path: str | None
    audit_redact: tuple[str, ...]
    server_url: str | None
    server_token: str | None
    base_dir: str
    config_path: str | None
    protect: bool
    prices: dict[str, tuple[float, float]]
    audit_url: str | None
    audit_otlp: str | None
    approvals_webhook: str | None
    approvals_timeout: float
    approvals_secret: str | None
    approvals_format: str
    approvals_link: str | None
    org_policy: str | None
    org_serial: int | None
    timeouts: dict[str, float]

    def __init__(
        self,
        models: dict[str, str] | None = None,
        api_base: str | None = None,
        cache_url: str | _Computed = _COMPUTED,
        cache_ttl: float = 7 * 86400.0,
        allow_networks: tuple[str, ...] = (),
        audit_path: str | None | _Computed = _COMPUTED,
        audit_redact: tuple[str, ...] = (),
        server_url: str | None = None,
        server_token: str | None = None,
        base_dir: str = ".",
        config_path: str | None = None,
        protect: bool = True,
        prices: dict[str, tuple[float, float]] | None = None,
        audit_url: str | None = None,
        audit_otlp: str | None = None,
        approvals_webhook: str | None = None,
        approvals_timeout: float = 300.0,
        approvals_secret: str | None = None,
        approvals_format: str = "guard",
        approvals_link: str | None = None,
        org_policy: str | None = None,
        org_serial: int | None = None,
        timeouts: dict[str, float] | None = None,
    ) -> None:
        models = {} if models is None else models
        prices = {} if prices is None else prices
        timeouts = {} if timeouts is None else timeouts
        cache_url = default_cache_url() if isinstance(cache_url, _Computed) else cache_url
        audit_path = default_audit_path() if isinstance(audit_path, _Computed) else audit_path
        self._assign(locals())

    def model_for(self, tier: str) -> str | None:
        """The model for ``quick`` or ``thorough``: environment first, then config."""
        return os.environ.get(MODEL_ENV[tier]) or self.models.get(tier)

    def effective_api_base(self) -> str | None:
        return os.environ.get("GUARD_API_BASE") or self.api_base

    def timeout_for(self, tier: str) -> float | None:
        """Seconds ``quick`` or ``thorough`` calls may take (environment first, then config); None: only the hook's timeout bounds them."""
        variable = TIMEOUT_ENV[tier]
        value = os.environ.get(variable)
        if not value:
            return self.timeouts.get(tier)
        try:
            seconds = float(value)
        except ValueError:
            seconds = 0.0
        if not 1 <= seconds <= 600:
            from guard.core.errors import ConfigError

            raise ConfigError(f"{value!r} is not a number of seconds from 1 to 600", key=variable)
        return seconds

    def path(self, value: str) -> Path:
        """Resolve a config-relative path."""
        p = Path(os.path.expanduser(value))
        return p if p.is_absolute() else Path(self.base_dir) / p

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the compiled config snapshot); :meth:`from_dict` reads it back."""
        data = {name: getattr(self, name) for name in self.__slots__}
        data["models"] = dict(self.models)
        data["timeouts"] = dict(self.timeouts)
        data["prices"] = {model: list(price) for model, price in self.prices.items()}
        for key in ("allow_networks", "audit_redact"):
            data[key] = list(data[key])
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        data = dict(data)
        for key in ("allow_networks", "audit_redact"):
            data[key] = tuple(data.get(key, ()))
        data["prices"] = {model: (float(price[0]), float(price[1])) for model, price in (data.get("prices") or {}).items()}
        return cls(**data)


class LoadedConfig(Record):
    """Settings plus the hook specs of one config and the files they came from.

    ``pin`` identifies the trusted copy it was loaded from (``guard trust``), None when read from disk.
    """

    __slots__ = ("settings", "specs", "sources", "pin")

    def __init__(self, settings: Settings | None = None, specs: list[HookSpec] | None = None, sources: list[str] | None = None,
                 pin: str | None = None) -> None:
        self.settings: Settings = Settings() if settings is None else settings
        self.specs: list[HookSpec] = [] if specs is None else specs
        self.sources: list[str] = [] if sources is None else sources
        self.pin: str | None = pin

    def summary(self) -> str:
        """How many hooks the user's files define and where from ("1 hook from guard.yaml"): built-in ones are named apart."""
        own = [spec for spec in self.specs if spec.source != "builtin"]
        where = ", ".join(self.sources) or "no config"
        text = f"{len(own)} hook{'' if len(own) == 1 else 's'} from {where}"
        builtin = [spec.id for spec in self.specs if spec.source == "builtin"]
        return text + (f" (and built in: {', '.join(builtin)})" if builtin else "")
