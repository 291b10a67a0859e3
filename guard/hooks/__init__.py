"""Hook kinds. ``build`` imports a kind's module only when a hook of that kind runs."""

from __future__ import annotations

import importlib

from guard.hooks.base import Hook, HookContext
from guard.hooks.spec import HOOK_KINDS, HookSpec

__all__ = ["HOOK_KINDS", "Hook", "HookContext", "HookSpec", "build"]

_CLASSES = {"smart": "SmartHook", "command": "CommandHook", "http": "HttpHook", "callable": "CallableHook", "protect": "ProtectHook"}


def build(spec: HookSpec, ctx: HookContext) -> Hook:
    """The runnable hook for ``spec`` (``guard.hooks.<kind>.<Kind>Hook``)."""
    module = importlib.import_module(f"guard.hooks.{spec.kind}")
    cls = getattr(module, _CLASSES[spec.kind])
    hook: Hook = cls(spec, ctx)
    return hook
