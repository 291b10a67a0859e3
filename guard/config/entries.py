"""One hook entry → one HookSpec, whichever file declared it.

guard.yaml, a Claude Code ``settings.json`` and SKILL.md frontmatter all end
here, so a hook means the same thing wherever it is written. Validation errors
name the file and the key path (``guard.yaml: hooks.PreToolUse[1].timeout``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from guard.config.typos import error_message
from guard.core.errors import ConfigError
from guard.core.spec import FailureMode, HookKind, HookSpec, Source
from guard.runtime.matching import validate_matcher, validate_tools

__all__ = ["HookEntry", "spec_from_entry"]


class HookEntry(BaseModel):
    """The keys a hook entry may carry; exactly one of rule / command / url / callable / prompt."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str | None = None
    matcher: str | None = None
    tools: str | list[str] | None = None
    rule: str | None = None
    prompt: str | None = None
    command: str | None = None
    script: str | None = None  # SKILL.md spelling of command
    url: str | None = None
    callable: str | None = None
    depth: Literal["quick", "thorough", "auto"] = "auto"
    model: str | None = None
    failure_mode: Literal["fail_open", "fail_closed"] | None = None
    timeout: float = Field(default=10.0, ge=1, le=600)
    confidence_threshold: float = Field(default=0.7, ge=0, le=1)
    secret: str | None = None
    fire_and_forget: bool = False
    headers: dict[str, str] = Field(default_factory=dict)
    cache_ignore: list[str] = Field(default_factory=list)
    cache_keep: list[str] = Field(default_factory=list)
    context: Literal["event", "request", "session"] = "event"
    skip_read_only: bool = False
    mode: Literal["enforce", "shadow"] = "enforce"
    final: bool | None = None

    @field_validator("matcher")
    @classmethod
    def _matcher(cls, value: str | None) -> str | None:
        problem = validate_matcher(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("tools")
    @classmethod
    def _tools(cls, value: str | list[str] | None) -> str | list[str] | None:
        problem = validate_tools(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("callable")
    @classmethod
    def _target(cls, value: str | None) -> str | None:
        if value is not None and (value.count(":") != 1 or not all(value.split(":"))):
            raise ValueError("callable must be 'module:function'")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> HookEntry:
        kinds = [k for k in ("rule", "prompt", "command", "script", "url", "callable") if getattr(self, k)]
        if len(kinds) != 1:
            found = ", ".join(kinds) or "none"
            raise ValueError(f"a hook needs exactly one of rule, command, url, callable (or prompt / script); found {found}")
        if self.skip_read_only and not (self.rule or self.prompt):
            raise ValueError("skip_read_only applies to a rule (or prompt): only a judged hook can skip the model")
        return self

    def kind(self) -> HookKind:
        if self.rule or self.prompt:
            return "smart"
        if self.command or self.script:
            return "command"
        return "http" if self.url else "callable"


def _key_path(loc: tuple[Any, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def spec_from_entry(entry: Any, *, event: str, source: Source, origin: str, index: int, workdir: str | None = None) -> HookSpec:
    """Validate one hook entry declared at ``origin`` (``file: key.path``) and build its spec.

    ``workdir`` is the folder the declaring file belongs to; a command hook runs
    there, so ``sh hooks/check.sh`` means the script beside that file whatever
    the event says its cwd is. Hooks from skills, plugins and user config fail
    closed unless they say otherwise.
    """
    file, _, key = origin.partition(": ")
    if not isinstance(entry, dict):
        raise ConfigError(f"a hook entry must be a mapping, got {type(entry).__name__}", file=file, key=key)
    try:
        parsed = HookEntry.model_validate(entry)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(error_message(first, HookEntry), file=file, key=key + _key_path(first["loc"])) from exc
    kind = parsed.kind()
    tools = parsed.tools
    default_failure: FailureMode = "fail_closed" if source in ("skill", "plugin", "user") else "fail_open"
    return HookSpec(
        id=parsed.id or f"{event}[{index}]",
        kind=kind,
        event=event,
        matcher=parsed.matcher,
        tools=(tools,) if isinstance(tools, str) else (tuple(tools) if tools else None),
        timeout=parsed.timeout,
        failure_mode=parsed.failure_mode or default_failure,
        source=source,
        origin=origin,
        workdir=workdir,
        rule=parsed.rule,
        prompt=parsed.prompt,
        depth=parsed.depth,
        model=parsed.model,
        confidence_threshold=parsed.confidence_threshold,
        cache_ignore=tuple(parsed.cache_ignore),
        cache_keep=tuple(parsed.cache_keep),
        context=parsed.context,
        skip_read_only=parsed.skip_read_only,
        command=parsed.command or parsed.script,
        url=parsed.url,
        secret=parsed.secret,
        fire_and_forget=parsed.fire_and_forget,
        headers=tuple(sorted(parsed.headers.items())),
        target=parsed.callable,
        mode=parsed.mode,
        final=parsed.final,
    )
