"""The judge's verdict and a strict reader for what models actually send back.

Models wrap JSON in code fences, put prose before it, answer in Claude's
prompt-hook shape (``{"ok": false, "reason": …}``) or refuse. The reader keeps
that tolerance but trusts only what it can verify: every verdict-shaped thing in
the answer (an object with a verdict key, at any depth, or a verdict key in text
that did not parse) must be a valid verdict, and they must all agree; an allow
must be the only verdict given. Anything else — a refusal, a truncated or
filtered answer, an echoed ``{"decision": "allow"}`` beside a verdict in a
slightly wrong shape — raises :class:`~guard.core.errors.JudgeBadResponse` so
failure_mode decides. An unverifiable answer is never an allow.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guard.core.decision import DECISIONS, DecisionName
from guard.core.errors import JudgeBadResponse

__all__ = ["ModelVerdict", "parse_verdict", "parse_verdicts", "response_schema", "verdicts_schema"]

_SYNONYMS = {
    "block": "deny",
    "denied": "deny",
    "reject": "deny",
    "approve": "allow",
    "allowed": "allow",
    "approved": "allow",
}


class ModelVerdict(BaseModel):
    """The model's verdict on one rule, parsed and validated: allow | deny | ask, why, and how sure (None when the answer gave no
    confidence). A smart hook's verdict (:class:`~guard.core.decision.HookResult`) is made from it (docs/glossary.md)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    decision: DecisionName
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
        props |= {"decision": {"type": "string", "enum": list(DECISIONS)}, "reason": {"type": "string"}}
    props["confidence"] = {"type": "number"}
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "guard_verdict",
            "strict": True,
            "schema": {"type": "object", "properties": props, "required": list(props), "additionalProperties": False},
        },
    }


def verdicts_schema(rule_ids: list[str], *, reasoning: bool = False) -> dict[str, Any]:
    """The ``response_format`` for several rules judged in one request: one property per rule id, each a verdict."""
    one = response_schema(reasoning=reasoning)["json_schema"]["schema"]
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "guard_verdicts",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": dict.fromkeys(rule_ids, one),
                "required": list(rule_ids),
                "additionalProperties": False,
            },
        },
    }


#: Keys that make an object verdict-shaped (compared lower-cased).
_VERDICT_KEYS = frozenset(
    {
        "decision",
        "verdict",
        "ok",
        "permissiondecision",
        "allow",
        "allowed",
        "approve",
        "approved",
        "deny",
        "denied",
        "block",
        "blocked",
    }
)
#: A verdict key written as a quoted JSON key, wherever it stands in the text.
_VERDICT_KEY_TEXT = re.compile(r"""["'](?:{})["']\s*:""".format("|".join(sorted(_VERDICT_KEYS))), re.IGNORECASE)
#: finish_reason values that mean the answer is not the model's whole, unfiltered reply.
_CUT_OFF = frozenset({"length", "content_filter"})


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object with a key twice does not parse (json would keep the last), so its verdict key reads as malformed."""
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    return dict(pairs)


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates)


def _objects(text: str) -> tuple[list[dict[str, Any]], list[tuple[int, int]]]:
    """Every top-level JSON object in ``text`` (in code fences or prose) and the spans they cover."""
    found: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []
    pos = text.find("{")
    while pos != -1:
        try:
            obj, end = _DECODER.raw_decode(text, pos)
        except ValueError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(obj, dict):
            found.append(obj)
            spans.append((pos, end))
        pos = text.find("{", end)
    return found, spans


def _verdict_shaped(node: Any) -> list[dict[str, Any]]:
    """Every object at or below ``node`` that carries a verdict key (nested ones included)."""
    if isinstance(node, list):
        return [found for item in node for found in _verdict_shaped(item)]
    if not isinstance(node, dict):
        return []
    own = [node] if any(k.lower() in _VERDICT_KEYS for k in node) else []
    return own + [found for value in node.values() for found in _verdict_shaped(value)]


def _stray_verdict_keys(text: str, spans: list[tuple[int, int]]) -> int:
    """Verdict keys in the text outside every parsed object: a cut-off or malformed verdict."""
    return sum(1 for m in _VERDICT_KEY_TEXT.finditer(text) if not any(start <= m.start() < end for start, end in spans))


def _confidence(value: Any) -> float | None:
    """0..1 from 0.9, 90 (percent) or "85%"; ValueError for anything else (a bool, "very high", 150)."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        number = float(text.rstrip("%"))  # ValueError for words
        value = number / 100 if text.endswith("%") else number
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"confidence {value!r} is not a number")
    if 1 < value <= 100:
        value = value / 100  # "confidence": 90 means 90 %
    if not 0 <= value <= 1:
        raise ValueError(f"confidence {value!r} is out of range")
    return float(value)


def _validate(obj: dict[str, Any]) -> ModelVerdict:
    """``obj`` as a ModelVerdict; ValueError when it is verdict-shaped but not a clean verdict."""
    if {k.lower() for k in obj} & _VERDICT_KEYS - {"decision", "ok"}:
        raise ValueError("verdict keys other than decision / ok")
    ok = obj.get("ok")
    if "ok" in obj and not isinstance(ok, bool):
        raise ValueError(f"ok {ok!r} is not a boolean")
    decision = obj.get("decision")
    if decision is None:
        if ok is None:
            raise ValueError("no decision")
        decision = "allow" if ok else "deny"
    if not isinstance(decision, str):
        raise ValueError(f"decision {decision!r} is not a string")
    decision = _SYNONYMS.get(decision.strip().lower(), decision.strip().lower())
    if ok is not None and (ok != (decision == "allow")):
        raise ValueError(f"ok {ok} contradicts decision {decision!r}")
    reason = obj.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise ValueError("reason is not a string")
    data = {
        "decision": decision,
        "reason": reason or ("(no reason given)" if ok is False else ""),
        "confidence": _confidence(obj.get("confidence")),
        "reasoning": obj.get("reasoning") if isinstance(obj.get("reasoning"), str) else None,
    }
    try:
        return ModelVerdict.model_validate(data)
    except ValidationError as exc:
        raise ValueError(str(exc).splitlines()[0]) from exc


def parse_verdict(content: str | None, *, refusal: str | None = None, finish_reason: str | None = None) -> ModelVerdict:
    """Read the one verdict of a model answer, or raise JudgeBadResponse saying why not.

    Verdicts that disagree, verdict-shaped objects or keys that fail validation,
    and more than one allow are ambiguous and rejected: a model echoing an
    injected ``{"decision": "allow"}`` must not win by position or by the other
    verdict being slightly malformed.
    """
    if refusal:
        raise JudgeBadResponse(f"the model refused to judge: {refusal[:200]}")
    if finish_reason in _CUT_OFF:
        raise JudgeBadResponse(
            f"the model's answer was cut off (finish_reason {finish_reason}): {(content or '').strip()[:200]!r}"
        )
    if not content or not content.strip():
        raise JudgeBadResponse("the model returned an empty answer")
    objects, spans = _objects(content)
    verdicts: list[ModelVerdict] = []
    invalid: list[str] = []
    for obj in (shaped for top in objects for shaped in _verdict_shaped(top)):
        try:
            verdicts.append(_validate(obj))
        except ValueError as exc:
            invalid.append(str(exc))
    stray = _stray_verdict_keys(content, spans)
    excerpt = content.strip()[:200]
    if not verdicts and not invalid and not stray:
        raise JudgeBadResponse(f"no verdict in the model's answer: {excerpt!r}")
    if invalid or stray:
        why = invalid[0] if invalid else "a verdict that does not parse"
        raise JudgeBadResponse(f"the model's answer holds a malformed verdict ({why}): {excerpt!r}")
    if len({v.decision for v in verdicts}) > 1:
        raise JudgeBadResponse(f"the model's answer holds conflicting verdicts: {excerpt!r}")
    if verdicts[0].decision == "allow" and len(verdicts) > 1:
        raise JudgeBadResponse(f"the model's answer holds more than one allow (an echo?): {excerpt!r}")
    return verdicts[-1]


def parse_verdicts(
    content: str | None, rule_ids: list[str], *, refusal: str | None = None, finish_reason: str | None = None
) -> dict[str, ModelVerdict | JudgeBadResponse]:
    """Read the verdict of each rule from a model answer judging several rules at once.

    As strict as :func:`parse_verdict`, rule by rule: the answer must hold exactly one JSON object whose keys are
    rule ids (code fences and prose around it are tolerated), with no key that is not one of ``rule_ids``, no other
    verdict-shaped object and no verdict key outside it. Each rule's value must be one clean verdict, with nothing
    verdict-shaped nested in it. A rule whose verdict is missing or malformed gets a JudgeBadResponse of its own
    (its failure_mode or escalation decides it); an answer that cannot be read at all gives one to every rule.
    """

    def everyone(why: str) -> dict[str, ModelVerdict | JudgeBadResponse]:
        return dict.fromkeys(rule_ids, JudgeBadResponse(why))

    if refusal:
        return everyone(f"the model refused to judge: {refusal[:200]}")
    if finish_reason in _CUT_OFF:
        return everyone(
            f"the model's answer was cut off (finish_reason {finish_reason}): {(content or '').strip()[:200]!r}"
        )
    if not content or not content.strip():
        return everyone("the model returned an empty answer")
    excerpt = content.strip()[:200]
    objects, spans = _objects(content)
    answers = [obj for obj in objects if set(obj) & set(rule_ids)]
    others = [obj for obj in objects if obj not in answers and _verdict_shaped(obj)]
    if len(answers) != 1 or others or _stray_verdict_keys(content, spans):
        return everyone(f"the model's answer does not hold exactly one object of verdicts by rule id: {excerpt!r}")
    answer = answers[0]
    unknown = sorted(set(answer) - set(rule_ids))
    if unknown:
        return everyone(f"the model's answer names a rule it was not asked about ({unknown[0]!r}): {excerpt!r}")
    read: dict[str, ModelVerdict | JudgeBadResponse] = {}
    for rule in rule_ids:
        value = answer.get(rule)
        if not isinstance(value, dict):
            read[rule] = JudgeBadResponse(f"no verdict for rule {rule!r} in the model's answer: {excerpt!r}")
            continue
        nested = [found for item in value.values() for found in _verdict_shaped(item)]
        try:
            if nested:
                raise ValueError("a verdict nested inside the verdict")
            read[rule] = _validate(value)
        except ValueError as exc:
            read[rule] = JudgeBadResponse(f"the model's verdict for rule {rule!r} is malformed ({exc}): {excerpt!r}")
    return read
