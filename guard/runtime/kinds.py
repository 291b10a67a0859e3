"""Which module implements each hook kind: loaded by name when a hook of that kind first runs.

The runtime builds hooks through this table instead of importing ``guard.hooks``,
so a no-match or cache-hit event never loads a hook implementation, and the
layers stay one-way (core ← runtime ← hooks).
"""

from __future__ import annotations

import importlib

from guard.core.hook import Hook, HookContext
from guard.core.spec import HookSpec

__all__ = ["build"]

_CLASSES = {"smart": "SmartHook", "command": "CommandHook", "http": "HttpHook", "callable": "CallableHook", "protect": "ProtectHook"}


def build(spec: HookSpec, ctx: HookContext) -> Hook:
    """The runnable hook for ``spec`` (``guard.hooks.<kind>.<Kind>Hook``)."""
    module = importlib.import_module(f"guard.hooks.{spec.kind}")
    cls = getattr(module, _CLASSES[spec.kind])
    hook: Hook = cls(spec, ctx)
    return hook
