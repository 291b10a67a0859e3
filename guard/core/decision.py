"""Hook results and the merged decision, in the contract's canonical JSON.

Plain :class:`~guard.core.record.Record` classes, not pydantic nor dataclasses: this
module sits on the ``guard hook`` fast path. They compare by value like the
dataclasses they replace. ``to_dict`` / ``from_dict`` are the boundary.
"""

from __future__ import annotations

from collections.abc import Iterable
from copy import deepcopy
from typing import Any, Literal, TypeGuard

from guard.core.kinds import quiet
from guard.core.record import Record

__all__ = [
    "ABSTAIN",
    "BY_STRICTNESS",
    "DECISIONS",
    "ERROR",
    "REDACTED",
    "STOPS",
    "DecidingRule",
    "Decision",
    "DecisionName",
    "HookResult",
    "Outcome",
    "guard_stop_loop",
    "is_decision",
    "merge",
    "strictest",
]

# The vocabulary (docs/glossary.md): every other module takes these names from here.
DecisionName = Literal["allow", "deny", "ask"]
DECISIONS: tuple[DecisionName, ...] = ("allow", "deny", "ask")
#: the same three from most permissive to strictest: the column order of reports, charts and tables
BY_STRICTNESS: tuple[DecisionName, ...] = ("allow", "ask", "deny")
#: the decisions that stop the call: deny, and ask (it waits for a person); eval scores them as the positive class
STOPS: tuple[DecisionName, ...] = ("deny", "ask")
#: a hook that said nothing about an event (``HookResult.decision is None``)
ABSTAIN: Literal["abstain"] = "abstain"
#: judging failed: no verdict (an eval row scored as an error, a failure in the decision's details)
ERROR: Literal["error"] = "error"
#: what one hook's verdict can come to, as the audit log, the view and eval reports count it
Outcome = Literal["allow", "deny", "ask", "abstain", "error"]
#: what a decision, its reasons and the audit log show where a secret was (a credential in a model's error text, a
#: payload field ``audit_redact`` names)
REDACTED = "[redacted]"
_RANK = {"allow": 0, "ask": 1, "deny": 2}


def strictest(decisions: Iterable[str]) -> DecisionName:
    """deny > ask > allow; nothing to merge = allow. Anything that is not a decision is ignored."""
    return max((d for d in decisions if is_decision(d)), key=_RANK.__getitem__, default="allow")


def is_decision(value: object) -> TypeGuard[DecisionName]:
    """Whether ``value`` is one of allow, deny, ask (for data read from hooks, models and files)."""
    return isinstance(value, str) and value in _RANK


class HookResult(Record):
    """What one hook said about one event. ``decision=None`` means it abstained.

    ``details`` keeps anything else worth keeping (prompt version and hash, per-call costs, tokens, fallback notes).
    ``shadow``: the hook runs in shadow mode, so this verdict is data (audited, shown in ``guard view``), never part of the answer.
    """

    __slots__ = (
        "id",
        "type",
        "decision",
        "reason",
        "updated_input",
        "additional_context",
        "tier",
        "model",
        "confidence",
        "cached",
        "latency_ms",
        "cost_usd",
        "error",
        "details",
        "shadow",
    )

    def __init__(
        self,
        id: str,
        type: str,
        decision: DecisionName | None = None,
        reason: str | None = None,
        updated_input: dict[str, Any] | None = None,
        additional_context: str | None = None,
        tier: str | None = None,
        model: str | None = None,
        confidence: float | None = None,
        cached: bool = False,
        latency_ms: float | None = None,
        cost_usd: float | None = None,
        error: str | None = None,
        details: dict[str, Any] | None = None,
        shadow: bool = False,
    ) -> None:
        self.id, self.type, self.decision, self.reason = id, type, decision, reason
        self.updated_input, self.additional_context, self.tier, self.model = (
            updated_input,
            additional_context,
            tier,
            model,
        )
        self.confidence, self.cached, self.latency_ms, self.cost_usd, self.error = (
            confidence,
            cached,
            latency_ms,
            cost_usd,
            error,
        )
        self.details: dict[str, Any] = {} if details is None else details
        self.shadow = shadow

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data; its containers (``updated_input``, ``details``) copied deep, so the caller may change them."""
        data = {name: getattr(self, name) for name in self.__slots__}
        data["updated_input"], data["details"] = deepcopy(self.updated_input), deepcopy(self.details)
        if not data["details"]:
            del data["details"]
        if not data["shadow"]:
            del data["shadow"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HookResult:
        return cls(**{k: v for k, v in data.items() if k in cls.__slots__})


class DecidingRule(Record):
    """Why a deny or ask happened, for the agent and the user: one rule that set it.

    ``rule`` is the rule's text, trimmed (a command, URL or callable for those
    hooks); ``by`` who decided (``the quick tier (model)``, ``the cache``,
    ``protection``, ``trust``, ``command hook <id>``…); ``final`` whether the agent
    must stop and ask the user rather than try another form; ``why`` the judge's
    one-line reason (a smart rule's) or the hook's own.
    """

    __slots__ = ("id", "rule", "by", "final", "why")

    def __init__(self, id: str, rule: str | None, by: str, final: bool, why: str | None = None) -> None:
        self.id, self.rule, self.by, self.final, self.why = id, rule, by, final, why

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DecidingRule:
        return cls(
            str(data.get("id", "")), data.get("rule"), str(data.get("by", "")), bool(data.get("final")), data.get("why")
        )


class Decision(Record):
    """The merged answer for one event, as every output format is derived from it.

    ``warnings`` is what the user must see because part of this decision was not a
    judgement (a fail_open hook that failed, no model, no config); clients show it
    (Claude Code: ``systemMessage``) and it goes to stderr and the audit log.
    ``decided_by`` names the rules behind a deny or ask (:mod:`guard.core.explanation`
    fills it); ``final`` is true when any of them is final.
    """

    __slots__ = (
        "decision",
        "reason",
        "updated_input",
        "additional_context",
        "hooks",
        "details",
        "warnings",
        "decided_by",
    )

    def __init__(
        self,
        decision: DecisionName = "allow",
        reason: str | None = None,
        updated_input: dict[str, Any] | None = None,
        additional_context: str | None = None,
        hooks: list[HookResult] | None = None,
        details: dict[str, Any] | None = None,
        warnings: list[str] | None = None,
        decided_by: list[DecidingRule] | None = None,
    ) -> None:
        self.decision, self.reason, self.updated_input, self.additional_context = (
            decision,
            reason,
            updated_input,
            additional_context,
        )
        self.hooks: list[HookResult] = [] if hooks is None else hooks
        self.details: dict[str, Any] = {} if details is None else details
        self.warnings: list[str] = [] if warnings is None else warnings
        self.decided_by: list[DecidingRule] = [] if decided_by is None else decided_by

    @property
    def final(self) -> bool:
        """A deny the agent must not retry in another form: a hard rule or protection said so."""
        return any(rule.final for rule in self.decided_by)

    @property
    def judged(self) -> bool:
        """False when something that should have judged this event did not."""
        return not self.warnings

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "decision": self.decision,
            "reason": self.reason,
            "updated_input": self.updated_input,
            "additional_context": self.additional_context,
            "hooks": [h.to_dict() for h in self.hooks],
        }
        if self.warnings:
            data["warnings"] = self.warnings
        if self.details:
            data["details"] = self.details
        if self.decided_by:
            data["decided_by"] = [rule.to_dict() for rule in self.decided_by]
            data["final"] = self.final
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Decision:
        return cls(
            decision=data.get("decision", "allow"),
            reason=data.get("reason"),
            updated_input=data.get("updated_input"),
            additional_context=data.get("additional_context"),
            hooks=[HookResult.from_dict(h) for h in data.get("hooks", [])],
            details=dict(data.get("details") or {}),
            warnings=[str(w) for w in data.get("warnings") or []],
            decided_by=[DecidingRule.from_dict(r) for r in data.get("decided_by") or [] if isinstance(r, dict)],
        )


def merge(results: list[HookResult], *, updated_input: dict[str, Any] | None = None) -> Decision:
    """Merge hook results: deny > ask > allow; abstentions and no hooks = allow.

    The reason is that of the hooks that set the final decision, joined in
    registration order (named by hook id when several hooks ran; the built-in
    self-protection rule, silent on nearly every call, does not count unless it
    spoke); additional context from every hook is kept. A shadow hook's result is
    kept in ``hooks`` (audited) and counts for nothing else.
    """
    live = [r for r in results if not r.shadow]
    verdicts = [r.decision for r in live if r.decision in _RANK]
    final = strictest(verdicts)
    several = sum(1 for r in live if r.decision is not None or not quiet(r.type)) > 1
    reasons = [f"[{r.id}] {r.reason}" if several else r.reason for r in live if r.decision == final and r.reason]
    contexts = [r.additional_context for r in live if r.additional_context]
    return Decision(
        decision=final,
        reason="; ".join(str(x) for x in reasons) or None,
        updated_input=updated_input if final != "deny" else None,
        additional_context="\n".join(contexts) or None,
        hooks=list(results),
        warnings=[
            f"hook {r.id} did not judge this call (fail_open): {r.error}"
            for r in live
            if r.error and r.decision is None
        ],
    )


_STOP_EVENTS = frozenset({"stop", "subagent_stop"})


def guard_stop_loop(decision: Decision, event: str, payload: dict[str, Any]) -> Decision:
    """Block a stop at most once in a row.

    With ``stop_hook_active`` the agent already went on once because of a stop
    hook; blocking again is how agents loop forever, so the deny is turned into
    an allow and the reason kept in ``details``.
    """
    if event in _STOP_EVENTS and decision.decision == "deny" and payload.get("stop_hook_active"):
        decision.details["stop_loop_guard"] = f"not blocking again (stop_hook_active): {decision.reason}"
        decision.decision, decision.reason = "allow", None
    return decision
