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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from guard.core.decision import HookResult, is_decision
from guard.core.errors import ConfigError, HookError, HookRefused
from guard.core.events.model import Event
from guard.core.hook import Hook, HookContext
from guard.core.spec import HookSpec
from guard.hooks.pinned_import import UnpinnedCode, pinned_code
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
        with self._pinned():
            if self._func is None:
                target = self.spec.options.get("callable")
                if not isinstance(target, str):
                    raise HookError(f"callable hook {self.spec.id} names no function (callable: module:function)")
                self._func = resolve_target(target)
            func = self._func
            if inspect.iscoroutinefunction(func):
                value = await func(event)
            else:
                value = await asyncio.to_thread(func, event)  # the thread runs in a copy of this context: pinned too
        return self._result(value, event)

    @contextmanager
    def _pinned(self) -> Iterator[None]:
        """The hook's code runs only as the user trusted it (:mod:`guard.hooks.pinned_import`): its module and the local
        modules it imports, at import and on each call; it alone imports from ``PYTHONPATH`` under ``python -I``
        (:func:`~guard.hooks.pinned_import.hook_path`). A config the user's own tools read unpinned is not checked."""
        spec = self.spec
        if spec.func is not None:  # a function registered in code: imported by the program that registered it
            yield
            return
        with pinned_code(spec.scripts, spec.workdir or self.ctx.settings.base_dir):
            try:
                yield
            except (UnpinnedCode, ConfigError) as exc:  # resolve_target reports a failed import as a ConfigError
                unpinned = exc if isinstance(exc, UnpinnedCode) else exc.__cause__
                if not isinstance(unpinned, UnpinnedCode):
                    raise
                raise HookRefused(
                    f"callable hook {spec.id} was not run: {unpinned}. Review it and run `guard trust` in a terminal to"
                    " accept it"
                ) from exc

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
