"""Judge prompt templates and what the judge gets to see of an event.

Templates are package data, ``guard/prompts/<name>.v<N>.txt`` (the highest N wins), with a
``[system]`` and an optional ``[user]`` section; every decision records the
template's version and sha256 so a verdict can be traced to the exact words that
produced it. The event reaches the judge as fenced data (see :mod:`guard.judge.fence`)
without volatile ids, trimmed to the tier's token budget.

Standard library only: cache keys are computed from these templates on the
``guard hook`` fast path.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from guard.cache.key import VOLATILE_FIELDS
from guard.events.names import canonical_event
from guard.judge.fence import fence

__all__ = ["PROMPTS_DIR", "TIERS", "RenderedPrompt", "Template", "TierProfile", "estimate_tokens", "judge_view", "load_template", "render"]

#: Inside the package, so an installed wheel judges like a checkout. Found beside this module rather than
#: through ``importlib.resources``: pip installs guard as plain files, and that import would add ~8 ms
#: to every cache-hit ``guard hook``.
PROMPTS_DIR = Path(__file__).resolve().parents[1] / "prompts"

#: Payload fields the judge never sees: ids that change every call and say nothing about the action.
HIDDEN_FIELDS = VOLATILE_FIELDS | {"hook_event_name", "effort"}
#: Shown first, in this order; the context fields are trimmed before anything else.
_LEADING = ("event", "tool_name", "cwd", "tool_input", "tool_response", "error")
CONTEXT_FIELDS = ("prompt", "context", "last_assistant_message", "task_description")

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_ARGUMENTS = "$ARGUMENTS"
_MIN_LEAF = 64  # strings shorter than this are never trimmed


@dataclass(frozen=True)
class TierProfile:
    """How one tier asks: which template, how much event data, how long an answer."""

    template: str
    data_budget_tokens: int
    max_tokens: int
    temperature: float = 0.0

    def params(self) -> dict[str, Any]:
        """Generation parameters (part of the cache key: they change the verdict)."""
        return {"max_tokens": self.max_tokens, "temperature": self.temperature}


TIERS: dict[str, TierProfile] = {
    "quick": TierProfile("quick", data_budget_tokens=1000, max_tokens=160),
    "thorough": TierProfile("thorough", data_budget_tokens=6000, max_tokens=1200),
}
CUSTOM_TEMPLATE = "custom"


@dataclass(frozen=True)
class Template:
    name: str
    version: str  # e.g. "quick.v1"
    sha256: str
    system: str
    user: str | None


@dataclass(frozen=True)
class RenderedPrompt:
    messages: list[dict[str, str]]
    version: str
    sha256: str
    boundary: str
    trimmed: bool

    @property
    def est_tokens(self) -> int:
        return sum(estimate_tokens(m["content"]) for m in self.messages)


def estimate_tokens(text: str) -> int:
    """About four characters a token: good enough for budgets, not for billing."""
    return (len(text) + 3) // 4


@lru_cache(maxsize=None)
def load_template(name: str, directory: Path = PROMPTS_DIR) -> Template:
    """The newest version of template ``name``; a missing or malformed file is a ValueError naming it."""
    versions = sorted(
        (int(m.group(1)), p) for p in directory.glob(f"{name}.v*.txt") if (m := re.fullmatch(rf"{re.escape(name)}\.v(\d+)\.txt", p.name))
    )
    if not versions:
        raise ValueError(f"no prompt template {name}.v<N>.txt in {directory}")
    number, path = versions[-1]
    raw = path.read_bytes()
    sections = re.split(r"^\[(system|user)\]\n", raw.decode("utf-8"), flags=re.MULTILINE)
    parts = dict(zip(sections[1::2], (s.strip() for s in sections[2::2]), strict=True))
    if "system" not in parts:
        raise ValueError(f"{path}: missing the [system] section")
    return Template(name, f"{name}.v{number}", hashlib.sha256(raw).hexdigest(), parts["system"], parts.get("user"))


def judge_view(payload: dict[str, Any]) -> dict[str, Any]:
    """The event as the judge sees it: canonical event name first, volatile ids gone."""
    view: dict[str, Any] = {}
    name = payload.get("hook_event_name")
    if isinstance(name, str):
        try:
            view["event"] = canonical_event(name)
        except ValueError:
            view["event"] = name
    rest = {k: v for k, v in payload.items() if k not in HIDDEN_FIELDS and v is not None}
    for key in (*_LEADING, *CONTEXT_FIELDS):
        if key in rest:
            view[key] = rest.pop(key)
    view.update(sorted(rest.items()))
    return view


def _dumps(view: dict[str, Any]) -> str:
    return json.dumps(view, ensure_ascii=False, default=str)


def _longest_leaf(node: Any, path: tuple[Any, ...] = ()) -> tuple[tuple[Any, ...], str] | None:
    """The path and value of the longest string at or below ``node`` (None when none is long enough)."""
    if isinstance(node, str):
        return (path, node) if len(node) >= _MIN_LEAF else None
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    best: tuple[tuple[Any, ...], str] | None = None
    for key, child in children:
        found = _longest_leaf(child, (*path, key))
        if found and (best is None or len(found[1]) > len(best[1])):
            best = found
    return best


def _set_leaf(root: dict[str, Any], path: tuple[Any, ...], value: str) -> None:
    node: Any = root
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def trim_view(view: dict[str, Any], budget_chars: int) -> tuple[dict[str, Any], bool]:
    """Shorten the longest strings (context fields first) until the JSON fits ``budget_chars``.

    Strings lose their middle, so a command keeps its start and its end.
    """
    view = json.loads(_dumps(view))  # a deep, JSON-only copy we may edit
    trimmed = False
    for scope in (CONTEXT_FIELDS, tuple(view)):
        while (excess := len(_dumps(view)) - budget_chars) > 0:
            leaf = _longest_leaf({k: view[k] for k in scope if k in view})
            if leaf is None:
                break
            path, text = leaf
            keep = max(32, len(text) - excess - 32)
            cut = len(text) - keep
            _set_leaf(view, path, f"{text[: keep // 2]}…[{cut} chars trimmed]…{text[len(text) - keep // 2 :]}")
            trimmed = True
    return view, trimmed


def _substitute(text: str, values: dict[str, str]) -> str:
    """Fill ``{{name}}`` placeholders in one pass, so a value that contains ``{{…}}`` stays literal."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def render(tier: str, payload: dict[str, Any], *, rule: str | None = None, prompt: str | None = None) -> RenderedPrompt:
    """Messages for one judge call: a plain-English ``rule`` in the tier's template, or a user's own ``prompt``."""
    profile = TIERS[tier]
    view, trimmed = trim_view(judge_view(payload), profile.data_budget_tokens * 4)
    fenced, boundary = fence(_dumps(view))
    if prompt is not None:
        template = load_template(CUSTOM_TEMPLATE)
        user = prompt.replace(_ARGUMENTS, fenced) if _ARGUMENTS in prompt else f"{prompt.rstrip()}\n\n{fenced}"
    else:
        if not rule:
            raise ValueError("a smart hook needs a rule or a prompt")
        template = load_template(profile.template)
        user = _substitute(template.user or "", {"rule": rule.strip(), "boundary": boundary, "data": fenced})
    messages = [{"role": "system", "content": template.system}, {"role": "user", "content": user}]
    return RenderedPrompt(messages, template.version, template.sha256, boundary, trimmed)
