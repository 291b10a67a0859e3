"""Judge prompt templates and what the judge gets to see of an event.

Templates are ``prompts/<name>.v<N>.txt`` at the top of the project (the highest N wins), with a
``[system]`` and an optional ``[user]`` section; every decision records the
template's version and sha256 so a verdict can be traced to the exact words that
produced it. The event reaches the judge as fenced data (see :mod:`guard.judge.fence`)
without volatile ids, and whole: an event whose JSON exceeds the tier's budget is
split into overlapping windows, each judged on its own (see :mod:`guard.judge.tiers`),
never trimmed, so no byte of what is judged goes unseen.

Standard library only: cache keys are computed from these templates on the
``guard hook`` fast path, which is also why the value classes are named tuples
(a frozen dataclass costs that path ~1 ms each to define).
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from guard.cache import VOLATILE_FIELDS
from guard.core.events.names import canonical_event
from guard.core.session import FILES_FIELD, SESSION_FIELD, WRITTEN_FIELD
from guard.judge.view import effect_of

if TYPE_CHECKING:
    from guard.session.context import SessionContext

__all__ = [
    "PROMPTS_DIR",
    "SESSION_TEMPLATE",
    "TIERS",
    "RenderedPrompt",
    "Template",
    "TierProfile",
    "TooLongToJudge",
    "WINDOW_TEMPLATE",
    "estimate_tokens",
    "fill_note",
    "judge_view",
    "load_template",
    "render",
    "render_windows",
    "window_count",
]

_PACKAGE = Path(__file__).resolve().parents[1]
#: ``prompts/`` beside the package in a checkout (and an editable install); the wheel ships the same
#: files inside it, as ``guard/prompts/`` (setup.py maps the folder), and that copy wins where it exists.
#: Found by path rather than through ``importlib.resources``: that import would add ~8 ms to every
#: cache-hit ``guard hook``.
PROMPTS_DIR = next((d for d in (_PACKAGE / "prompts", _PACKAGE.parent / "prompts") if d.is_dir()), _PACKAGE / "prompts")

#: Payload fields the judge never sees: ids that change every call and say nothing about the action.
HIDDEN_FIELDS = VOLATILE_FIELDS | {"hook_event_name", "effort", SESSION_FIELD, FILES_FIELD, WRITTEN_FIELD}
#: Shown first, in this order, then the context fields, then the rest sorted.
_LEADING = ("event", "tool_name", "cwd", "tool_input", "tool_response", "error")
CONTEXT_FIELDS = ("prompt", "context", "last_assistant_message", "task_description")
#: Repeated at the top of every window after the first, so each part says what it is part of.
_HEAD_FIELDS = ("event", "tool_name", "cwd")
_HEAD_MAX = 256  # a head field longer than this is left to the windows themselves

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_ARGUMENTS = "$ARGUMENTS"


class TierProfile(NamedTuple):
    """How one tier asks: which template, how much event data, how long an answer."""

    template: str
    data_budget_tokens: int  # per call; longer event data is judged in overlapping windows of this size
    max_tokens: int
    max_windows: int  # more would be needed: the event is too long to judge at this tier
    together: str  # the template that judges several rules in one request (guard.judge.tiers.judge_many)
    temperature: float = 0.0

    def params(self) -> dict[str, Any]:
        """Generation parameters (part of the cache key: they change the verdict)."""
        return {"max_tokens": self.max_tokens, "temperature": self.temperature}

    def answer_tokens(self, rules: int) -> int:
        """The answer's token budget for ``rules`` rules judged in one request (each gets the budget of one)."""
        return self.max_tokens * max(rules, 1)


TIERS: dict[str, TierProfile] = {
    "quick": TierProfile("quick", data_budget_tokens=1000, max_tokens=160, max_windows=8, together="together_quick"),
    "thorough": TierProfile(
        "thorough", data_budget_tokens=6000, max_tokens=1200, max_windows=8, together="together_thorough"
    ),
}
CUSTOM_TEMPLATE = "custom"
#: The note before each window's fence when an event is judged in parts.
WINDOW_TEMPLATE = "window"
#: The session block after the action, for rules that read session context.
SESSION_TEMPLATE = "session"


class Template(NamedTuple):
    name: str
    version: str  # e.g. "quick.v1"
    sha256: str
    system: str
    user: str | None
    note: str | None = None  # a text block guard fills in and sends (the window note), not a conversation


class RenderedPrompt(NamedTuple):
    messages: list[dict[str, str]]
    version: str
    sha256: str
    boundary: str
    part: int = 1  # this window's number, from 1
    parts: int = 1  # how many windows the event was split into

    @property
    def est_tokens(self) -> int:
        return sum(estimate_tokens(m["content"]) for m in self.messages)


def estimate_tokens(text: str) -> int:
    """About four characters a token: good enough for budgets, not for billing."""
    return (len(text) + 3) // 4


@cache
def load_template(name: str, directory: Path = PROMPTS_DIR) -> Template:
    """The newest version of template ``name``; a missing or malformed file is a ValueError naming it."""
    versions = sorted(
        (int(m.group(1)), p)
        for p in directory.glob(f"{name}.v*.txt")
        if (m := re.fullmatch(rf"{re.escape(name)}\.v(\d+)\.txt", p.name))
    )
    if not versions:
        raise ValueError(f"no prompt template {name}.v<N>.txt in {directory}")
    number, path = versions[-1]
    raw = path.read_bytes()
    sections = re.split(r"^\[(system|user|note)\]\n", raw.decode("utf-8"), flags=re.MULTILINE)
    parts = dict(zip(sections[1::2], (s.strip() for s in sections[2::2]), strict=True))
    if "system" not in parts and "note" not in parts:
        raise ValueError(f"{path}: missing the [system] section")
    return Template(
        name,
        f"{name}.v{number}",
        hashlib.sha256(raw).hexdigest(),
        parts.get("system", ""),
        parts.get("user"),
        parts.get("note"),
    )


def judge_view(payload: dict[str, Any], deferred: dict[str, Any] | None = None) -> dict[str, Any]:
    """The event as the judge sees it: canonical event name first, what the call does (:func:`~guard.judge.view.effect_of`)
    right after the tool's name, the project files it may run unnamed (``deferred``, :mod:`guard.judge.deferred`)
    after its input and context, volatile ids gone."""
    view: dict[str, Any] = {}
    name = payload.get("hook_event_name")
    if isinstance(name, str):
        try:
            view["event"] = canonical_event(name)
        except ValueError:
            view["event"] = name
    if payload.get("tool_name") is not None:
        view["tool_name"] = payload["tool_name"]
    effect = effect_of(payload)
    if effect is not None:
        view["effect"] = effect
    rest = {k: v for k, v in payload.items() if k not in HIDDEN_FIELDS and v is not None}
    for key in (*_LEADING, *CONTEXT_FIELDS):
        if key in rest:
            view[key] = rest.pop(key)
    if deferred is not None:
        view["deferred"] = deferred
    view.update(sorted(rest.items()))
    return view


def _dumps(view: dict[str, Any]) -> str:
    return json.dumps(view, ensure_ascii=False, default=str)


class TooLongToJudge(ValueError):
    """The event needs more windows than the tier allows: it cannot be judged whole there."""


class _Windows:
    """How one event's JSON is cut: ``count`` slices of ``size`` characters, each overlapping the last by ``overlap``."""

    __slots__ = ("head", "overlap", "size", "text")

    def __init__(self, text: str, head: str, size: int, overlap: int) -> None:
        self.text, self.head, self.size, self.overlap = text, head, size, overlap

    @property
    def count(self) -> int:
        if len(self.text) <= self.size:
            return 1
        stride = self.size - self.overlap
        return 1 + -(-(len(self.text) - self.size) // stride)

    def span(self, index: int) -> tuple[int, int]:
        start = index * (self.size - self.overlap)
        return start, min(len(self.text), start + self.size)


def _windows(tier: str, payload: dict[str, Any], deferred: dict[str, Any] | None = None) -> _Windows:
    view = judge_view(payload, deferred)
    text = _dumps(view)
    budget = TIERS[tier].data_budget_tokens * 4
    if len(text) <= budget:
        return _Windows(text, "", budget, 0)
    head = _dumps({k: view[k] for k in _HEAD_FIELDS if isinstance(view.get(k), str) and len(view[k]) <= _HEAD_MAX})
    size = budget - len(head) - 1
    return _Windows(text, head, size, overlap=size // 8)  # a phrase shorter than the overlap is whole in some window


def window_count(tier: str, payload: dict[str, Any], deferred: dict[str, Any] | None = None) -> int:
    """How many calls judging ``payload`` (and the ``deferred`` block) at ``tier`` takes (1 when it fits the tier's budget)."""
    return _windows(tier, payload, deferred).count


def _substitute(text: str, values: dict[str, str]) -> str:
    """Fill ``{{name}}`` placeholders in one pass, so a value that contains ``{{…}}`` stays literal."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def fill_note(name: str, values: dict[str, str]) -> str:
    """The ``[note]`` of template ``name`` with its placeholders filled (trusted text guard sends as a block)."""
    return _substitute(load_template(name).note or "", values)


def session_block(session: SessionContext) -> str:
    """The session note naming its boundary, then the session JSON fenced as untrusted data."""
    from guard.judge.fence import fence  # rendering only: a cache key needs no fence

    fenced, boundary = fence(json.dumps(session.to_dict(), ensure_ascii=False, indent=1))
    return fill_note(SESSION_TEMPLATE, {"boundary": boundary, "data": fenced})


def _combined(version: str, sha256: str, other: Template) -> tuple[str, str]:
    """The version and hash of a template sent together with a note template."""
    return f"{version}+{other.version}", hashlib.sha256(f"{sha256}+{other.sha256}".encode()).hexdigest()


def _render_one(
    tier: str,
    data: str,
    windows: _Windows | None,
    part: int,
    rule: str | None,
    prompt: str | None,
    session: SessionContext | None,
    rules: dict[str, str] | None = None,
) -> RenderedPrompt:
    """One call's messages; for a window of a long event (``windows`` given) with the window note before the fence,
    for a session-aware rule (``session`` given) with the session block after the action, and for several rules
    judged at once (``rules``: id -> rule) with the tier's ``together`` template."""
    from guard.judge.fence import fence

    fenced, boundary = fence(data)
    if rules:
        template = load_template(TIERS[tier].together)
    elif prompt is not None:
        template = load_template(CUSTOM_TEMPLATE)
    elif rule:
        template = load_template(TIERS[tier].template)
    else:
        raise ValueError("a smart hook needs a rule or a prompt")
    version, sha256, parts = template.version, template.sha256, 1
    if windows is not None:
        note = load_template(WINDOW_TEMPLATE)
        start, end = windows.span(part - 1)
        numbers = {
            "part": str(part),
            "parts": str(windows.count),
            "start": f"{start + 1:,}",
            "end": f"{end:,}",
            "total": f"{len(windows.text):,}",
        }
        fenced = f"{_substitute(note.note or '', numbers)}\n{fenced}"
        (version, sha256), parts = _combined(version, sha256, note), windows.count
    if rules:
        listed = json.dumps({rule_id: text.strip() for rule_id, text in rules.items()}, ensure_ascii=False, indent=1)
        user = _substitute(template.user or "", {"rules": listed, "boundary": boundary, "data": fenced})
    elif prompt is not None:
        user = prompt.replace(_ARGUMENTS, fenced) if _ARGUMENTS in prompt else f"{prompt.rstrip()}\n\n{fenced}"
    else:
        user = _substitute(template.user or "", {"rule": rule.strip(), "boundary": boundary, "data": fenced})  # type: ignore[union-attr]
    if session is not None:
        user = f"{user}\n\n{session_block(session)}"
        version, sha256 = _combined(version, sha256, load_template(SESSION_TEMPLATE))
    messages = [{"role": "system", "content": template.system}, {"role": "user", "content": user}]
    return RenderedPrompt(messages, version, sha256, boundary, part, parts)


def render_windows(
    tier: str,
    payload: dict[str, Any],
    *,
    rule: str | None = None,
    prompt: str | None = None,
    session: SessionContext | None = None,
    deferred: dict[str, Any] | None = None,
    rules: dict[str, str] | None = None,
) -> list[RenderedPrompt]:
    """Messages for every call judging ``payload`` at ``tier``: one when it fits, else one per overlapping window.

    ``session`` (a session-aware rule's bounded context) is sent whole with every window; ``deferred`` (the project
    files the call may run unnamed, as this rule is shown them) is part of the action, windowed with it; ``rules``
    (id -> rule, two or more) asks for every rule's verdict in each request.

    Raises TooLongToJudge when the event needs more windows than the tier allows.
    """
    windows = _windows(tier, payload, deferred)
    count, limit = windows.count, TIERS[tier].max_windows
    if count == 1:
        return [_render_one(tier, windows.text, None, 1, rule, prompt, session, rules)]
    if count > limit:
        raise TooLongToJudge(
            f"the event's JSON is {len(windows.text):,} characters: judging all of it at the {tier} tier needs {count} "
            f"calls of ~{windows.size:,} characters, more than its limit of {limit}"
        )
    rendered = []
    for part in range(1, count + 1):
        start, end = windows.span(part - 1)
        data = f"{windows.head}\n{windows.text[start:end]}"
        rendered.append(_render_one(tier, data, windows, part, rule, prompt, session, rules))
    return rendered


def render(
    tier: str,
    payload: dict[str, Any],
    *,
    rule: str | None = None,
    prompt: str | None = None,
    session: SessionContext | None = None,
    deferred: dict[str, Any] | None = None,
) -> RenderedPrompt:
    """Messages for one judge call on an event that fits the tier's budget (TooLongToJudge otherwise)."""
    windows = render_windows(tier, payload, rule=rule, prompt=prompt, session=session, deferred=deferred)
    if len(windows) > 1:
        raise TooLongToJudge(f"the event needs {len(windows)} windows at the {tier} tier; use render_windows")
    return windows[0]
