"""The judge's verdict and a tolerant reader for what models actually send back.

Models wrap JSON in code fences, put prose before it, answer in Claude's
prompt-hook shape (``{"ok": false, "reason": …}``) or refuse. Everything that can
be read as exactly one verdict is; everything else raises
:class:`~guard.errors.JudgeBadResponse` so failure_mode decides — an unreadable
answer is never an allow.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guard.errors import JudgeBadResponse

__all__ = ["Verdict", "parse_verdict", "response_schema"]

_SYNONYMS = {"block": "deny", "denied": "deny", "reject": "deny", "approve": "allow", "allowed": "allow", "approved": "allow"}
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class Verdict(BaseModel):
    """One judgement: allow | deny | ask, why, and how sure (None when the answer gave no confidence)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    decision: Literal["allow", "deny", "ask"]
    reason: str
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    reasoning: str | None = None


def response_schema(*, reasoning: bool = False, ok_shape: bool = False) -> dict[str, Any]:
    """The ``response_format`` JSON schema (strict: every property required, nothing extra).

    ``ok_shape`` asks for Claude's prompt-hook answer (``ok``/``reason``) that a
    user's own prompt expects; ``reasoning`` puts a reasoning field first, so the
    model reasons before it decides.
    """
    props: dict[str, Any] = {"reasoning": {"type": "string"}} if reasoning else {}
    if ok_shape:
        props |= {"ok": {"type": "boolean"}, "reason": {"type": "string"}}
    else:
        props |= {"decision": {"type": "string", "enum": ["allow", "deny", "ask"]}, "reason": {"type": "string"}}
    props["confidence"] = {"type": "number"}
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "guard_verdict",
            "strict": True,
            "schema": {"type": "object", "properties": props, "required": list(props), "additionalProperties": False},
        },
    }


def _candidates(text: str) -> list[dict[str, Any]]:
    """Every JSON object in ``text``: fenced blocks first, then objects embedded in prose."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    for source in [*_FENCE.findall(text), text]:
        pos = source.find("{")
        while pos != -1:
            try:
                obj, end = decoder.raw_decode(source, pos)
            except ValueError:
                pos = source.find("{", pos + 1)
                continue
            if isinstance(obj, dict):
                found.append(obj)
            pos = source.find("{", end)
    return found


def _normalise(obj: dict[str, Any]) -> dict[str, Any] | None:
    """Map the accepted answer shapes onto Verdict fields; None when ``obj`` is not a verdict."""
    data = dict(obj)
    if "decision" not in data and isinstance(data.get("ok"), bool):  # Claude prompt-hook answer
        data["decision"] = "allow" if data["ok"] else "deny"
        data.setdefault("reason", "" if data["ok"] else "(no reason given)")
    decision = data.get("decision")
    if not isinstance(decision, str):
        return None
    decision = decision.strip().lower()
    data["decision"] = _SYNONYMS.get(decision, decision)
    data["reason"] = str(data.get("reason") or "")
    confidence = data.get("confidence")
    if isinstance(confidence, str):
        try:
            confidence = float(confidence.strip().rstrip("%")) / (100 if confidence.strip().endswith("%") else 1)
        except ValueError:
            return None
    if isinstance(confidence, (int, float)) and not isinstance(confidence, bool) and 1 < confidence <= 100:
        confidence = confidence / 100  # "confidence": 90 means 90 %
    data["confidence"] = confidence
    return data


def parse_verdict(content: str | None, *, refusal: str | None = None) -> Verdict:
    """Read one verdict out of a model answer, or raise JudgeBadResponse saying why not.

    Several verdict-shaped objects that disagree are ambiguous and rejected: a
    model echoing an injected ``{"decision": "allow"}`` must not win by position.
    """
    if refusal:
        raise JudgeBadResponse(f"the model refused to judge: {refusal[:200]}")
    if not content or not content.strip():
        raise JudgeBadResponse("the model returned an empty answer")
    verdicts: list[Verdict] = []
    for obj in _candidates(content):
        data = _normalise(obj)
        if data is None:
            continue
        try:
            verdicts.append(Verdict.model_validate(data))
        except ValidationError:
            continue
    if not verdicts:
        raise JudgeBadResponse(f"no verdict in the model's answer: {content.strip()[:200]!r}")
    if len({v.decision for v in verdicts}) > 1:
        raise JudgeBadResponse(f"the model's answer holds conflicting verdicts: {content.strip()[:200]!r}")
    return verdicts[-1]
