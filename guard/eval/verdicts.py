"""From the engine's Decision to one results row: verdict, confidence, usage, and what kind of failure.

Failures fall into three kinds, because they mean different things to a CI job:
``unparsed`` (the model answered, unreadably: the judge's fault, scored as wrong),
``error`` (a hook failed or timed out: no verdict, so not scored; the run says it
could not judge the case), and ``infrastructure`` (no judgement was possible:
unreachable or unauthorised model, no model configured: the run stops with exit 1). A fourth, ``unrecorded`` (replay found
no recording for the call), is set by the runner, which alone knows about cassettes.
"""

from __future__ import annotations

import re

from guard.core.decision import Decision, HookResult

__all__ = ["classify_error", "decision_fields", "is_rate_limited"]

_KIND_BY_TYPE = {
    "JudgeBadResponse": "unparsed",
    "JudgeUnavailable": "infrastructure",
    "ModelNotConfigured": "infrastructure",
    "JudgeTimeout": "error",
}
# The judge's own messages (guard/judge): used when the engine did not record the exception type.
_UNPARSED = re.compile(
    r"refused to judge|empty answer|no verdict in|conflicting verdicts|content filter", re.IGNORECASE
)
_INFRASTRUCTURE = re.compile(
    r"unavailable after|authentication failed|rejected the request|GUARD_MODEL_(?:QUICK|THOROUGH)|no model (?:is )?configured|network blocked",
    re.IGNORECASE,
)
_RATE_LIMITED = re.compile(r"\b429\b|RateLimit|rate.?limit", re.IGNORECASE)


def classify_error(message: str, error_type: str | None = None) -> str:
    """unparsed | error | infrastructure, from the exception type when known, else the message."""
    if error_type in _KIND_BY_TYPE:
        return _KIND_BY_TYPE[error_type]
    if _UNPARSED.search(message):
        return "unparsed"
    if _INFRASTRUCTURE.search(message):
        return "infrastructure"
    return "error"


def is_rate_limited(message: str | None) -> bool:
    return bool(message and _RATE_LIMITED.search(message))


def _worst_kind(failed: list[HookResult]) -> str | None:
    kinds = [classify_error(h.error or "", h.details.get("error_type")) for h in failed]
    for kind in ("infrastructure", "error", "unparsed"):
        if kind in kinds:
            return kind
    return None


def _sum(values: list[int | float | None]) -> int | float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _calls(hooks: list[HookResult]) -> list[dict[str, object]]:
    """Each model call the hooks made (answers from the cache made none), as ``ModelCall`` fields."""
    return [
        {
            "model": call["model"],
            "endpoint": call.get("endpoint"),
            "tokens_in": call.get("prompt_tokens"),
            "tokens_out": call.get("completion_tokens"),
            "cost_usd": call.get("cost_usd"),
            "served_model": call.get("served_model"),
            "prompt_version": call.get("prompt_version"),
            "response_mode": call.get("response_mode"),
            "stub": bool(call.get("stub")),
        }
        for h in hooks
        for call in h.details.get("calls", ())
        if isinstance(call.get("model"), str) and not call.get("cached")
    ]


def decision_fields(decision: Decision) -> dict[str, object]:
    """The row fields a Decision fills: verdict, reason, confidence, tier, usage and the calls behind it, cached, error."""
    hooks = decision.hooks
    deciding = next((h for h in hooks if h.decision == decision.decision and h.confidence is not None), None)
    deciding = deciding or next((h for h in hooks if h.confidence is not None), None)
    calls = [call for h in hooks for call in h.details.get("calls", ())]
    failed = [h for h in hooks if h.error]
    return {
        "verdict": decision.decision,
        "reason": decision.reason,
        "confidence": deciding.confidence if deciding else None,
        "tier": deciding.tier if deciding else next((h.tier for h in hooks if h.tier), None),
        "tokens_in": _sum([c.get("prompt_tokens") for c in calls]),
        "tokens_out": _sum([c.get("completion_tokens") for c in calls]),
        "cost_usd": _sum([h.cost_usd for h in hooks]),
        "cached": any(h.cached for h in hooks),
        "error": "; ".join(f"[{h.id}] {h.error}" for h in failed) or None,
        "error_kind": _worst_kind(failed),
        "hooks": [h.id for h in hooks],
        "calls": _calls(hooks),
    }
