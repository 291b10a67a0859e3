"""quick, thorough and auto: which model is asked, with which prompt, and when to escalate.

quick asks the quick model with the short template and no reasoning; thorough
asks the thorough model to reason, then decide; auto asks quick and escalates to
thorough when quick answered ask, was less confident than the hook's threshold,
or gave an unreadable answer. Every call made is recorded (tier, model, latency,
tokens, cost, prompt version) whether or not its verdict was used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from guard.errors import JudgeBadResponse, JudgeError, ModelNotConfigured
from guard.judge.keys import resolve_model, tiers_for
from guard.judge.model import RetryPolicy, complete
from guard.judge.prompts import TIERS, RenderedPrompt, render
from guard.judge.verdict import Verdict, parse_verdict, response_schema

if TYPE_CHECKING:
    from guard.hooks.spec import HookSpec
    from guard.settings import Settings

__all__ = ["Judgement", "judge", "models_for"]


@dataclass
class Judgement:
    """The verdict that decided, the tier and prompt behind it, and every call made on the way."""

    verdict: Verdict
    tier: str
    model: str
    prompt: RenderedPrompt
    calls: list[dict[str, Any]] = field(default_factory=list)
    escalated: str | None = None

    @property
    def cost_usd(self) -> float | None:
        """Total cost, or None when any call's model is not priced (a partial sum would mislead)."""
        costs = [c.get("cost_usd") for c in self.calls]
        return None if not costs or None in costs else round(sum(costs), 10)  # type: ignore[arg-type]


def models_for(spec: HookSpec, settings: Settings) -> dict[str, str]:
    """The model of every tier ``spec`` may call; ModelNotConfigured names what to set when one is missing."""
    models: dict[str, str] = {}
    for tier in tiers_for(spec.depth):
        model = resolve_model(spec, settings, tier)
        if not model:
            raise ModelNotConfigured(
                f"smart hook {spec.id!r} (depth {spec.depth}) has no model for the {tier} tier: set "
                f"GUARD_MODEL_{tier.upper()} (or models.{tier} in guard.yaml, or model: on the hook); "
                "GUARD_MODEL_QUICK / GUARD_MODEL_THOROUGH take any LiteLLM model id, and GUARD_API_BASE "
                "points them at an OpenAI-compatible server"
            )
        models[tier] = model
    return models


async def _ask(tier: str, model: str, spec: HookSpec, settings: Settings, payload: dict[str, Any], calls: list[dict[str, Any]], *, deadline: float, policy: RetryPolicy) -> tuple[Verdict, RenderedPrompt]:
    profile = TIERS[tier]
    rendered = render(tier, payload, rule=spec.rule, prompt=spec.prompt)
    custom = spec.prompt is not None
    reply = await complete(
        model,
        rendered.messages,
        schema=response_schema(reasoning=tier == "thorough" and not custom, ok_shape=custom),
        max_tokens=profile.max_tokens,
        temperature=profile.temperature,
        deadline=deadline,
        api_base=settings.effective_api_base(),
        policy=policy,
    )
    calls.append({"tier": tier, "prompt_version": rendered.version, **reply.record()})
    return parse_verdict(reply.content, refusal=reply.refusal), rendered


def _escalation(spec: HookSpec, verdict: Verdict) -> str | None:
    if verdict.decision == "ask":
        return "quick answered ask"
    if verdict.confidence is not None and verdict.confidence < spec.confidence_threshold:
        return f"quick confidence {verdict.confidence:g} < threshold {spec.confidence_threshold:g}"
    return None


async def judge(spec: HookSpec, settings: Settings, payload: dict[str, Any], *, deadline: float, policy: RetryPolicy | None = None) -> Judgement:
    """Judge ``payload`` against ``spec`` at its depth before ``deadline`` (``time.monotonic()``).

    Failures raise JudgeError subclasses carrying ``details["calls"]`` (the calls
    made before the failure), so the engine's failure record keeps their cost.
    """
    models = models_for(spec, settings)
    policy = policy or RetryPolicy()
    calls: list[dict[str, Any]] = []
    try:
        first = tiers_for(spec.depth)[0]
        escalated: str | None = None
        try:
            verdict, rendered = await _ask(first, models[first], spec, settings, payload, calls, deadline=deadline, policy=policy)
            if spec.depth == "auto":
                escalated = _escalation(spec, verdict)
        except JudgeBadResponse as exc:
            if spec.depth != "auto":
                raise
            escalated = f"quick answer unreadable: {exc}"
        if escalated is None:
            return Judgement(verdict, first, models[first], rendered, calls)
        verdict, rendered = await _ask("thorough", models["thorough"], spec, settings, payload, calls, deadline=deadline, policy=policy)
        return Judgement(verdict, "thorough", models["thorough"], rendered, calls, escalated)
    except JudgeError as exc:
        exc.details = {"calls": calls}  # type: ignore[attr-defined]
        raise
