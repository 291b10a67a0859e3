"""The one seam every hook kind implements, and what the engine hands them.

A hook is built from a :class:`~guard.core.spec.HookSpec` and a :class:`HookContext`
and answers one question: ``await hook.run(event) -> HookResult``. Timeouts,
crash isolation and failure_mode are the engine's job, not the hook's: a hook
raises :class:`~guard.core.errors.HookError` (or anything) and the engine records it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from guard.core.spec import HookSpec

if TYPE_CHECKING:
    from guard.core.decision import HookResult
    from guard.core.events.model import Event
    from guard.core.settings import Settings

__all__ = ["Hook", "HookContext", "JudgedTogether"]


class HookContext:
    """Shared, lazily built services: settings, the decision cache, the audit log.

    One context per engine; hooks read what they need from it. ``resources`` holds
    per-engine singletons built on first use (the cache backend, warm HTTP clients).
    A plain class: this module is on the ``guard hook`` fast path (the
    self-protection rule implements :class:`Hook`).
    """

    __slots__ = ("resources", "settings")

    def __init__(self, settings: Settings, resources: dict[str, Any] | None = None) -> None:
        self.settings = settings
        self.resources: dict[str, Any] = {} if resources is None else resources

    def resource(self, name: str, build: Any) -> Any:
        """Return the resource ``name``, building it with ``build()`` the first time."""
        if name not in self.resources:
            self.resources[name] = build()
        return self.resources[name]


@runtime_checkable
class Hook(Protocol):
    """A runnable hook. Implementations live in ``guard/hooks/<kind>.py``."""

    spec: HookSpec

    async def run(self, event: Event) -> HookResult:
        """Judge one event. Raise on failure; the engine applies timeout and failure_mode."""
        ...

    async def prepare(self, event: Event) -> None:
        """One-off set-up before :meth:`run` (a cache probe, a model client import), not counted as judging time."""
        ...


@runtime_checkable
class JudgedTogether(Protocol):
    """A hook whose kind can judge several of its hooks in one request (smart rules: one model request for them all).

    The engine runs the hooks of one event that share a :meth:`together_key` as one set: each is prepared, then the
    first one's :meth:`run_together` answers for all, under the shortest of their timeouts.
    """

    def together_key(self, event: Event) -> str | None:
        """What the hooks judged in one request with this one share, or None to be judged alone."""
        ...

    async def run_together(self, hooks: list[Any], event: Event) -> list[HookResult | Exception]:
        """Each hook's result (or failure), in order."""
        ...
