"""Python function hooks: in process, no subprocess, no network.

The function receives the :class:`~guard.core.events.Event` and may return a
:class:`~guard.core.decision.HookResult`, ``"allow" | "deny" | "ask"``, a dict in
Claude Code or canonical shape, or None to abstain. Sync functions run in a
worker thread so they never block the event loop (and other hooks).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from collections.abc import Callable
from typing import Any

from guard.core.decision import HookResult, is_decision
from guard.core.errors import ConfigError, HookError, HookRefused
from guard.core.events.model import Event
from guard.core.hook import Hook, HookContext
from guard.core.spec import HookSpec
from guard.hooks.reply import parse_reply

__all__ = ["CallableHook", "resolve_target"]


def resolve_target(target: str) -> Callable[..., Any]:
    """Import ``module:function`` (dotted attributes allowed after the colon)."""
    module_name, _, attr = target.partition(":")
    try:
        obj: object = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot import callable hook {target!r}: {exc}") from exc
    if not callable(obj):
        raise ConfigError(f"callable hook {target!r} is not callable")
    return obj


class CallableHook(Hook):
    """Runs a registered (decorator) or configured (``module:function``) Python function."""

    def __init__(self, spec: HookSpec, ctx: HookContext) -> None:
        self.spec = spec
        self.ctx = ctx
        self._func = spec.func

    async def run(self, event: Event) -> HookResult:
        if self._func is None:
            target = self.spec.options.get("callable")
            if not isinstance(target, str):
                raise HookError(f"callable hook {self.spec.id} names no function (callable: module:function)")
            self._check_module(target)
            self._func = resolve_target(target)
        func = self._func
        if inspect.iscoroutinefunction(func):
            value = await func(event)
        else:
            value = await asyncio.to_thread(func, event)
        return self._result(value, event)

    def _check_module(self, target: str) -> None:
        """Refuse to import a module of a trusted config that is not the one the user trusted (:mod:`guard.config.hook_scripts`)."""
        spec = self.spec
        if spec.scripts is None:  # not pinned: read from disk by the user's own tools
            return
        from guard.config.hook_scripts import changed_script, module_files

        changed = changed_script(spec.scripts, module_files(target, spec.workdir or self.ctx.settings.base_dir))
        if changed:
            raise HookRefused(
                f"callable hook {spec.id} was not run: {changed}. Review it and run `guard trust` in a terminal to accept it"
            )

    def _result(self, value: Any, event: Event) -> HookResult:
        spec = self.spec
        if value is None:
            return HookResult(id=spec.id, type="callable")
        if isinstance(value, HookResult):
            value.id, value.type = spec.id, "callable"
            return value
        if is_decision(value):
            return HookResult(id=spec.id, type="callable", decision=value)
        if isinstance(value, dict):
            return parse_reply(value, hook_id=spec.id, kind="callable", event=event.event)
        raise HookError(
            f"callable hook {spec.id} returned {type(value).__name__}; expected a HookResult, a verdict string, a dict or None"
        )
