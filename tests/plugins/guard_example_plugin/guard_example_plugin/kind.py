"""``deny_words``: denies a tool call whose input contains one of the hook's ``words``.

A config names it with its own options, validated by :class:`DenyWordsOptions`::

    - kind: deny_words
      matcher: Bash
      words: [curl, wget]
      words_file: blocked-words.txt   # more words, one a line, beside the config: guard trust pins it
"""

from __future__ import annotations

import json
import os

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
    words_file: str | None = None


def word_files(spec: HookSpec, workdir: str) -> list[str]:
    """The kind's ``files`` (``Kind.files``): the words file, which ``guard trust`` pins and self-protection guards."""
    name = spec.options.get("words_file")
    path = os.path.realpath(os.path.join(workdir, name)) if isinstance(name, str) else None
    return [path] if path and os.path.isfile(path) else []


class DenyWordsHook:
    def __init__(self, spec: HookSpec, ctx: HookContext) -> None:
        self.spec = spec
        self.options = DenyWordsOptions.model_validate(dict(spec.options))
        self.words = list(self.options.words)
        for path in word_files(spec, spec.workdir or ctx.settings.base_dir):
            with open(path, encoding="utf-8") as fh:
                self.words += [line.strip() for line in fh if line.strip()]

    async def prepare(self, event: Event) -> None:
        return None

    async def run(self, event: Event) -> HookResult:
        text = json.dumps(event.payload().get("tool_input") or {})
        fold = (lambda value: value) if self.options.case_sensitive else str.lower
        hit = next((word for word in self.words if fold(word) in fold(text)), None)
        if hit is None:
            return HookResult(self.spec.id, self.spec.kind)
        return HookResult(self.spec.id, self.spec.kind, decision="deny", reason=f"deny_words: {hit!r} is not allowed")
