"""Smart-hook cache keys and cached results, computable without pydantic, asyncio or LiteLLM.

The ``guard hook`` fast path calls :func:`smart_cache_key` on the raw payload and,
on a hit, :func:`result_from_cache`; the smart hook uses the same two functions,
so both paths agree on what a verdict depends on: the rule or prompt text, the
template versions and hashes, the model of every tier that may run, the endpoint,
the generation parameters, the payload minus volatile fields, the call's effect
as the judge is shown it (it reads the file a write replaces: the same call on a
changed file is judged again), for a call that may run project code unnamed the digests of the changed files the
rule's judges have not seen run (:mod:`guard.judge.deferred`), and for a session-aware rule a digest of exactly
the session context it is shown. :func:`code_cache_key` keys an earlier judgement of the same code, whatever the
command's spelling.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from guard.cache import cache_key, canonical_payload
from guard.core.decision import HookResult
from guard.core.session import FILES_FIELD, SESSION_FIELD, WRITTEN_FIELD
from guard.core.spec import DEPTHS, SmartSettings
from guard.judge.prompts import CUSTOM_TEMPLATE, SESSION_TEMPLATE, TIERS, WINDOW_TEMPLATE, load_template
from guard.judge.view import effect_of, session_shown

if TYPE_CHECKING:
    from collections.abc import Mapping

    from guard.core.settings import Settings
    from guard.core.spec import HookSpec

__all__ = [
    "KEY_VERSION",
    "cache_value",
    "cached_verdict",
    "code_cache_key",
    "keep_verdict",
    "kept_verdict",
    "lane_verdict",
    "resolve_model",
    "result_from_cache",
    "smart_cache_key",
    "tiers_for",
]

KEY_VERSION = 2  # 2: the judge is shown each call's effect (guard.judge.view)


def tiers_for(depth: str) -> tuple[str, ...]:
    """The tiers a depth may call, in order (auto: quick, then thorough when unsure)."""
    if depth not in DEPTHS:
        raise ValueError(f"depth must be one of {', '.join(DEPTHS)}, got {depth!r}")
    return ("quick", "thorough") if depth == "auto" else (depth,)


def resolve_model(spec: HookSpec, settings: Settings, tier: str) -> str | None:
    """The LiteLLM model id for ``tier``: the hook's own model, else GUARD_MODEL_<TIER>, else the config.

    With an OpenAI-compatible endpoint (``GUARD_API_BASE``) a bare model name is
    taken as ``openai/<name>``, which is how LiteLLM addresses such servers.
    """
    model = SmartSettings.of(spec).model or settings.model_for(tier)
    if model and "/" not in model and settings.effective_api_base():
        model = f"openai/{model}"
    return model


def _judged_by(spec: HookSpec, settings: Settings) -> dict[str, Any]:
    """What a verdict of ``spec`` depends on besides the call: the rule, depth, every tier's model, template and parameters, the endpoint."""
    smart = SmartSettings.of(spec)
    tiers: dict[str, Any] = {}
    for tier in tiers_for(smart.depth):
        template = load_template(CUSTOM_TEMPLATE if smart.prompt is not None else TIERS[tier].template)
        tiers[tier] = {
            "model": resolve_model(spec, settings, tier),
            "template": template.version,
            "sha256": template.sha256,
            "params": TIERS[tier].params(),
        }
    window = load_template(WINDOW_TEMPLATE)  # the words sent with every window of a long event
    return {
        "window_template": [window.version, window.sha256],
        "kind": "smart",
        "rule": smart.rule,
        "prompt": smart.prompt,
        "depth": smart.depth,
        "threshold": smart.confidence_threshold if smart.depth == "auto" else None,
        "tiers": tiers,
        "api_base": settings.effective_api_base(),
        **({"apart": True} if not smart.judge_together else {}),
    }


def _session_part(spec: HookSpec, payload: dict[str, Any]) -> dict[str, Any]:
    """A session-aware rule is keyed on exactly the context it is shown; context-free rules keep their key."""
    session = session_shown(spec, payload)
    if session is None:
        return {}
    note = load_template(SESSION_TEMPLATE)
    return {"session": session.digest(), "session_template": [note.version, note.sha256]}


def _deferred_part(spec: HookSpec, payload: dict[str, Any]) -> dict[str, Any]:
    """The deferred code ``spec``'s judge is shown, as the key holds it; nothing when the payload carries no record of
    what the agent wrote (the gate puts one there only for a call that may run project code unnamed)."""
    if WRITTEN_FIELD not in payload:
        return {}
    from guard.judge.deferred import deferred_view  # only such a call loads the deferred view

    deferred = deferred_view(spec, payload, for_key=True)
    return {} if deferred is None else {"deferred": deferred.block}


def smart_cache_key(spec: HookSpec, settings: Settings, payload: dict[str, Any]) -> str:
    """The decision-cache key of ``spec`` judging ``payload``; never raises for a missing model.

    A call that may run project code unnamed is keyed on the changed files this rule's judges have not seen run
    (:mod:`guard.judge.deferred`): the same command after a module it imports changed is judged again.
    """
    smart = SmartSettings.of(spec)
    return cache_key(
        {
            "v": KEY_VERSION,
            **_judged_by(spec, settings),
            "payload": canonical_payload(
                payload, (*smart.cache_ignore, SESSION_FIELD, FILES_FIELD, WRITTEN_FIELD), smart.cache_keep
            ),
            "effect": effect_of(payload, for_key=True),
            **_deferred_part(spec, payload),
            **_session_part(spec, payload),
        }
    )


def code_cache_key(
    spec: HookSpec, settings: Settings, payload: dict[str, Any], *, judged: list[tuple[str, str]] | None = None
) -> str | None:
    """The key of an earlier judgement of the same code (:func:`guard.judge.deferred.code_key_parts`), whatever the
    command's spelling, or None when the call cannot be answered that way."""
    if WRITTEN_FIELD not in payload:
        return None  # no record of what the agent wrote: no identity of the code the call runs
    from guard.judge.deferred import code_key_parts  # only a call that may run what the agent wrote

    code = code_key_parts(spec, payload, judged=judged)
    if code is None:
        return None
    return cache_key(
        {"v": 1, **_judged_by(spec, settings), "kind": "smart-code", **code, **_session_part(spec, payload)}
    )


_CACHED_FIELDS = ("decision", "reason", "confidence", "tier", "model")
#: Details a cached verdict keeps: which prompt judged, the reasoning, the deferred code it covered, the rules judged with it.
_CACHED_DETAILS = ("prompt_version", "prompt_hash", "reasoning", "deferred", "judged_together")


def cache_value(result: HookResult) -> dict[str, Any]:
    """What the cache keeps of a judged result: the verdict and where it came from, never an error."""
    if result.error or result.decision is None:
        raise ValueError("only verdicts are cached")
    value: dict[str, Any] = {name: getattr(result, name) for name in _CACHED_FIELDS}
    value["cost_usd"] = result.cost_usd
    for name in _CACHED_DETAILS:
        if name in result.details:
            value[name] = result.details[name]
    return value


def result_from_cache(spec: HookSpec, value: dict[str, Any], *, reused: bool = False) -> HookResult:
    """A HookResult for a cache hit: no call made, so it cost nothing this time (unknown stays unknown).

    ``reused``: the hit is an earlier judgement of the same code (:func:`code_cache_key`), which the details say.
    """
    details: dict[str, Any] = {k: value[k] for k in _CACHED_DETAILS if k in value}
    if reused:
        details["reused"] = (
            "answered from an earlier judgement of the same code: the script and project files it may run are unchanged since"
        )
        details.pop("deferred", None)  # that judgement's view, not this call's: this call showed nothing new
    details["original_cost_usd"] = value.get("cost_usd")
    return HookResult(
        id=spec.id,
        type=spec.kind,
        cached=True,
        cost_usd=None if value.get("cost_usd") is None else 0.0,
        details=details,
        shadow=spec.shadow,
        **{name: value.get(name) for name in _CACHED_FIELDS},
    )


def lane_verdict(spec: HookSpec, payload: dict[str, Any], env: Mapping[str, str]) -> HookResult | None:
    """A smart hook's allow without a model when its rule opted into a lane (:mod:`guard.judge.read_only_lane`), else None.

    Here rather than there so a rule without a lane never imports the lane's prover on the fast path.
    """
    if SmartSettings.of(spec).lane is None:
        return None
    from guard.judge.read_only_lane import lane_result

    return lane_result(spec, payload, env)


def cached_verdict(spec: HookSpec, settings: Settings, payload: dict[str, Any], cache: Any) -> HookResult | None:
    """A smart hook's verdict for ``payload`` from the decision cache: its own key, else an earlier judgement of the same code."""
    value = cache.get(smart_cache_key(spec, settings, payload), record_miss=False)
    reused = value is None and (code := code_cache_key(spec, settings, payload)) is not None
    if reused:
        value = cache.get(code, record_miss=False)  # an earlier judgement of the same code, in another spelling
    return None if value is None else result_from_cache(spec, value, reused=reused)


def _kept_key(spec: HookSpec, payload: dict[str, Any]) -> str:
    """The key guard keeps a verdict of a kind that opted into the cache under: the kind, its options, the call."""
    return cache_key({"v": 1, "kind": spec.kind, "options": dict(spec.options), "payload": canonical_payload(payload)})


def kept_verdict(spec: HookSpec, settings: Settings, payload: dict[str, Any], cache: Any) -> HookResult | None:
    """The verdict guard kept for a hook whose kind opted into the cache (:attr:`guard.core.kinds.Kind.cache`), or None."""
    value = cache.get(_kept_key(spec, payload), record_miss=False)
    return None if value is None else result_from_cache(spec, value)


def keep_verdict(spec: HookSpec, payload: dict[str, Any], result: HookResult, cache: Any) -> None:
    """Keep ``result`` for :func:`kept_verdict` when it is a verdict (an abstention or a failure is not kept)."""
    if result.decision is not None and not result.error and not result.cached:
        cache.set(_kept_key(spec, payload), cache_value(result))
