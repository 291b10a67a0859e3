"""guard: plain-English guardrails for AI agents, judged by an LLM, with a hook engine around them.

The public API for agent builders::

    import guard

    @guard.hook("pre_tool_use", matcher="Bash")
    def no_force_push(event):
        if "push --force" in event.tool_input.get("command", ""):
            return guard.deny("force-push rewrites shared history")

    gate = guard.Gate()                     # ./guard.yaml (or $GUARD_CONFIG) plus the hooks above
    payload, decision = gate.decide({"hook_event_name": "PreToolUse", "tool_name": "Bash", ...})
    payload, decision = await gate.adecide(...)    # inside an event loop

A Gate answers like ``guard hook``: the cache fast path, the failure policy and
the audit log included. ``guard.Engine`` runs hooks without any of that.

Heavy parts (pydantic models, the engine, the judge) load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from guard.core.decision import Decision, HookResult
from guard.core.errors import GuardError
from guard.runtime.registry import Registry, default_registry, hook

if TYPE_CHECKING:
    from guard.config.loading import load_config
    from guard.core.events.model import Event
    from guard.core.settings import LoadedConfig
    from guard.integrations.gate import Gate
    from guard.runtime.engine import Engine

__all__ = [
    "Decision",
    "Engine",
    "Event",
    "Gate",
    "GuardError",
    "HookResult",
    "LoadedConfig",
    "Registry",
    "allow",
    "ask",
    "default_registry",
    "deny",
    "hook",
    "load_config",
    "rewrite",
]

__version__ = "0.1.0"

_LAZY = {
    "Engine": "guard.runtime.engine",
    "Event": "guard.core.events.model",
    "Gate": "guard.integrations.gate",
    "load_config": "guard.config.loading",
    "LoadedConfig": "guard.core.settings",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'guard' has no attribute {name!r}")


def allow(reason: str | None = None) -> HookResult:
    """A callable hook's "no objection" (id and type are filled in by the engine)."""
    return HookResult(id="", type="callable", decision="allow", reason=reason)


def deny(reason: str) -> HookResult:
    """A callable hook's block, with the reason the agent will see."""
    return HookResult(id="", type="callable", decision="deny", reason=reason)


def ask(reason: str) -> HookResult:
    """A callable hook's "a person should confirm this"."""
    return HookResult(id="", type="callable", decision="ask", reason=reason)


def rewrite(updated_input: dict[str, Any], reason: str | None = None) -> HookResult:
    """A callable hook's rewrite of the tool input; every blocking hook re-checks it."""
    return HookResult(id="", type="callable", decision="allow", reason=reason, updated_input=updated_input)
