"""The options models of guard's own hook kinds, registered in :mod:`guard.core.kinds` as a plugin registers its own.

A config entry is the keys every hook has (:class:`CommonFields`) plus its kind's
options. ``kind: NAME`` names the kind and the entry's other keys are read with
that kind's model alone; without ``kind:`` the kind follows from the keys (``rule``
→ smart, ``command`` → command, ``url`` → http, ``callable`` → callable), the form
every config before plugins was written in (:class:`guard.config.entries.HookEntry`).
Each ``*Fields`` class holds a kind's keys; its ``*Options`` model adds the checks
that apply when the kind is named. Each kind's options reach its hooks in
``spec.options``, as a plugin kind's do (:class:`OptionFields`): command's, http's and
callable's as the mapping, smart's as the typed :class:`~guard.core.spec.SmartSettings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from guard.core.matching import validate_matcher, validate_tools
from guard.core.spec import Depth, FailureMode, SmartSettings

__all__ = [
    "CallableOptions",
    "CommandOptions",
    "CommonFields",
    "HttpOptions",
    "OptionFields",
    "SmartOptions",
]


class CommonFields(BaseModel):
    """What every hook has, whatever its kind: which calls it sees, how long it may take, what its failure means."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    matcher: str | None = None
    tools: str | list[str] | None = None
    failure_mode: FailureMode | None = None
    timeout: float = Field(default=10.0, ge=1, le=600)
    mode: Literal["enforce", "shadow"] = "enforce"
    final: bool | None = None
    on_ask: Literal["client", "approval"] = "client"

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


class OptionFields(BaseModel):
    """The keys of one of guard's kinds, which reach its hook as ``spec.options``, as a plugin kind's do."""

    def own_options(self) -> Mapping[str, Any]:
        """The options a spec of this kind carries (JSON values, or the kind's typed value of them)."""
        raise NotImplementedError


class SmartFields(OptionFields):
    rule: str | None = None
    prompt: str | None = None
    depth: Depth = "auto"
    model: str | None = None
    confidence_threshold: float = Field(default=0.7, ge=0, le=1)
    cache_ignore: list[str] = Field(default_factory=list)
    cache_keep: list[str] = Field(default_factory=list)
    context: Literal["event", "request", "session"] = "event"
    skip_read_only: bool = False
    skip_project_writes: bool = False
    judge_together: bool = True

    def own_options(self) -> Mapping[str, Any]:
        return SmartSettings(**{name: getattr(self, name) for name in SmartFields.model_fields})


class CommandFields(OptionFields):
    command: str | None = None
    script: str | None = None  # SKILL.md spelling of command

    def own_options(self) -> Mapping[str, Any]:
        return {"command": self.command or self.script}


class HttpFields(OptionFields):
    url: str | None = None
    secret: str | None = None
    fire_and_forget: bool = False
    headers: dict[str, str] = Field(default_factory=dict)

    def own_options(self) -> Mapping[str, Any]:
        return {name: getattr(self, name) for name in HttpFields.model_fields}


class CallableFields(OptionFields):
    callable: str | None = None

    def own_options(self) -> Mapping[str, Any]:
        return {"callable": self.callable}

    @field_validator("callable")
    @classmethod
    def _target(cls, value: str | None) -> str | None:
        if value is not None and (value.count(":") != 1 or not all(value.split(":"))):
            raise ValueError("callable must be 'module:function'")
        return value


def _needs(options: BaseModel, kind: str, *keys: str) -> None:
    if sum(bool(getattr(options, key)) for key in keys) != 1:
        raise ValueError(f"a {kind} hook needs exactly one of {' / '.join(keys)}")


class SmartOptions(SmartFields):
    """``kind: smart``: a plain-English rule (or a prompt template) judged by a model."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _one(self) -> SmartOptions:
        _needs(self, "smart", "rule", "prompt")
        return self


class CommandOptions(CommandFields):
    """``kind: command``: a shell command given the event on stdin."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _one(self) -> CommandOptions:
        _needs(self, "command", "command", "script")
        return self


class HttpOptions(HttpFields):
    """``kind: http``: a URL the event is POSTed to."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _one(self) -> HttpOptions:
        _needs(self, "http", "url")
        return self


class CallableOptions(CallableFields):
    """``kind: callable``: a Python function, ``module:function``."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _one(self) -> CallableOptions:
        _needs(self, "callable", "callable")
        return self
