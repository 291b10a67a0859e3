"""The hook registry: hooks per event, the tool filter, and run-scoped mounting.

Hooks registered on a :class:`Registry` apply to every run. Hooks mounted with
:meth:`Registry.mount` inside :meth:`Registry.run` live in a ContextVar: concurrent
runs (asyncio tasks, threads) never see each other's, and they are released the
moment the run's ``with`` block ends. Standard library only.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from guard.core.events.names import canonical_event
from guard.core.matching import compile_filter
from guard.core.spec import FailureMode, HookSpec

__all__ = ["Registry", "default_registry", "hook"]


_run_hooks: contextvars.ContextVar[tuple[HookSpec, ...] | None] = contextvars.ContextVar(
    "guard_run_hooks", default=None
)


class Registry:
    """Hook specs by canonical event, plus the current run's mounted hooks."""

    def __init__(self, specs: Iterable[HookSpec] = ()) -> None:
        self._specs: list[HookSpec] = []
        for spec in specs:
            self.add(spec)

    def add(self, spec: HookSpec) -> HookSpec:
        """Register a hook for every run."""
        self._specs.append(spec)
        return spec

    def specs(self) -> list[HookSpec]:
        """Every hook visible here: the global ones, then the current run's."""
        return [*self._specs, *(_run_hooks.get() or ())]

    def matching(self, event: str, tool_name: str | None = None, client: str | None = None) -> list[HookSpec]:
        """Hooks for ``event`` (any alias) whose filter accepts ``tool_name`` from ``client`` (None: any), in order."""
        name = canonical_event(event)
        return [s for s in self.specs() if s.event == name and compile_filter(s.matcher, s.tools)(tool_name, client)]

    @contextmanager
    def run(self) -> Iterator[None]:
        """Open a run scope; hooks mounted inside it vanish when it closes."""
        token = _run_hooks.set(())
        try:
            yield
        finally:
            _run_hooks.reset(token)

    def mount(self, specs: Iterable[HookSpec]) -> None:
        """Add hooks to the current run only (e.g. a skill the user selected)."""
        current = _run_hooks.get()
        if current is None:
            raise RuntimeError("Registry.mount() needs an open run: use `with registry.run():`")
        _run_hooks.set((*current, *specs))

    def callable(
        self,
        event: str = "pre_tool_use",
        *,
        matcher: str | None = None,
        tools: str | list[str] | None = None,
        id: str | None = None,
        timeout: float = 10.0,
        failure_mode: FailureMode = "fail_open",
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: register a sync or async Python function as a hook.

        The function gets the :class:`~guard.core.events.Event` and returns a
        :class:`~guard.core.decision.HookResult`, a verdict string, a dict in Claude Code
        or canonical shape, or None to abstain.
        """

        def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
            self.add(
                HookSpec(
                    id=id or f"{func.__module__}:{func.__qualname__}",
                    kind="callable",
                    event=canonical_event(event),
                    matcher=matcher,
                    tools=(tools,) if isinstance(tools, str) else (tuple(tools) if tools else None),
                    timeout=timeout,
                    failure_mode=failure_mode,
                    source="library",
                    options={"callable": f"{func.__module__}:{func.__qualname__}"},
                    func=func,
                )
            )
            return func

        return decorate


#: The process-wide registry the ``@guard.hook`` decorator writes to.
default_registry = Registry()
hook = default_registry.callable
