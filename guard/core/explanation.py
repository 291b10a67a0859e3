"""Decisions that explain themselves: which rule stopped a call, who decided, and whether the agent may try again.

An agent that reads only "denied" retries the call in another form; one that
reads a hook error retries the same call. So every deny or ask names its rules
(:class:`~guard.core.decision.DecidingRule`: id, text, who decided, final or
not, the judge's one-line reason), and the adapters render two messages from
them: :func:`agent_message` for the model (Claude Code's
``permissionDecisionReason``) and :func:`user_message` for the person
(``systemMessage``). Neither is worded as an error.

A deny is *final* when a hard rule or protection made it: self-protection,
an untrusted config, a deterministic hook (command, http, callable), a policy's
``hard_deny`` entry, or any hook whose entry says ``final: true``. A smart
rule's judgement is not final (``final: false`` makes any hook so): the user
may override it, so the agent is told to ask rather than to give up.
Standard library only: this runs on the ``guard hook`` path for every deny.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from guard.core.decision import DecidingRule, Decision, HookResult
from guard.core.kinds import judged, shown
from guard.core.spec import HookSpec, SmartSettings

__all__ = [
    "FAILURE_POLICY",
    "FINAL_ADVICE",
    "JUDGEMENT_ADVICE",
    "RULE_CHARS",
    "UNJUDGED_ADVICE",
    "agent_message",
    "coverage",
    "explain",
    "rule_text",
    "user_message",
]

#: Characters of a rule's text shown in a message (the whole rule stays in guard.yaml and the audit log).
RULE_CHARS = 240
#: Characters of the one-line reason kept (a judge's reason is one sentence; protection's names the path and the way out).
WHY_CHARS = 1000
FINAL_ADVICE = "This block is final: do not retry this in another form; ask the user."
JUDGEMENT_ADVICE = (
    "This is a judgement the user can override: do not retry it in another form; if the call is needed, ask the user."
)
UNJUDGED_ADVICE = (
    "guard could not judge this call, so it is blocked: do not retry it in another form; tell the user what failed."
)
#: Who decided when a fail_closed failure, not a verdict, made the deny.
FAILURE_POLICY = "the failure policy"
#: A policy entry the judge cites (``hard_deny[2]``), and the numbered lines of a policy's rule text
#: (patterns, compiled on the first deny: importing this module is on every ``guard hook`` call).
_CITED = r"\b(hard_deny|soft_deny)\[(\d+)\]"
_ENTRY = r"(?m)^(hard_deny|soft_deny)\[(\d+)\]: (.+)$"


def _trimmed(text: str | None, limit: int = RULE_CHARS) -> str | None:
    if not text:
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _first_line(text: str | None) -> str | None:
    return _trimmed(text.strip().splitlines()[0], WHY_CHARS) if text and text.strip() else None


def _who(spec: HookSpec, result: HookResult) -> str:
    if result.error:
        return f"{FAILURE_POLICY} ({spec.id} is fail_closed and could not judge)"
    if spec.kind == "protect":
        return "protection"
    if judged(spec.kind):
        if result.details.get("reused"):
            return "an earlier judgement of the same code (the script and the files it may run unchanged since)"
        if result.cached:
            return "the cache (an earlier verdict of this rule)"
        tier = f"the {result.tier} tier" if result.tier else "the judge"
        return f"{tier} ({result.model})" if result.model else tier
    return f"{spec.kind} hook {spec.id}"


def coverage(details: dict[str, object]) -> list[str]:
    """What a smart hook's judgement covered beyond the call as sent, in words (``guard check``, ``guard view``): the
    project files it may run unnamed that its judge was shown, an answer from an earlier judgement of the same code,
    the rules judged in the same request."""
    notes = []
    deferred = details.get("deferred")
    if isinstance(deferred, dict) and deferred.get("files"):
        files = ", ".join(str(f) for f in deferred["files"])
        left = f" ({deferred['left_out']} more changed files not shown)" if deferred.get("left_out") else ""
        notes.append(f"judged with the files the agent wrote that it may run unnamed: {files}{left}")
    if details.get("reused"):
        notes.append(str(details["reused"]))
    together = details.get("judged_together")
    if isinstance(together, list) and len(together) > 1:
        notes.append(f"judged in one request with {', '.join(str(t) for t in together)}")
    return notes


def _policy_entry(spec: HookSpec, why: str | None) -> tuple[str, str] | None:
    """(list name, entry text) of the policy entry the judge's reason cites, when the rule is a policy."""
    cited = re.search(_CITED, why or "")
    if cited is None or not isinstance(spec.options, SmartSettings) or spec.options.rule is None:
        return None
    for name, number, text in re.findall(_ENTRY, spec.options.rule):
        if (name, number) == cited.groups():
            return name, text
    return None


def rule_text(spec: HookSpec) -> str | None:
    """A hook's rule as messages show it: a smart rule's text, else what its kind shows (a command, URL or callable; trimmed)."""
    if spec.kind == "protect":
        return "the agent may not change guard's config, state or hook settings, nor read its secret"
    return _trimmed(shown(spec))


def _deciding(spec: HookSpec, result: HookResult) -> DecidingRule:
    why = _first_line(result.reason)
    entry = _policy_entry(spec, result.reason)
    if result.error:
        final = False  # guard could not judge: nothing says another form would be refused
    elif spec.final is not None:
        final = spec.final
    elif entry is not None:
        final = entry[0] == "hard_deny"
    else:
        final = not judged(spec.kind)  # a deterministic hook's deny is final, a model's judgement is not
    rule = f"{entry[0]}: {_trimmed(entry[1])}" if entry is not None else rule_text(spec)
    return DecidingRule(spec.id, rule, _who(spec, result), final, why)


def explain(decision: Decision, specs: Iterable[HookSpec]) -> Decision:
    """Fill ``decision.decided_by`` for a deny or ask with the enforced hooks whose verdict it is (once each).

    The gate's own answers (an untrusted config, a failure under fail_closed) say who decided when they are made.
    """
    if decision.decision == "allow" or decision.decided_by:
        return decision
    by_id = {spec.id: spec for spec in specs}
    for result in decision.hooks:
        spec = by_id.get(result.id)
        if (
            spec is not None
            and not result.shadow
            and result.decision == decision.decision
            and all(r.id != spec.id for r in decision.decided_by)
        ):
            decision.decided_by.append(_deciding(spec, result))
    return decision


def _named(rule: DecidingRule) -> str:
    text = f'rule {rule.id} ("{rule.rule}")' if rule.rule else f"rule {rule.id}"
    return f"{text}, decided by {rule.by}" + (f": {rule.why.rstrip('.')}" if rule.why else "")


def agent_message(decision: Decision) -> str | None:
    """What the model reads for a deny or ask: the rules, who decided, why, and whether to stop and ask the user."""
    if decision.decision == "allow" or not decision.decided_by:
        return decision.reason
    rules = "; ".join(_named(rule) for rule in decision.decided_by)
    if decision.decision == "ask":
        return f"guard asks the user to approve this call: {rules}."
    advice = FINAL_ADVICE if decision.final else UNJUDGED_ADVICE if _unjudged(decision) else JUDGEMENT_ADVICE
    return f"guard denied this call: {rules}. {advice}"


def _unjudged(decision: Decision) -> bool:
    """Whether only the failure policy stopped the call: nothing was judged, so nothing is a judgement to override."""
    return all(rule.by.startswith(FAILURE_POLICY) for rule in decision.decided_by)


def user_message(decision: Decision, tool: str | None) -> str | None:
    """One line for the person: what was stopped, by which rule and who, and whether it is final."""
    if decision.decision == "allow" or not decision.decided_by:
        return None
    verb = "denied" if decision.decision == "deny" else "asks about"
    finality = (
        "final"
        if decision.final
        else "not a judgement: guard could not judge it (guard log shows why)"
        if decision.decision == "deny" and _unjudged(decision)
        else "a judgement you can override"
    )
    rules = ", ".join(f"{rule.id} ({rule.by})" for rule in decision.decided_by)
    return f"guard {verb} {tool or 'this call'}: rule {rules}; {finality}."
