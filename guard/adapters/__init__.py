"""Client adapters: each client's hook payload in, that client's hook output out.

Pure functions on plain data (standard library only: they run on every
``guard hook`` call). An adapter module has

- ``normalize(payload: dict, env: Mapping[str, str]) -> dict``: the client's
  event as guard's canonical payload (Claude Code field names);
- ``render(payload: dict, decision: Decision) -> Rendered``: the bytes and exit
  code the client expects.

guard's clients are registered in :data:`CLIENTS`; a package adds a client under
the ``guard.clients`` entry-point group (``name = "module"``, a module with these
two functions), read only for a format guard does not know.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from guard.core.plugins import Seam
from guard.core.record import FrozenRecord

if TYPE_CHECKING:
    from guard.core.decision import Decision

__all__ = ["CLIENTS", "FORMATS", "Adapter", "Rendered", "adapter", "event_of"]

#: guard's own clients (plugins add theirs to :data:`CLIENTS`)
FORMATS: tuple[str, ...] = ("claude", "devin", "codex", "gemini", "copilot", "cursor")
CLIENTS = Seam("guard.clients", "client format", {fmt: f"guard.adapters.{fmt}" for fmt in FORMATS})


class Rendered(FrozenRecord):
    """What ``guard hook`` writes: stdout, the exit code, and stderr."""

    __slots__ = ("stdout", "exit_code", "stderr")
    stdout: str
    exit_code: int
    stderr: str

    def __init__(self, stdout: str = "", exit_code: int = 0, stderr: str = "") -> None:
        self._assign(locals())


class Adapter(Protocol):
    """What every ``guard.adapters.<client>`` module provides."""

    def normalize(self, payload: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
        """The client's event as guard's canonical payload (Claude Code field names)."""
        ...

    def render(self, payload: dict[str, Any], decision: Decision) -> Rendered:
        """The stdout, stderr and exit code the client expects for ``decision``."""
        ...


def adapter(fmt: str) -> Adapter:
    """The adapter module for ``fmt`` (one of :data:`FORMATS`, or a plugin's client)."""
    try:
        return cast(Adapter, CLIENTS.load(fmt))
    except LookupError as exc:
        raise ValueError(str(exc)) from exc


def event_of(payload: dict[str, Any]) -> str:
    """The canonical event name of ``payload``; "" when guard could not read one."""
    from guard.core.events.names import canonical_event

    try:
        return canonical_event(str(payload.get("hook_event_name", "")))
    except ValueError:
        return ""
