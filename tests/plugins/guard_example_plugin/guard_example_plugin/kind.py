"""``deny_words``: denies a tool call whose input contains one of the words of the hook's ``rule``."""

from __future__ import annotations

import json

from guard.core.decision import HookResult
from guard.core.events.model import Event
from guard.core.hook import HookContext
from guard.core.spec import HookSpec


class DenyWordsHook:
    def __init__(self, spec: HookSpec, ctx: HookContext) -> None:
        self.spec = spec
        self.words = (spec.rule or "").split()

    async def prepare(self, event: Event) -> None:
        return None

    async def run(self, event: Event) -> HookResult:
        text = json.dumps(event.payload().get("tool_input") or {})
        hit = next((word for word in self.words if word in text), None)
        if hit is None:
            return HookResult(self.spec.id, self.spec.kind)
        return HookResult(self.spec.id, self.spec.kind, decision="deny", reason=f"deny_words: {hit!r} is not allowed")
