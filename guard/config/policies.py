"""Policies: plain-English rules in four lists with Claude Code auto-mode semantics, compiled to one smart hook each.

A guard.yaml ``policies:`` entry::

    policies:
      - id: auto-mode
        event: PreToolUse          # the default
        matcher: "*"               # or tools: [...]; default every tool
        hard_deny: ["..."]         # no user request clears these
        soft_deny: ["..."]         # the user's explicit direction can clear these
        allow: ["..."]             # exceptions to soft_deny
        environment: ["..."]       # what the organisation trusts
        # and any smart-hook key: depth, model, failure_mode, timeout, confidence_threshold

becomes a smart hook whose rule is the ``policy`` prompt template filled with the
numbered lists, and which reads session context (the judge needs the user's words
to clear a soft deny, and the session's earlier actions for trajectory entries).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from guard.config.entries import _key_path, spec_from_entry
from guard.core.errors import ConfigError
from guard.core.events.names import canonical_event
from guard.core.spec import HookSpec

__all__ = ["LISTS", "POLICY_TEMPLATE", "PolicyLists", "policy_rule", "policy_specs"]

LISTS = ("hard_deny", "soft_deny", "allow", "environment")
POLICY_TEMPLATE = "policy"
#: Keys of a policy entry handed on to the smart hook it becomes.
_HOOK_KEYS = (
    "matcher",
    "tools",
    "depth",
    "model",
    "failure_mode",
    "timeout",
    "confidence_threshold",
    "cache_ignore",
    "cache_keep",
    "mode",
)


class PolicyLists(BaseModel):
    """The four lists; at least one deny entry, or the policy could never deny anything."""

    model_config = ConfigDict(extra="forbid")

    hard_deny: list[str] = Field(default_factory=list)
    soft_deny: list[str] = Field(default_factory=list)
    allow: list[str] = Field(default_factory=list)
    environment: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _can_deny(self) -> PolicyLists:
        for name in LISTS:
            for i, text in enumerate(getattr(self, name)):
                if not text.strip():
                    raise ValueError(f"{name}[{i}] is empty")
        if not (self.hard_deny or self.soft_deny):
            raise ValueError("a policy needs at least one hard_deny or soft_deny entry")
        return self


def _numbered(entries: list[str], name: str) -> str:
    return "\n".join(f"{name}[{i}]: {' '.join(text.split())}" for i, text in enumerate(entries, start=1)) or "(none)"


def policy_rule(lists: PolicyLists) -> str:
    """The rule text the judge is given: the policy template with the numbered lists."""
    from guard.judge.prompts import fill_note

    return fill_note(POLICY_TEMPLATE, {name: _numbered(getattr(lists, name), name) for name in LISTS})


def policy_specs(block: Any, file: str) -> list[HookSpec]:
    """guard.yaml ``policies:`` — a list of policy entries; errors name the file and key path."""
    if not isinstance(block, list):
        raise ConfigError("must be a list of policies", file=file, key="policies")
    specs = []
    for i, entry in enumerate(block):
        key = f"policies[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError("a policy must be a mapping", file=file, key=key)
        unknown = sorted(set(entry) - {"id", "event", *LISTS, *_HOOK_KEYS})
        if unknown:
            raise ConfigError(
                f"unknown key {unknown[0]!r} (a policy takes id, event, {', '.join(LISTS)} and smart-hook keys)",
                file=file,
                key=key,
            )
        try:
            lists = PolicyLists.model_validate({name: entry[name] for name in LISTS if name in entry})
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ConfigError(
                first["msg"].removeprefix("Value error, "), file=file, key=key + _key_path(first["loc"])
            ) from exc
        try:
            event = canonical_event(str(entry.get("event", "PreToolUse")))
        except ValueError as exc:
            raise ConfigError(str(exc), file=file, key=f"{key}.event") from exc
        hook = {name: entry[name] for name in _HOOK_KEYS if name in entry}
        hook.update(id=entry.get("id") or f"policy[{i}]", rule=policy_rule(lists), context="session")
        specs.append(spec_from_entry(hook, event=event, source="config", origin=f"{file}: {key}", index=i))
    return specs
