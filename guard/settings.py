"""Settings: the non-hook part of a loaded config, as plain data.

Standard library only (it rides the ``guard hook`` fast path). Environment
overrides (``GUARD_MODEL_QUICK``, ``GUARD_MODEL_THOROUGH``, ``GUARD_API_BASE``)
are read when a model is needed, not when the config is compiled, so a compiled
snapshot never goes stale when they change.

The decision cache and the audit log default to a folder per project under the
user's cache and state directories (keyed by the config's path), not inside the
project: the guarded agent works in the project tree, and guard's state should
not sit among the files it edits.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Settings", "default_audit_path", "default_cache_url", "user_dir"]

MODEL_ENV = {"quick": "GUARD_MODEL_QUICK", "thorough": "GUARD_MODEL_THOROUGH"}


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


def default_cache_url(config_path: str | None = None) -> str:
    """The decision cache of the project whose config is ``config_path``, in the user's cache directory."""
    return f"sqlite:///{_project_dir('cache', config_path) / 'cache.db'}"


def default_audit_path(config_path: str | None = None) -> str:
    """The audit log of the project whose config is ``config_path``, in the user's state directory."""
    return str(_project_dir("state", config_path) / "audit.db")


@dataclass(frozen=True)
class Settings:
    """Models, cache, webhooks, audit and server settings of one config."""

    models: dict[str, str] = field(default_factory=dict)  # tier -> LiteLLM model id
    api_base: str | None = None
    cache_url: str = field(default_factory=default_cache_url)  # sqlite:///path | redis://host:port/db | off
    cache_ttl: float = 7 * 86400.0  # seconds
    allow_networks: tuple[str, ...] = ()
    audit_path: str | None = field(default_factory=default_audit_path)  # None disables the audit log
    audit_redact: tuple[str, ...] = ()  # payload field names replaced by "[redacted]"
    server_url: str | None = None  # guard hook --server default
    server_token: str | None = None  # bearer token of guard serve (GUARD_SERVE_TOKEN wins)
    base_dir: str = "."  # relative paths in the config resolve against this
    config_path: str | None = None
    protect: bool = True  # the built-in self-protection rule (guard.yaml `protect: false` turns it off)

    def model_for(self, tier: str) -> str | None:
        """The model for ``quick`` or ``thorough``: environment first, then config."""
        return os.environ.get(MODEL_ENV[tier]) or self.models.get(tier)

    def effective_api_base(self) -> str | None:
        return os.environ.get("GUARD_API_BASE") or self.api_base

    def path(self, value: str) -> Path:
        """Resolve a config-relative path."""
        p = Path(os.path.expanduser(value))
        return p if p.is_absolute() else Path(self.base_dir) / p

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("allow_networks", "audit_redact"):
            data[key] = list(data[key])
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        data = dict(data)
        for key in ("allow_networks", "audit_redact"):
            data[key] = tuple(data.get(key, ()))
        return cls(**data)
