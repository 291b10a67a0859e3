"""Smart hooks: a plain-English rule (or a user's own prompt) judged by a model.

Order of work for one event: the read-only lane when the rule opts in
(:mod:`guard.judge.read_only_lane`: a proven read is allowed, no call), the decision cache (a hit costs no call), then a
single flight (identical concurrent events share one judgement, across a fleet
when the cache is Redis), then the tiers. Only whole judgements are cached (the
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

from guard.cache import open_cache
from guard.cache.singleflight import SingleFlight, once_per_fleet
from guard.core.decision import HookResult
from guard.core.errors import CacheError, JudgeTooLarge, ModelNotConfigured
from guard.judge.keys import cache_value, code_cache_key, result_from_cache, smart_cache_key
from guard.judge.model import RetryPolicy, load_client
from guard.judge.providers import check_models
from guard.judge.tiers import Judgement, judge, models_for

if TYPE_CHECKING:
    from guard.core.events.model import Event
    from guard.core.hook import HookContext
    from guard.core.spec import HookSpec

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
    """Judges events against ``spec.rule`` (or ``spec.prompt``) at ``spec.depth``."""

    def __init__(self, spec: HookSpec, ctx: HookContext) -> None:
        self.spec = spec
        self.ctx = ctx
        self._prefetched: dict[str, dict[str, Any]] = {}  # cache hits read by prepare(), taken by run()
        self._missed: Counter[str] = Counter()  # misses prepare() counted, so run() does not count them again
        self._keyed: dict[int, tuple[Event, dict[str, Any], str]] = {}  # prepare()'s payload and key of an event, taken by run()

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
        return HookResult(self.spec.id, self.spec.kind, decision="deny", reason=reason, latency_ms=round((time.monotonic() - started) * 1000, 3),
                          details={"too_large": str(exc)})

    def _result(self, judgement: Judgement, started: float) -> HookResult:
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
        deferred = judgement.deferred
        if deferred is not None and (deferred.block is not None or deferred.seen):
            block = deferred.block or {}
            details["deferred"] = {"files": [f["path"] for f in block.get("files", [])], "left_out": len(block.get("left_out", [])),
                                   "complete": deferred.complete, "seen": [list(pair) for pair in deferred.seen]}
        return HookResult(
            id=self.spec.id,
            type="smart",
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
        if self.spec.lane is not None and _lane(self.spec, event.payload()) is not None:
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

    async def run(self, event: Event) -> HookResult:
        started = time.monotonic()
        settings = self.ctx.settings
        models_for(self.spec, settings)  # a missing model is a config error, cached or not
        if self.spec.lane is not None:
            lane = _lane(self.spec, event.payload())
            if lane is not None:
                return lane
        payload, key = self._payload_and_key(event, keep=False)
        cache = self._cache()
        hit = self._prefetched.pop(key, None)
        if hit is None:
            counted = self._missed.pop(key, 0)
            if counted > 1:
                self._missed[key] = counted - 1
            hit = self._lookup(cache, key, record_miss=not counted)
        if hit is not None:
            return self._cached(hit, started)
        earlier = self._earlier(cache, payload)
        if earlier is not None:
            return self._cached(earlier, started, reused=True)

        async def judge_and_store() -> tuple[Judgement, float]:
            models = models_for(self.spec, settings)
            check_models(self.spec, settings, models)
            await load_client(models.values(), settings.effective_api_base())  # a no-op after prepare(); the deadline starts once it is done
            judging = time.monotonic()
            deadline = judging + self.spec.timeout - min(_DEADLINE_MARGIN, self.spec.timeout / 20)
            policy = self.ctx.resource("judge_retry", RetryPolicy)
            memo = _CacheMemo(self, cache) if cache is not None else None
            judgement = await judge(self.spec, settings, payload, deadline=deadline, policy=policy, memo=memo)
            if not judgement.failures:
                result = self._result(judgement, judging)
                self._store(cache, key, result)
                if judgement.deferred is None or judgement.deferred.complete:
                    code_key = code_cache_key(self.spec, settings, payload, judged=judgement.deferred.seen if judgement.deferred else [])
                    if code_key is not None:
                        self._store(cache, code_key, result)
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
        # Latency is the judgement's own; loading the client on a cold start is reported apart.
        result = self._result(judgement, max(started, judging))
        if judging - started > 0.005:
            result.details["client_load_ms"] = round((judging - started) * 1000, 3)
        return result
