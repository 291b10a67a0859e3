"""Parse and validate a guard.yaml or a Claude Code settings.json into a LoadedConfig.

Every error names the file, the key path and the reason; nothing here prints a
traceback. Claude Code ``settings.json`` hooks (``type: command|http|prompt``)
become guard hooks; a ``prompt`` handler becomes a smart hook.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from guard.config.entries import _key_path, spec_from_entry
from guard.config.own_hook import parse_guard_hook
from guard.config.policies import policy_specs
from guard.config.typos import error_message
from guard.core.duration import parse_duration
from guard.core.errors import ConfigError
from guard.core.events.names import CANONICAL_EVENTS, canonical_event, suggest_event
from guard.core.matching import matcher_report
from guard.core.settings import LoadedConfig, Settings, default_audit_path, default_cache_url
from guard.core.spec import HookSpec
from guard.webhooks.ssrf import parse_networks

__all__ = ["Reader", "parse_config"]

log = logging.getLogger("guard.config")

#: Reads one config file's text; FileNotFoundError when there is no such file. The trusted loader reads sealed copies instead of the disk.
Reader = Callable[[Path], str]


def _disk(path: Path) -> str:
    return path.read_text(encoding="utf-8")


class _Timeouts(BaseModel):
    """Seconds each tier's calls may take (a local CPU model needs more than a hosted one)."""

    model_config = ConfigDict(extra="forbid")
    quick: float | None = Field(default=None, ge=1, le=600)
    thorough: float | None = Field(default=None, ge=1, le=600)


class _Models(BaseModel):
    model_config = ConfigDict(extra="forbid")
    quick: str | None = None
    thorough: str | None = None
    api_base: str | None = None
    timeouts: _Timeouts = Field(default_factory=_Timeouts)


class _Cache(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str | None = None  # None: the project's folder in the user's cache directory
    ttl: str | int | float = "7d"


class _Webhooks(BaseModel):
    model_config = ConfigDict(extra="forbid")
    allow_networks: list[str] = Field(default_factory=list)


class _Audit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str | None = None  # None: the project's folder in the user's state directory
    enabled: bool = True
    redact: list[str] = Field(default_factory=list)
    url: str | None = None  # postgresql://…: every row is also shipped there (docs/audit-store.md)
    otlp: str | None = None  # http(s)://collector:4318: every row is also exported as an OpenTelemetry log record

    @field_validator("url", "otlp")
    @classmethod
    def _scheme(cls, value: str | None, info: ValidationInfo) -> str | None:
        schemes, what = _AUDIT_SCHEMES[str(info.field_name)]
        if value is not None and not value.startswith((*schemes, "${")):
            raise ValueError(f"audit.{info.field_name} must be {what}")
        return value


#: What each audit target's URL starts with, and how to say so when it does not.
_AUDIT_SCHEMES = {
    "url": (("postgresql://", "postgres://"), "a postgresql:// URL (the audit store); audit.path names the local log"),
    "otlp": (("http://", "https://"), "the http(s):// address of an OTLP/HTTP collector (e.g. http://collector:4318)"),
}


class _Approvals(BaseModel):
    """Where a hook's ``on_ask: approval`` request goes and how long the call waits (docs/approvals.md)."""

    model_config = ConfigDict(extra="forbid")
    webhook: str | None = None
    timeout: float = Field(default=300.0, gt=0, le=3600)
    secret: str | None = None  # signs the request (X-Webhook-Signature), as an http hook's secret does
    format: Literal["guard", "slack"] = "guard"
    link: str | None = None  # the guard view (or guard serve /ui) address approvers open; default http://127.0.0.1:8377


class _Server(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str | None = None
    token: str | None = (
        None  # bearer token for guard serve and guard hook's requests to it; ${VAR} keeps it out of the file
    )


class _Price(BaseModel):
    """What a model's tokens cost, in USD per million tokens (for ``guard eval`` through gateways and local servers)."""

    model_config = ConfigDict(extra="forbid")
    input: float = Field(ge=0)
    output: float = Field(ge=0)


class _Top(BaseModel):
    model_config = ConfigDict(extra="forbid")
    models: _Models = Field(default_factory=_Models)
    cache: _Cache = Field(default_factory=_Cache)
    webhooks: _Webhooks = Field(default_factory=_Webhooks)
    audit: _Audit = Field(default_factory=_Audit)
    server: _Server = Field(default_factory=_Server)
    include: list[str] = Field(default_factory=list)
    protect: bool = True
    prices: dict[str, _Price] = Field(default_factory=dict)
    hooks: dict[str, Any] = Field(default_factory=dict)
    custom_events: list[str] = Field(default_factory=list)
    approvals: _Approvals = Field(default_factory=_Approvals)
    serial: int | None = Field(default=None, ge=0)  # the org policy's: a policy older than one seen is refused


def _custom_events(names: list[str], file: str) -> frozenset[str]:
    """The declared custom events: each a well-formed key that is not a known event's name."""
    for i, name in enumerate(names):
        key = f"custom_events[{i}]"
        try:
            canonical = canonical_event(name)
        except ValueError as exc:
            raise ConfigError(str(exc), file=file, key=key) from exc
        if canonical != name or name in CANONICAL_EVENTS:
            raise ConfigError(f"{name!r} is a known event ({canonical}), not a custom one", file=file, key=key)
    return frozenset(names)


class _MissingFile(ConfigError):
    """No such file (an include names it, so the message names the include)."""


def _read(path: Path, reader: Reader) -> Any:
    try:
        text = reader(path)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
        raise _MissingFile(f"cannot read config: {exc.strerror}", file=str(path)) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read config: {exc.strerror}", file=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})", file=str(path)) from exc
    if path.suffix == ".json":
        try:
            return json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=str(path)
            ) from exc
    import yaml

    try:
        return yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise ConfigError(f"invalid YAML{where}: {getattr(exc, 'problem', exc)}", file=str(path)) from exc


def _event(name: str, file: str, key: str, custom: frozenset[str] | None) -> str:
    """The canonical event; a near miss of a known one is an error, and so is an undeclared custom one.

    ``custom`` is guard.yaml's ``custom_events`` list; None for a client's settings.json,
    whose new events guard may not know yet (only a near miss is refused there).
    """
    try:
        event = canonical_event(name)
    except ValueError as exc:
        raise ConfigError(str(exc), file=file, key=key) from exc
    if event != name or name in CANONICAL_EVENTS or (custom is not None and name in custom):
        return event
    meant = suggest_event(name)
    if meant is not None:
        raise ConfigError(
            f"unknown event {name!r}: did you mean {meant}? (a hook under a misspelt event never runs)",
            file=file,
            key=key,
        )
    if custom is not None:
        raise ConfigError(
            f"unknown event {name!r}: a custom event must be listed under custom_events: first", file=file, key=key
        )
    return event


def _event_lists(
    block: Any, file: str, what: str, custom: frozenset[str] | None = None
) -> Iterator[tuple[str, str, list[Any]]]:
    """(canonical event, key path, items) for each event of a ``hooks:`` block, validated."""
    if not isinstance(block, dict):
        raise ConfigError(f"must map event names to lists of {what}", file=file, key="hooks")
    for name, items in block.items():
        key = f"hooks.{name}"
        event = _event(str(name), file, key, custom)
        if not isinstance(items, list):
            raise ConfigError(f"must be a list of {what}", file=file, key=key)
        yield event, key, items


def _guard_hooks(block: Any, file: str, workdir: str, custom: frozenset[str]) -> list[HookSpec]:
    """guard.yaml ``hooks:`` — event → list of entries."""
    return [
        spec_from_entry(entry, event=event, source="config", origin=f"{file}: {key}[{i}]", index=i, workdir=workdir)
        for event, key, entries in _event_lists(block, file, "hooks", custom)
        for i, entry in enumerate(entries)
    ]


def _claude_hooks(block: Any, file: str, workdir: str) -> list[HookSpec]:
    """Claude Code ``hooks:`` — event → [{matcher, hooks: [{type, command|url|prompt, timeout}]}]."""
    specs: list[HookSpec] = []
    for event, key, groups in _event_lists(block, file, "matcher groups"):
        for g, group in enumerate(groups):
            gkey = f"{key}[{g}]"
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                raise ConfigError("a matcher group needs a 'hooks' list", file=file, key=gkey)
            for h, handler in enumerate(group["hooks"]):
                hkey = f"{gkey}.hooks[{h}]"
                entry = _claude_handler(handler, file, hkey)
                if entry is None:
                    continue
                if group.get("matcher") is not None:
                    entry["matcher"] = group["matcher"]
                entry["id"] = f"claude.{event}[{len(specs)}]"
                specs.append(
                    spec_from_entry(
                        entry,
                        event=event,
                        source="settings",
                        origin=f"{file}: {hkey}",
                        index=len(specs),
                        workdir=workdir,
                    )
                )
    return specs


def _claude_handler(handler: Any, file: str, key: str) -> dict[str, Any] | None:
    if not isinstance(handler, dict):
        raise ConfigError("a hook handler must be a mapping", file=file, key=key)
    kind = handler.get("type")
    entry: dict[str, Any] = {}
    timeout = handler.get("timeout")
    if timeout is not None:
        # Claude allows up to 600 s and so does guard; anything else is left for validation to name
        entry["timeout"] = min(timeout, 600) if isinstance(timeout, (int, float)) else timeout
    if kind == "command":
        if parse_guard_hook(handler.get("command")) is not None:
            return None  # guard's own entry: it is what is running now; loading it as a hook would recurse
        entry["command"] = handler.get("command")
    elif kind == "http":
        entry["url"] = handler.get("url")
        entry["headers"] = handler.get("headers") or {}
    elif kind == "prompt":
        entry["prompt"] = handler.get("prompt")
        if handler.get("model"):
            entry["model"] = handler["model"]
        entry["depth"] = "quick"
    else:
        log.warning("%s: %s: handler type %r is not supported by guard; skipped", file, key, kind)
        return None
    return entry


def parse_config(path: Path, reader: Reader = _disk, *, org: bool = False) -> LoadedConfig:
    """Read ``path`` (guard.yaml, or a settings.json by its suffix) and everything it includes, each through ``reader``.

    ``org``: ``path`` is the signed org policy (:mod:`guard.config.org_policy`): it alone may carry a
    ``serial``, and it may not ``include`` files (its signature covers its own bytes only).
    """
    file = str(path)
    data = _read(path, reader)
    if not isinstance(data, dict):
        raise ConfigError("the top level must be a mapping", file=file)
    if path.suffix == ".json":
        project = str(path.resolve().parent.parent)  # .claude/settings.json belongs to the folder holding .claude/
        specs = _claude_hooks(data.get("hooks", {}), file, project)
        settings = Settings(
            base_dir=project, config_path=file, cache_url=default_cache_url(), audit_path=default_audit_path(file)
        )
        return LoadedConfig(settings=settings, specs=specs, sources=[file])
    hooks = data.pop("hooks", None) or {}
    policies = data.pop("policies", None) or []
    try:
        top = _Top.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(error_message(first, _Top), file=file, key=_key_path(first["loc"]).lstrip(".")) from exc
    if top.serial is not None and not org:
        raise ConfigError("only the org policy has a serial (docs/org-policy.md)", file=file, key="serial")
    if top.include and org:
        raise ConfigError(
            "the org policy cannot include files: its signature covers its own bytes only", file=file, key="include"
        )
    try:
        ttl = parse_duration(top.cache.ttl)
    except ValueError as exc:
        raise ConfigError(str(exc), file=file, key="cache.ttl") from exc
    try:
        parse_networks(top.webhooks.allow_networks)
    except ValueError as exc:
        raise ConfigError(
            str(exc).removeprefix("webhooks.allow_networks: "), file=file, key="webhooks.allow_networks"
        ) from exc
    base = path.resolve().parent
    if base.name == ".guard":
        base = base.parent
    settings = Settings(
        models={k: v for k, v in (("quick", top.models.quick), ("thorough", top.models.thorough)) if v},
        api_base=top.models.api_base,
        cache_url=top.cache.url if top.cache.url is not None else default_cache_url(),
        cache_ttl=ttl,
        allow_networks=tuple(top.webhooks.allow_networks),
        audit_path=(top.audit.path or default_audit_path(file)) if top.audit.enabled else None,
        audit_redact=tuple(top.audit.redact),
        server_url=top.server.url,
        server_token=top.server.token,
        base_dir=str(base),
        config_path=file,
        protect=top.protect,
        prices={model: (price.input, price.output) for model, price in top.prices.items()},
        timeouts={tier: seconds for tier, seconds in top.models.timeouts.model_dump().items() if seconds is not None},
        audit_url=top.audit.url,
        audit_otlp=top.audit.otlp,
        approvals_webhook=top.approvals.webhook,
        approvals_timeout=top.approvals.timeout,
        approvals_secret=top.approvals.secret,
        approvals_format=top.approvals.format,
        approvals_link=top.approvals.link,
        org_policy=file if org else None,
        org_serial=top.serial,
    )
    specs = _guard_hooks(hooks, file, str(base), _custom_events(top.custom_events, file)) + policy_specs(policies, file)
    for problem in matcher_report(specs):
        log.warning("%s", problem)
    sources = [file]
    for i, inc in enumerate(top.include):
        inc_path = (base / inc) if not Path(inc).is_absolute() else Path(inc)
        try:
            included = parse_config(inc_path, reader)
        except _MissingFile as exc:
            if exc.file != str(inc_path):
                raise
            raise ConfigError(f"included file not found: {inc_path}", file=file, key=f"include[{i}]") from exc
        specs.extend(included.specs)
        sources.extend(included.sources)
    _check_unique_ids(specs)
    return LoadedConfig(settings=settings, specs=specs, sources=sources)


def _check_unique_ids(specs: list[HookSpec]) -> None:
    seen: dict[str, str] = {}
    for spec in specs:
        if spec.id in seen:
            file, _, key = (spec.origin or "").partition(": ")
            raise ConfigError(f"hook id {spec.id!r} is already used at {seen[spec.id]}", file=file, key=key + ".id")
        seen[spec.id] = spec.origin or spec.id
