"""``max_input``: denies a tool call whose input, as JSON, is longer than the hook's ``max_chars``.

Its verdict needs no model, no event loop and no options model, so the kind names it as its fast-path ``verdict``:
``guard hook`` answers with it before the engine (this module, which imports pydantic, is then never imported)::

    - kind: max_input
      matcher: Bash
      max_chars: 2000
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from guard.core.decision import HookResult
from guard.core.events.model import Event
from guard.core.hook import HookContext
from guard.core.spec import HookSpec
from guard_example_plugin.length import too_long


class MaxInputOptions(BaseModel):
    """The key a ``max_input`` entry carries besides the ones every hook has."""

    model_config = ConfigDict(extra="forbid")

    max_chars: int = Field(gt=0)


class MaxInputHook:
    """The same verdict where the engine runs the hook (an SDK's ``Engine``, a call the fast path passed on)."""

    def __init__(self, spec: HookSpec, ctx: HookContext) -> None:
        self.spec = spec

    async def prepare(self, event: Event) -> None:
        return None

    async def run(self, event: Event) -> HookResult:
        return too_long(self.spec, event.payload(), {})
