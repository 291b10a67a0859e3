"""``deny_words``: denies a tool call whose input contains one of the hook's ``words``.

A config names it with its own options, validated by :class:`DenyWordsOptions`::

    - kind: deny_words
      matcher: Bash
      words: [curl, wget]
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field

from guard.core.decision import HookResult
from guard.core.events.model import Event
from guard.core.hook import HookContext
from guard.core.spec import HookSpec


class DenyWordsOptions(BaseModel):
    """The keys a ``deny_words`` entry carries besides the ones every hook has."""

    model_config = ConfigDict(extra="forbid")

    words: list[str] = Field(min_length=1)
    case_sensitive: bool = True


class DenyWordsHook:
    def __init__(self, spec: HookSpec, ctx: HookContext) -> None:
        self.spec = spec
        self.options = DenyWordsOptions.model_validate(dict(spec.options))

    async def prepare(self, event: Event) -> None:
        return None

    async def run(self, event: Event) -> HookResult:
        text = json.dumps(event.payload().get("tool_input") or {})
        fold = (lambda value: value) if self.options.case_sensitive else str.lower
        hit = next((word for word in self.options.words if fold(word) in fold(text)), None)
        if hit is None:
            return HookResult(self.spec.id, self.spec.kind)
        return HookResult(self.spec.id, self.spec.kind, decision="deny", reason=f"deny_words: {hit!r} is not allowed")
