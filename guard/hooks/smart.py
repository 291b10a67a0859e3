"""Smart hooks: a plain-English rule (or a user's own prompt) judged by a model.

Order of work for one event: the read-only lane when the rule opts in
(:mod:`guard.judge.read_only_lane`: a proven read is allowed, no call), the decision cache (a hit costs no call),
an earlier judgement of the same code (:func:`guard.judge.keys.code_cache_key`: a run of a script unchanged since a
judge saw it, in any spelling), then a single flight (identical concurrent events share one judgement, across a fleet
when the cache is Redis), then the tiers. The smart rules of one event that share a depth, models, context and view of
the deferred code are judged in the same requests (:meth:`SmartHook.run_together`, :func:`guard.judge.tiers.judge_many`),
each verdict cached under its own rule's key. Only whole judgements are cached (the
verdict of each window of a long event too, so a window is not paid twice); a
verdict that stands although a call failed is returned but not cached. Failures
raise JudgeError subclasses and the engine applies the hook's failure_mode — a
smart hook never turns a failure into an allow.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from guard.cache import cache_key, open_cache
from guard.cache.singleflight import SingleFlight, once_per_fleet
from guard.core.decision import HookResult
from guard.core.errors import CacheError, HookError, JudgeError, JudgeTooLarge, ModelNotConfigured
from guard.core.spec import HookSpec, SmartSettings
from guard.judge.deferred import deferred_view
from guard.judge.keys import cache_value, code_cache_key, result_from_cache, smart_cache_key
from guard.judge.model import RetryPolicy, load_client
from guard.judge.providers import check_models
from guard.judge.tiers import Judgement, judge, judge_many, models_for

if TYPE_CHECKING:
    from guard.core.events.model import Event
    from guard.core.hook import HookContext

__all__ = ["SmartHook"]

log = logging.getLogger("guard.hooks.smart")

#: Finish this much before the engine's own timeout, so a slow model surfaces as JudgeTimeout.
_DEADLINE_MARGIN = 0.05
#: A fleet lock outlives the judgement it guards by this much (then a dead holder's key is free again).
_LEASE_MARGIN = 1.0
#: Events whose key prepare() keeps for run() at most (far more than are ever in flight at once).
_KEYED_MAX = 4096


def _lane(spec: HookSpec, payload: dict[str, Any]) -> HookResult | None:
    from guard.judge.read_only_lane import lane_result

    return lane_result(spec, payload)


class _CacheMemo:
    """The decision cache as the judge's memo of single-window verdicts (errors logged, never raised)."""

    def __init__(self, hook: SmartHook, cache: Any) -> None:
        self.hook, self.cache = hook, cache

    def lookup(self, key: str) -> dict[str, Any] | None:
        return self.hook._lookup(self.cache, key)

    def store(self, key: str, value: dict[str, Any]) -> None:
        if self.cache is None:
            return
        try:
            self.cache.set(key, value)
        except CacheError:
            log.warning("decision cache write failed", exc_info=True)


class SmartHook:
    """Judges events against its settings' ``rule`` (or ``prompt``) at their ``depth``."""

    def __init__(self, spec: HookSpec, ctx: HookContext) -> None:
        self.spec = spec
        self.settings = SmartSettings.of(spec)
        self.ctx = ctx
        self._prefetched: dict[str, dict[str, Any]] = {}  # cache hits read by prepare(), taken by run()
        self._missed: Counter[str] = Counter()  # misses prepare() counted, so run() does not count them again
        self._keyed: dict[
            int, tuple[Event, dict[str, Any], str]
        ] = {}  # prepare()'s payload and key of an event, taken by run()

    def _payload_and_key(self, event: Event, *, keep: bool) -> tuple[dict[str, Any], str]:
        """``event``'s payload and cache key, computed once for prepare() and run() (``keep``: prepare() keeps them for run()).

        Held with the event itself, so an id is never mistaken for a later event's; a run()
        that never came (prepare() timed out) leaves its entry, dropped once too many pile up.
        """
        held = self._keyed.pop(id(event), None)
        if held is not None and held[0] is event:
            return held[1], held[2]
        payload = event.payload()
        key = smart_cache_key(self.spec, self.ctx.settings, payload)
        if keep:
            if len(self._keyed) >= _KEYED_MAX:
                self._keyed.clear()
            self._keyed[id(event)] = (event, payload, key)
        return payload, key

    def _cache(self) -> Any:
        return self.ctx.resource("cache", lambda: open_cache(self.ctx.settings))

    def _lookup(self, cache: Any, key: str, *, record_miss: bool = True) -> dict[str, Any] | None:
        try:
            return cache.get(key, record_miss=record_miss) if cache is not None else None
        except CacheError:
            log.warning("decision cache read failed; judging without it", exc_info=True)
            return None

    def _store(self, cache: Any, key: str, result: HookResult) -> None:
        if cache is None:
            return
        try:
            cache.set(key, cache_value(result))
        except CacheError:
            log.warning("decision cache write failed", exc_info=True)

    def _cached(self, hit: dict[str, Any], started: float, *, reused: bool = False) -> HookResult:
        result = result_from_cache(self.spec, hit, reused=reused)
        result.latency_ms = round((time.monotonic() - started) * 1000, 3)
        return result

    def _earlier(self, cache: Any, payload: dict[str, Any]) -> dict[str, Any] | None:
        """An earlier judgement of the same code, whatever the command's spelling (:func:`code_cache_key`), or None."""
        key = code_cache_key(self.spec, self.ctx.settings, payload)
        return self._lookup(cache, key, record_miss=False) if key is not None else None

    def _too_large(self, exc: JudgeTooLarge, started: float) -> HookResult:
        """A deny, not a failure: an event too large for the model to see whole is never allowed on that ground."""
        reason = f"{self.spec.id}: {exc}; a call too large to judge is refused, whatever failure_mode says (split it into smaller calls)"
        return HookResult(
            self.spec.id,
            self.spec.kind,
            decision="deny",
            reason=reason,
            latency_ms=round((time.monotonic() - started) * 1000, 3),
            details={"too_large": str(exc)},
        )

    def _result(self, judgement: Judgement, started: float, together: list[str] | None = None) -> HookResult:
        verdict = judgement.verdict
        details: dict[str, Any] = {
            "prompt_version": judgement.prompt.version,
            "prompt_hash": judgement.prompt.sha256,
            "calls": judgement.calls,
        }
        if verdict.reasoning:
            details["reasoning"] = verdict.reasoning
        if judgement.escalated:
            details["escalated"] = judgement.escalated
        if judgement.prompt.parts > 1:
            details["windows"] = judgement.prompt.parts  # every byte judged, in this many overlapping calls
        if judgement.failures:
            details["failed_calls"] = judgement.failures  # the verdict stands on the calls that answered
        if together:
            details["judged_together"] = together  # one request for these rules' verdicts
        deferred = judgement.deferred
        if deferred is not None and (deferred.block is not None or deferred.seen):
            block = deferred.block or {}
            details["deferred"] = {
                "files": [f["path"] for f in block.get("files", [])],
                "left_out": len(block.get("left_out", [])),
                "complete": deferred.complete,
                "seen": [list(pair) for pair in deferred.seen],
            }
        return HookResult(
            id=self.spec.id,
            type=self.spec.kind,
            decision=verdict.decision,
            reason=verdict.reason or None,
            tier=judgement.tier,
            model=judgement.model,
            confidence=verdict.confidence,
            latency_ms=round((time.monotonic() - started) * 1000, 3),
            cost_usd=judgement.cost_usd,
            details=details,
        )

    async def prepare(self, event: Event) -> None:
        """Work that should not count against the hook's timeout; engines await it before starting the clock.

        Reads the cached verdict, or else loads the model client (seconds, once per
        process): a cold ``guard hook`` must not spend its model budget on imports.
        """
        if self.settings.lane is not None and _lane(self.spec, event.payload()) is not None:
            return
        payload, key = self._payload_and_key(event, keep=True)
        hit = self._lookup(self._cache(), key)
        if hit is not None:
            self._prefetched[key] = hit
            return
        if self._earlier(self._cache(), payload) is not None:
            return  # run() answers from it: no model client needed
        self._missed[key] += 1
        try:
            models = models_for(self.spec, self.ctx.settings)
        except ModelNotConfigured:
            return  # run() reports it
        check_models(self.spec, self.ctx.settings, models)  # no key, no such provider: said now, not after the import
        await load_client(models.values(), self.ctx.settings.effective_api_base())

    def _answered(self, event: Event, started: float) -> tuple[HookResult | None, dict[str, Any], str]:
        """The answer with no model call, if there is one (the lane, the cache, an earlier judgement of the same code),
        and the payload and key a judgement needs otherwise."""
        if self.settings.lane is not None:
            lane = _lane(self.spec, event.payload())
            if lane is not None:
                return lane, {}, ""
        payload, key = self._payload_and_key(event, keep=False)
        cache = self._cache()
        hit = self._prefetched.pop(key, None)
        if hit is None:
            counted = self._missed.pop(key, 0)
            if counted > 1:
                self._missed[key] = counted - 1
            hit = self._lookup(cache, key, record_miss=not counted)
        if hit is not None:
            return self._cached(hit, started), payload, key
        earlier = self._earlier(cache, payload)
        if earlier is not None:
            return self._cached(earlier, started, reused=True), payload, key
        return None, payload, key

    def _kept(
        self,
        cache: Any,
        key: str,
        payload: dict[str, Any],
        judgement: Judgement,
        judging: float,
        together: list[str] | None = None,
    ) -> None:
        """Cache a whole judgement under its key and, when it saw all the code the call may run, under the code's key."""
        if judgement.failures:
            return
        result = self._result(judgement, judging, together)
        self._store(cache, key, result)
        if judgement.deferred is None or judgement.deferred.complete:
            code_key = code_cache_key(
                self.spec, self.ctx.settings, payload, judged=judgement.deferred.seen if judgement.deferred else []
            )
            if code_key is not None:
                self._store(cache, code_key, result)

    async def _ready(self, specs: list[HookSpec]) -> tuple[dict[str, str], float, float]:
        """Load the model client (a no-op after prepare()), then start the clock: (models, when judging began, the deadline)."""
        settings = self.ctx.settings
        models = models_for(specs[0], settings)
        for spec in specs:
            check_models(spec, settings, models)
        await load_client(models.values(), settings.effective_api_base())
        judging = time.monotonic()
        timeout = min(spec.timeout for spec in specs)
        return models, judging, judging + timeout - min(_DEADLINE_MARGIN, timeout / 20)

    def _memo(self, cache: Any) -> _CacheMemo | None:
        return _CacheMemo(self, cache) if cache is not None else None

    async def run(self, event: Event) -> HookResult:
        started = time.monotonic()
        models_for(self.spec, self.ctx.settings)  # a missing model is a config error, cached or not
        answered, payload, key = self._answered(event, started)
        if answered is not None:
            return answered
        return await self._judge_alone(payload, key, started)

    async def _judge_alone(self, payload: dict[str, Any], key: str, started: float) -> HookResult:
        settings = self.ctx.settings
        cache = self._cache()

        async def judge_and_store() -> tuple[Judgement, float]:
            _, judging, deadline = await self._ready([self.spec])
            policy = self.ctx.resource("judge_retry", RetryPolicy)
            judgement = await judge(
                self.spec, settings, payload, deadline=deadline, policy=policy, memo=self._memo(cache)
            )
            self._kept(cache, key, payload, judgement, judging)
            return judgement, judging

        async def judge_once_per_fleet() -> tuple[Judgement, float] | dict[str, Any]:
            return await once_per_fleet(cache, key, judge_and_store, lease=self.spec.timeout + _LEASE_MARGIN)

        flight: SingleFlight[tuple[Judgement, float] | dict[str, Any]] = self.ctx.resource("flight", SingleFlight)
        try:
            outcome = await flight.do(key, judge_once_per_fleet)
        except JudgeTooLarge as exc:
            return self._too_large(exc, started)
        if isinstance(outcome, dict):  # another process judged it while this one waited
            return self._cached(outcome, started)
        judgement, judging = outcome
        return self._timed(self._result(judgement, max(started, judging)), started, judging)

    @staticmethod
    def _timed(result: HookResult, started: float, judging: float) -> HookResult:
        """Latency is the judgement's own; loading the client on a cold start is reported apart."""
        if judging - started > 0.005:
            result.details["client_load_ms"] = round((judging - started) * 1000, 3)
        return result

    # -- several rules, one request ---------------------------------------------------------

    def together_key(self, event: Event) -> str | None:
        """What this rule shares with the rules it may be judged with in one request (None: it is judged apart).

        The same depth, models, endpoint, context and view of the deferred code: the request shows each of them
        exactly what it would show one alone. A user's own prompt and a hook with ``judge_together: false`` are judged apart.
        """
        spec, settings = self.spec, self.settings
        if not settings.judge_together or settings.prompt is not None or not settings.rule:
            return None
        try:
            models = models_for(spec, self.ctx.settings)
        except ModelNotConfigured:
            return None
        deferred = deferred_view(spec, event.payload(), for_key=True)
        return cache_key(
            {
                "event": spec.event,
                "depth": settings.depth,
                "models": models,
                "api_base": self.ctx.settings.effective_api_base(),
                "context": settings.context,
                "deferred": deferred.block if deferred is not None else None,
            }
        )

    async def run_together(self, hooks: list[Any], event: Event) -> list[HookResult | Exception]:
        """Each of ``hooks``' results on ``event`` (hooks with this one's :meth:`together_key`): those the lane, the cache
        or an earlier judgement answer, then the rest judged in the same model requests, each cached on its own."""
        started = time.monotonic()
        outcomes: list[HookResult | Exception | None] = []
        misses: list[tuple[int, SmartHook, dict[str, Any], str]] = []
        for hook in hooks:
            try:
                models_for(hook.spec, hook.ctx.settings)
                answered, payload, key = hook._answered(event, started)
            except Exception as exc:  # this rule's failure; the others still stand
                outcomes.append(exc)
                continue
            outcomes.append(answered)
            if answered is None:
                misses.append((len(outcomes) - 1, hook, payload, key))
        if len(misses) == 1:
            index, hook, payload, key = misses[0]
            try:
                outcomes[index] = await hook._judge_alone(payload, key, started)
            except Exception as exc:
                outcomes[index] = exc
        elif misses:
            for (index, *_), outcome in zip(misses, await self._judge_group(misses, started), strict=True):
                outcomes[index] = outcome
        return [outcome if outcome is not None else HookError("no result") for outcome in outcomes]

    async def _judge_group(
        self, misses: list[tuple[int, SmartHook, dict[str, Any], str]], started: float
    ) -> list[HookResult | Exception]:
        specs = [hook.spec for _, hook, _, _ in misses]
        ids = [spec.id for spec in specs]
        payload = misses[0][2]
        cache = self._cache()

        async def judge_and_store() -> tuple[dict[str, Judgement | JudgeError], float]:
            _, judging, deadline = await self._ready(specs)
            policy = self.ctx.resource("judge_retry", RetryPolicy)
            outcomes = await judge_many(
                specs, self.ctx.settings, payload, deadline=deadline, policy=policy, memo=self._memo(cache)
            )
            for _, hook, hook_payload, key in misses:
                outcome = outcomes[hook.spec.id]
                if isinstance(outcome, Judgement):
                    hook._kept(cache, key, hook_payload, outcome, judging, ids)
            return outcomes, judging

        flight: SingleFlight[tuple[dict[str, Judgement | JudgeError], float]] = self.ctx.resource(
            "flight_together", SingleFlight
        )
        try:
            outcomes, judging = await flight.do("|".join(key for *_, key in misses), judge_and_store)
        except JudgeTooLarge as exc:
            return [hook._too_large(exc, started) for _, hook, _, _ in misses]
        except Exception as exc:  # every rule's failure at once
            return [exc] * len(misses)
        results: list[HookResult | Exception] = []
        for _, hook, _, _ in misses:
            outcome = outcomes[hook.spec.id]
            results.append(
                outcome
                if isinstance(outcome, Exception)
                else hook._timed(hook._result(outcome, max(started, judging), ids), started, judging)
            )
        return results
