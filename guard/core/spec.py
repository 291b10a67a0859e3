"""HookSpec: what one configured hook is, independent of where it was declared.

Standard library only, so the registry and the ``guard hook`` fast path can match
events against hooks without loading pydantic or any hook implementation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

__all__ = ["EXTERNAL_SOURCES", "HOOK_KINDS", "FailureMode", "HookKind", "HookSpec", "Source"]

HookKind = Literal["smart", "command", "http", "callable", "protect"]
FailureMode = Literal["fail_open", "fail_closed"]
#: Where a hook was declared: its own config, a client's settings.json, a skill, a plugin, user config, Python, or guard itself.
Source = Literal["config", "settings", "skill", "plugin", "user", "library", "builtin"]
HOOK_KINDS: tuple[str, ...] = get_args(HookKind)

#: Sources whose hooks get the stricter command analysis and fail closed in standalone mode.
EXTERNAL_SOURCES = frozenset({"skill", "plugin", "user"})


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One hook: its kind, the event and tools it applies to, and its kind's settings."""

    id: str
    kind: HookKind
    event: str  # canonical event name
    matcher: str | None = None  # Claude Code matcher rules on tool_name
    tools: tuple[str, ...] | None = None  # fnmatch globs on tool_name
    timeout: float = 10.0  # seconds, 1..600
    failure_mode: FailureMode = "fail_open"
    source: Source = "config"
    origin: str | None = None  # file (and key path) it was declared in, for messages
    workdir: str | None = None  # folder of the declaring config: where a relative command runs

    # smart
    rule: str | None = None
    prompt: str | None = None  # a user's own prompt template ($ARGUMENTS), from Claude/SKILL prompt hooks
    depth: str = "auto"  # quick | thorough | auto
    model: str | None = None
    confidence_threshold: float = 0.7
    cache_ignore: tuple[str, ...] = ()  # extra payload fields left out of the cache key
    cache_keep: tuple[str, ...] = ()  # volatile fields kept in the cache key after all
    context: str = "event"  # event | request (+ the user's latest requests) | session (+ requests and recent actions)

    # command
    command: str | None = None

    # http
    url: str | None = None
    secret: str | None = None
    fire_and_forget: bool = False
    headers: tuple[tuple[str, str], ...] = ()

    # callable
    target: str | None = None  # "module:function"
    func: Callable[..., Any] | None = field(default=None, compare=False, repr=False)

    # protect (the built-in self-protection rule)
    paths: tuple[tuple[str, str], ...] = ()  # (label, absolute file or folder) no tool call may change

    @property
    def external(self) -> bool:
        """Declared by a skill, plugin or user config: stricter checks apply."""
        return self.source in EXTERNAL_SOURCES

    def replace(self, **changes: Any) -> HookSpec:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for the compiled config snapshot (callables by target name only)."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "func"}
        for key in ("tools", "cache_ignore", "cache_keep"):
            if data[key] is not None:
                data[key] = list(data[key])
        for key in ("headers", "paths"):
            data[key] = [list(pair) for pair in data[key]]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HookSpec:
        data = dict(data)
        for key in ("tools", "cache_ignore", "cache_keep"):
            if data.get(key) is not None:
                data[key] = tuple(data[key])
        for key in ("headers", "paths"):
            data[key] = tuple(tuple(pair) for pair in data.get(key, ()))
        return cls(**data)
