"""quick, thorough and auto: which model is asked, with which prompt, on which windows, and when to escalate.

quick asks the quick model with the short template and no reasoning; thorough
asks the thorough model to reason, then decide. An event too long for one call is
judged in overlapping windows, every one of them (see
:func:`~guard.judge.prompts.render_windows`): any deny wins, ask beats allow, and
an allow needs every window to allow. auto asks quick and escalates to thorough
when quick answered ask, gave no confidence or one under the hook's threshold,
gave an unreadable answer, or when the event needs more windows than quick allows.

The strictest verdict seen stands. When a call fails (one window, or thorough
after an escalation), a deny that any call gave is the decision, and so is an ask
under fail_open (under fail_closed the failure's deny is stricter); otherwise the
failure is raised and the engine applies failure_mode. A judgement that stands
on a failure is marked and never cached. Every call made is recorded (tier,
window, model, latency, tokens, cost, prompt version) whether or not its verdict
was used.

Several rules that apply to one call are judged in the same requests (:func:`judge_many`): each request asks every
rule still undecided for its verdict, each rule's answer is read on its own, and under auto only the rules quick was
unsure of go on to thorough.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from guard.cache import cache_key
from guard.core.errors import JudgeBadResponse, JudgeError, JudgeTooLarge, ModelNotConfigured
from guard.core.spec import SmartSettings
from guard.judge.deferred import DeferredView, deferred_view
from guard.judge.keys import resolve_model, tiers_for
from guard.judge.model import RetryPolicy, complete
from guard.judge.prompts import (
    TIERS,
    RenderedPrompt,
    TooLongToJudge,
    render_windows,
    window_count,
)
from guard.judge.verdict import ModelVerdict, parse_verdict, parse_verdicts, response_schema, verdicts_schema
from guard.judge.view import session_shown

if TYPE_CHECKING:
    from guard.core.settings import Settings
    from guard.core.spec import HookSpec

__all__ = ["Judgement", "WindowMemo", "judge", "judge_many", "models_for", "window_key"]

_RANK = {"allow": 0, "ask": 1, "deny": 2}


class WindowMemo(Protocol):
    """Where verdicts of single windows are kept, so a window judged once is not paid again (the decision cache)."""

    def lookup(self, key: str) -> dict[str, Any] | None: ...

    def store(self, key: str, value: dict[str, Any]) -> None: ...


@dataclass
class Judgement:
    """The verdict that decided, the tier and prompt behind it, and every call made on the way.

    ``failures`` is non-empty when the verdict stands although some call failed:
    such a judgement is not the whole picture and is not cached.
    """

    verdict: ModelVerdict
    tier: str
    model: str
    prompt: RenderedPrompt
    calls: list[dict[str, Any]] = field(default_factory=list)
    escalated: str | None = None
    failures: list[str] = field(default_factory=list)
    deferred: DeferredView | None = None  # the project files the judge was shown that the call may run unnamed

    @property
    def cost_usd(self) -> float | None:
        """Total cost of the calls made (windows served from the cache cost nothing), or None when any call's model is not priced."""
        paid = [c.get("cost_usd") for c in self.calls if not c.get("cached")]
        return None if None in paid else round(sum(paid), 10)  # type: ignore[arg-type]


@dataclass
class _TierRun:
    """One tier's calls on every window of the event: the verdicts read and the calls that failed."""

    tier: str
    model: str
    verdicts: list[tuple[RenderedPrompt, ModelVerdict]] = field(default_factory=list)
    errors: list[JudgeError] = field(default_factory=list)

    def strictest(self) -> tuple[RenderedPrompt, ModelVerdict] | None:
        return _strictest(self.verdicts)


def _strictest(verdicts: list[tuple[RenderedPrompt, ModelVerdict]]) -> tuple[RenderedPrompt, ModelVerdict] | None:
    """deny over ask over allow; among denies and asks the surest, among allows the least sure (no confidence = least)."""
    if not verdicts:
        return None
    top = max(_RANK[v.decision] for _, v in verdicts)
    same = [pv for pv in verdicts if _RANK[pv[1].decision] == top]

    def sureness(pv: tuple[RenderedPrompt, ModelVerdict]) -> float:
        return -1.0 if pv[1].confidence is None else pv[1].confidence

    return max(same, key=sureness) if top else min(same, key=sureness)


def models_for(spec: HookSpec, settings: Settings) -> dict[str, str]:
    """The model of every tier ``spec`` may call; ModelNotConfigured names what to set when one is missing."""
    models: dict[str, str] = {}
    depth = SmartSettings.of(spec).depth
    for tier in tiers_for(depth):
        model = resolve_model(spec, settings, tier)
        if not model:
            raise ModelNotConfigured(
                f"smart hook {spec.id!r} (depth {depth}) has no model for the {tier} tier: set "
                f"GUARD_MODEL_{tier.upper()} (or models.{tier} in guard.yaml, or model: on the hook); "
                "GUARD_MODEL_QUICK / GUARD_MODEL_THOROUGH take any LiteLLM model id, and GUARD_API_BASE "
                "points them at an OpenAI-compatible server"
            )
        models[tier] = model
    return models


def window_key(settings: Settings, tier: str, model: str, prompt: RenderedPrompt) -> str:
    """A window's verdicts depend on exactly the request: model, endpoint, parameters and messages."""
    request = {
        "tier": tier,
        "model": model,
        "api_base": settings.effective_api_base(),
        "params": TIERS[tier].params(),
        "messages": prompt.messages,
    }
    return cache_key({"v": 1, "kind": "smart-window", **request})


#: What one request answered: each rule's verdict, or why that rule has none.
Answers = dict[str, ModelVerdict | JudgeError]


@dataclass
class _Asker:
    """Everything one judgement's calls share: one rule's, or several rules' judged in the same requests."""

    specs: list[HookSpec]
    settings: Settings
    payload: dict[str, Any]
    deadline: float
    policy: RetryPolicy
    memo: WindowMemo | None
    calls: list[dict[str, Any]] = field(default_factory=list)
    deferred: DeferredView | None = None

    async def ask(
        self, tier: str, model: str, prompt: RenderedPrompt, specs: list[HookSpec], deadline: float
    ) -> Answers:
        """One call on one window for ``specs``; a window judged before comes from the memo.

        One rule: its verdict, or the call's failure raised. Several: each rule's verdict or bad answer (a failed call is raised).
        """
        ids = [spec.id for spec in specs]
        together = len(specs) > 1
        shared = {"rules": ids} if together else {}
        window = {"window": f"{prompt.part}/{prompt.parts}"} if prompt.parts > 1 else {}
        key = window_key(self.settings, tier, model, prompt) if self.memo is not None and prompt.parts > 1 else None
        if key is not None and (hit := self.memo.lookup(key)) is not None:  # type: ignore[union-attr]
            try:
                remembered: Answers = {i: ModelVerdict.model_validate(hit[i] if together else hit) for i in ids}
            except (ValueError, KeyError, TypeError):
                pass  # not this window's verdicts: judge it again
            else:
                self.calls.append(
                    {"tier": tier, "prompt_version": prompt.version, **window, **shared, "model": model, "cached": True}
                )
                return remembered
        custom = not together and SmartSettings.of(specs[0]).prompt is not None
        reasoning = tier == "thorough" and not custom
        profile = TIERS[tier]
        reply = await complete(
            model,
            prompt.messages,
            schema=verdicts_schema(ids, reasoning=reasoning)
            if together
            else response_schema(reasoning=reasoning, ok_shape=custom),
            max_tokens=profile.answer_tokens(len(specs)),
            temperature=profile.temperature,
            deadline=deadline,
            api_base=self.settings.effective_api_base(),
            policy=self.policy,
        )
        self.calls.append({"tier": tier, "prompt_version": prompt.version, **window, **shared, **reply.record()})
        if together:
            answers: Answers = dict(
                parse_verdicts(reply.content, ids, refusal=reply.refusal, finish_reason=reply.finish_reason)
            )
        else:
            answers = {ids[0]: parse_verdict(reply.content, refusal=reply.refusal, finish_reason=reply.finish_reason)}
        if key is not None and all(isinstance(v, ModelVerdict) for v in answers.values()):
            dumped = {i: v.model_dump() for i, v in answers.items() if isinstance(v, ModelVerdict)}
            self.memo.store(key, dumped if together else dumped[ids[0]])  # type: ignore[union-attr]
        return answers

    async def tier(self, tier: str, model: str, specs: list[HookSpec]) -> dict[str, _TierRun]:
        """Judge every window of the event at ``tier`` for ``specs``, concurrently; failures are collected, not raised."""
        runs = {spec.id: _TierRun(tier, model) for spec in specs}
        first, smart = specs[0], SmartSettings.of(specs[0])
        rules = {spec.id: SmartSettings.of(spec).rule or "" for spec in specs} if len(specs) > 1 else None
        try:
            prompts = render_windows(
                tier,
                self.payload,
                rule=smart.rule,
                prompt=smart.prompt,
                session=session_shown(first, self.payload),
                deferred=self.deferred.block if self.deferred is not None else None,
                rules=rules,
            )
        except TooLongToJudge as exc:  # never judged on a partial view, and never allowed for its size
            raise JudgeTooLarge(f"too large to judge: {exc}") from exc
        limit = self.settings.timeout_for(tier)  # a tier's own timeout: quick never eats thorough's time
        deadline = self.deadline if limit is None else min(self.deadline, time.monotonic() + limit)
        if (
            len(prompts) == 1
        ):  # in this task: a gather's task would wait behind every other ready request on a busy service
            results: list[Answers | BaseException] = [
                await _settled(self.ask(tier, model, prompts[0], specs, deadline))
            ]
        else:
            results = await asyncio.gather(
                *(self.ask(tier, model, p, specs, deadline) for p in prompts), return_exceptions=True
            )
        for prompt, result in zip(prompts, results, strict=True):
            if isinstance(result, BaseException) and not isinstance(result, JudgeError):
                raise result
            answers = (
                result if isinstance(result, dict) else {rule: copy.copy(result) for rule in runs}
            )  # each rule's failure is its own
            for rule, answer in answers.items():
                if isinstance(answer, ModelVerdict):
                    runs[rule].verdicts.append((prompt, answer))
                else:
                    runs[rule].errors.append(
                        type(answer)(f"window {prompt.part}/{prompt.parts}: {answer}") if prompt.parts > 1 else answer
                    )
        return runs


async def _settled(answers: Awaitable[Answers]) -> Answers | Exception:
    """``answers``' outcome, an error returned rather than raised (gather's ``return_exceptions`` for one awaitable)."""
    try:
        return await answers
    except Exception as exc:
        return exc


def _escalation(spec: HookSpec, quick: _TierRun) -> str | None:
    """Why quick's answer is not enough (None: it decides)."""
    best = quick.strictest()
    verdict = best[1] if best else None
    threshold = SmartSettings.of(spec).confidence_threshold
    if verdict and verdict.decision == "deny" and verdict.confidence is not None and verdict.confidence >= threshold:
        return None  # a sure deny wins whatever the other windows said
    if quick.errors:
        if all(isinstance(e, JudgeBadResponse) for e in quick.errors):
            return f"quick answer unreadable: {quick.errors[0]}"
        return None  # an outage or timeout: thorough would fare no better; the failure decides
    assert verdict is not None
    if verdict.decision == "ask":
        return "quick answered ask"
    if verdict.confidence is None:
        return "quick gave no usable confidence"
    if verdict.confidence < threshold:
        return f"quick confidence {verdict.confidence:g} < threshold {threshold:g}"
    return None


def _decide(spec: HookSpec, runs: list[_TierRun], calls: list[dict[str, Any]], escalated: str | None) -> Judgement:
    """The last run decides when it is complete; otherwise the strictest verdict of any run stands, or its failure is raised."""
    last = runs[-1]
    if not last.errors:
        prompt, verdict = last.strictest()  # type: ignore[misc]
        return Judgement(_labelled(prompt, verdict), last.tier, last.model, prompt, calls, escalated)
    seen = [(run, pv) for run in runs for pv in run.verdicts]
    standing = _strictest([pv for _, pv in seen])
    if standing is not None:
        prompt, verdict = standing
        if verdict.decision == "deny" or (verdict.decision == "ask" and spec.failure_mode == "fail_open"):
            run = next(r for r, pv in seen if pv is standing)
            failures = [str(e) for r in runs for e in r.errors]
            return Judgement(_labelled(prompt, verdict), run.tier, run.model, prompt, calls, escalated, failures)
    raise last.errors[0]


def _labelled(prompt: RenderedPrompt, verdict: ModelVerdict) -> ModelVerdict:
    """A window's verdict says which part of the event it is about."""
    if prompt.parts == 1:
        return verdict
    return verdict.model_copy(update={"reason": f"[part {prompt.part}/{prompt.parts}] {verdict.reason}".rstrip()})


async def judge(
    spec: HookSpec,
    settings: Settings,
    payload: dict[str, Any],
    *,
    deadline: float,
    policy: RetryPolicy | None = None,
    memo: WindowMemo | None = None,
) -> Judgement:
    """Judge ``payload`` against ``spec`` at its depth before ``deadline`` (``time.monotonic()``).

    Failures raise JudgeError subclasses carrying ``details["calls"]`` (the calls
    made before the failure), so the engine's failure record keeps their cost.
    """
    outcome = (await judge_many([spec], settings, payload, deadline=deadline, policy=policy, memo=memo))[spec.id]
    if isinstance(outcome, JudgeError):
        raise outcome
    return outcome


async def judge_many(
    specs: list[HookSpec],
    settings: Settings,
    payload: dict[str, Any],
    *,
    deadline: float,
    policy: RetryPolicy | None = None,
    memo: WindowMemo | None = None,
) -> dict[str, Judgement | JudgeError]:
    """Judge ``payload`` against every rule of ``specs`` in the same requests: each rule's judgement, or its failure.

    The rules share a depth, models and what they are shown (:func:`guard.hooks.smart.together_key`). Each request
    asks for every rule still undecided; under ``auto`` only the rules quick was unsure of go on to thorough. A failure
    of every rule at once (the event too large) is raised. Each rule's calls are the requests that judged it; a
    request shared by several rules is paid by the first of them and listed for the others with ``shared_with``.
    """
    models = models_for(specs[0], settings)
    asker = _Asker(
        specs, settings, payload, deadline, policy or RetryPolicy(), memo, deferred=deferred_view(specs[0], payload)
    )
    try:
        outcomes = await _judge_at_depth(specs, asker, models)
    except JudgeError as exc:
        exc.details = {"calls": asker.calls}  # type: ignore[attr-defined]
        raise
    for spec in specs:
        outcome = outcomes[spec.id]
        calls = _calls_of(spec.id, asker.calls)
        if isinstance(outcome, Judgement):
            outcome.calls, outcome.deferred = calls, asker.deferred
        else:
            outcome.details = {"calls": calls}  # type: ignore[attr-defined]
    return outcomes


def _calls_of(rule: str, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The calls that judged ``rule``: its own, and the shared ones (paid by the first rule they judged)."""
    mine = []
    for call in calls:
        rules = call.get("rules")
        if rules is None or rules[0] == rule:
            mine.append(call)
        elif rule in rules:
            mine.append({**call, "shared_with": rules[0], "cost_usd": None if call.get("cost_usd") is None else 0.0})
    return mine


def _outcome(spec: HookSpec, runs: list[_TierRun], escalated: str | None) -> Judgement | JudgeError:
    """:func:`_decide`, its failure returned (the other rules of the request still stand)."""
    try:
        return _decide(spec, runs, [], escalated)
    except JudgeError as exc:
        return exc


async def _judge_at_depth(
    specs: list[HookSpec], asker: _Asker, models: dict[str, str]
) -> dict[str, Judgement | JudgeError]:
    """quick or thorough alone, or auto: quick, then thorough for the rules quick was unsure of (or every rule, when the
    event is too long for quick)."""
    depth = SmartSettings.of(specs[0]).depth
    if depth != "auto":
        runs = await asker.tier(depth, models[depth], specs)
        return {spec.id: _outcome(spec, [runs[spec.id]], None) for spec in specs}
    needed = window_count("quick", asker.payload, asker.deferred.block if asker.deferred is not None else None)
    quick: dict[str, _TierRun] = {}
    if needed > TIERS["quick"].max_windows:
        escalated = dict.fromkeys(
            (spec.id for spec in specs),
            f"the event needs {needed} quick windows, more than {TIERS['quick'].max_windows}",
        )
    else:
        quick = await asker.tier("quick", models["quick"], specs)
        escalated = {spec.id: why for spec in specs if (why := _escalation(spec, quick[spec.id])) is not None}
    outcomes = {spec.id: _outcome(spec, [quick[spec.id]], None) for spec in specs if spec.id not in escalated}
    unsure = [spec for spec in specs if spec.id in escalated]
    if unsure:
        thorough = await asker.tier("thorough", models["thorough"], unsure)
        for spec in unsure:
            earlier = [quick[spec.id]] if spec.id in quick else []
            outcomes[spec.id] = _outcome(spec, [*earlier, thorough[spec.id]], escalated[spec.id])
    return outcomes
