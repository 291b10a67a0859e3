"""Settings: the non-hook part of a loaded config, as plain data, and every ``GUARD_*`` environment variable guard reads.

Standard library only (it rides the ``guard hook`` fast path). Each variable is named once, below, and read through
:func:`from_env` and nowhere else (a test holds every other module to it), so what the environment can change about
guard is this list. Model overrides (``GUARD_MODEL_QUICK``, ``GUARD_MODEL_THOROUGH``, ``GUARD_API_BASE``,
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
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from guard.core.record import FrozenRecord, Record
from guard.core.spec import HookSpec

__all__ = [
    "API_BASE_ENV",
    "CLAUDE_BIN_ENV",
    "CODEX_BIN_ENV",
    "CONFIG_ENV",
    "DEADLINE_ENV",
    "DEBUG_ENV",
    "EVENT_ENV",
    "FAIL_CLOSED_ENV",
    "FAIL_OPEN_ENV",
    "KEY_ENV",
    "LAUNCHER_ENV",
    "MODEL_ENV",
    "PLAIN_ENV",
    "POLICY_ENV",
    "PROGRAM_ENV",
    "SECRET_FILE_ENV",
    "SERVER_ENV",
    "SERVE_TOKEN_ENV",
    "SIGNATURE_SUFFIX",
    "SYSTEM_DIR",
    "TIMEOUT_ENV",
    "TRANSPORT_ENV",
    "VARIABLES",
    "LoadedConfig",
    "OrgLocation",
    "Settings",
    "admin_owned",
    "default_audit_path",
    "default_cache_url",
    "from_env",
    "locate",
    "user_dir",
]

MODEL_ENV = {"quick": "GUARD_MODEL_QUICK", "thorough": "GUARD_MODEL_THOROUGH"}
TIMEOUT_ENV = {"quick": "GUARD_TIMEOUT_QUICK", "thorough": "GUARD_TIMEOUT_THOROUGH"}
API_BASE_ENV = "GUARD_API_BASE"
#: the config file (else guard.yaml / .guard/ found from the working directory up)
CONFIG_ENV = "GUARD_CONFIG"
#: ``guard hook``'s warm service URL (``--server``), its failure flags (``--fail-closed``, ``--fail-open``: "1") and deadline
SERVER_ENV, FAIL_CLOSED_ENV, FAIL_OPEN_ENV, DEADLINE_ENV = (
    "GUARD_SERVER",
    "GUARD_FAIL_CLOSED",
    "GUARD_FAIL_OPEN",
    "GUARD_DEADLINE",
)
#: the event a Copilot hook reports (its payload does not say)
EVENT_ENV = "GUARD_EVENT"
#: guard serve's bearer token; the user's secret file
SERVE_TOKEN_ENV, SECRET_FILE_ENV = "GUARD_SERVE_TOKEN", "GUARD_SECRET_FILE"
#: the judge's HTTP transport (auto, guard's own wire, LiteLLM; ``fake`` in tests)
TRANSPORT_ENV = "GUARD_TRANSPORT"
#: the programs ``guard install`` / ``guard doctor`` run and write: guard itself, Claude Code, Codex
PROGRAM_ENV, CLAUDE_BIN_ENV, CODEX_BIN_ENV = "GUARD_BIN", "GUARD_CLAUDE_BIN", "GUARD_CODEX_BIN"
#: the CLI's output: tracebacks ("1"), no colour or progress ("1")
DEBUG_ENV, PLAIN_ENV = "GUARD_DEBUG", "GUARD_PLAIN"
#: the variable a project's shared launcher runs (``guard install claude`` writes it); guard reads it in this user's
#: settings files (:mod:`guard.adapters.claude_local`), never in its own environment
LAUNCHER_ENV = "GUARD_HOOK"
#: Where an admin installs the org key and policy (tests point this at a folder of their own); the table of where the
#: org policy is, and why the agent cannot move it, is :mod:`guard.config.org_policy`'s.
SYSTEM_DIR = Path("/etc/guard")
KEY_ENV, POLICY_ENV = "GUARD_ORG_KEY", "GUARD_ORG_POLICY"
#: The org policy's signature is the policy's file name with this added.
SIGNATURE_SUFFIX = ".sig"
#: Every variable above but the launcher's: the only names :func:`from_env` reads.
VARIABLES = frozenset(
    {
        *MODEL_ENV.values(),
        *TIMEOUT_ENV.values(),
        API_BASE_ENV,
        CONFIG_ENV,
        SERVER_ENV,
        FAIL_CLOSED_ENV,
        FAIL_OPEN_ENV,
        DEADLINE_ENV,
        EVENT_ENV,
        SERVE_TOKEN_ENV,
        SECRET_FILE_ENV,
        TRANSPORT_ENV,
        PROGRAM_ENV,
        CLAUDE_BIN_ENV,
        CODEX_BIN_ENV,
        DEBUG_ENV,
        PLAIN_ENV,
        KEY_ENV,
        POLICY_ENV,
    }
)


def from_env(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """``$name`` in ``env`` (the process's environment by default), as set: None when unset, "" when set to nothing.

    ``name`` must be one of :data:`VARIABLES`: a KeyError otherwise, so a variable guard reads is always on that list.
    """
    if name not in VARIABLES:
        raise KeyError(f"{name} is not one of guard's environment variables (guard.core.settings.VARIABLES)")
    return (os.environ if env is None else env).get(name)


def user_dir(kind: str) -> Path:
    """guard's folder in the user's ``cache``, ``state`` or ``config`` directory (XDG, else the usual ~ paths)."""
    variable, fallback = {
        "cache": ("XDG_CACHE_HOME", ".cache"),
        "state": ("XDG_STATE_HOME", ".local/state"),
        "config": ("XDG_CONFIG_HOME", ".config"),
    }[kind]
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


class OrgLocation(FrozenRecord):
    """The org key and policy guard enforces, and why the policy is where it is (``note``: a variable that was ignored)."""

    __slots__ = ("key", "policy", "source", "note")
    key: str
    policy: str
    source: str  # "system" (the key in SYSTEM_DIR) or "environment" ($GUARD_ORG_KEY)
    note: str | None

    def __init__(self, key: str, policy: str, source: str, note: str | None = None) -> None:
        self._assign(locals())

    @property
    def signature(self) -> str:
        return self.policy + SIGNATURE_SUFFIX

    def paths(self) -> tuple[str, ...]:
        """The files that decide what the org enforces (self-protection write-protects them; a service watches them)."""
        return (self.key, self.policy, self.signature)


def admin_owned(path: str) -> bool:
    """Whether root owns ``path`` and every folder above it, none writable by others (a sticky folder such as /tmp may be)."""
    current = os.path.abspath(path)
    while True:
        try:
            found = os.stat(current)
        except OSError:
            return False
        sticky_folder = stat.S_ISDIR(found.st_mode) and found.st_mode & stat.S_ISVTX
        if found.st_uid != 0 or (found.st_mode & 0o022 and not sticky_folder):
            return False
        parent = os.path.dirname(current)
        if parent == current:
            return True
        current = parent


def locate(env: Mapping[str, str] | None = None) -> OrgLocation | None:
    """Where the org key and policy are (see the module's table); None when no org key is configured."""
    environ = os.environ if env is None else env
    system_key, system_policy = str(SYSTEM_DIR / "org.pub"), str(SYSTEM_DIR / "policy.yaml")
    moved = environ.get(POLICY_ENV) or None
    if os.path.lexists(system_key):
        if moved is None or os.path.abspath(moved) == system_policy:
            return OrgLocation(system_key, system_policy, "system")
        if admin_owned(moved):
            return OrgLocation(system_key, os.path.abspath(moved), "system")
        return OrgLocation(
            system_key,
            system_policy,
            "system",
            f"${POLICY_ENV}={moved} ignored: with the system key the policy may move only to a file root owns and no one else can write",
        )
    if KEY_ENV not in environ:
        return None
    key = environ[KEY_ENV]  # set to nothing is not unset: see load()
    return OrgLocation(os.path.abspath(key) if key else "", os.path.abspath(moved or system_policy), "environment")


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

    __slots__ = (
        "models",
        "api_base",
        "cache_url",
        "cache_ttl",
        "allow_networks",
        "audit_path",
        "audit_redact",
        "server_url",
        "server_token",
        "base_dir",
        "config_path",
        "protect",
        "prices",
        "audit_url",
        "audit_otlp",
        "approvals_webhook",
        "approvals_timeout",
        "approvals_secret",
        "approvals_format",
        "approvals_link",
        "org_policy",
        "org_serial",
        "timeouts",
    )
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
        return from_env(MODEL_ENV[tier]) or self.models.get(tier)

    def effective_api_base(self) -> str | None:
        return from_env(API_BASE_ENV) or self.api_base

    def timeout_for(self, tier: str) -> float | None:
        """Seconds ``quick`` or ``thorough`` calls may take (environment first, then config); None: only the hook's timeout bounds them."""
        variable = TIMEOUT_ENV[tier]
        value = from_env(variable)
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
        data["prices"] = {
            model: (float(price[0]), float(price[1])) for model, price in (data.get("prices") or {}).items()
        }
        return cls(**data)


class LoadedConfig(Record):
    """Settings plus the hook specs of one config and the files they came from.

    ``pin`` identifies the trusted copy it was loaded from (``guard trust``), None when read from disk.
    """

    __slots__ = ("settings", "specs", "sources", "pin")

    def __init__(
        self,
        settings: Settings | None = None,
        specs: list[HookSpec] | None = None,
        sources: list[str] | None = None,
        pin: str | None = None,
    ) -> None:
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
