"""Settings: the non-hook part of a loaded config, as plain data.

Standard library only (it rides the ``guard hook`` fast path). Environment
overrides (``GUARD_MODEL_QUICK``, ``GUARD_MODEL_THOROUGH``, ``GUARD_API_BASE``)
are read when a model is needed, not when the config is compiled, so a compiled
snapshot never goes stale when they change.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_CACHE_URL", "Settings"]

DEFAULT_CACHE_URL = "sqlite:///.guard/cache.db"
MODEL_ENV = {"quick": "GUARD_MODEL_QUICK", "thorough": "GUARD_MODEL_THOROUGH"}


@dataclass(frozen=True)
class Settings:
    """Models, cache, webhooks, audit and server settings of one config."""

    models: dict[str, str] = field(default_factory=dict)  # tier -> LiteLLM model id
    api_base: str | None = None
    cache_url: str = DEFAULT_CACHE_URL  # sqlite:///path | redis://host:port/db | off
    cache_ttl: float = 7 * 86400.0  # seconds
    allow_networks: tuple[str, ...] = ()
    audit_path: str | None = ".guard/audit.db"  # None disables the audit log
    audit_redact: tuple[str, ...] = ()  # payload field names replaced by "[redacted]"
    server_url: str | None = None  # guard hook --server default
    server_token: str | None = None  # bearer token of guard serve (GUARD_SERVE_TOKEN wins)
    base_dir: str = "."  # relative paths in the config resolve against this
    config_path: str | None = None

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
