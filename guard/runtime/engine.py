"""The hook engine: event → matching hooks → concurrent runs → merged decision.

Each hook runs under its own timeout; a crash or timeout in one never touches the
others or the caller. failure_mode decides what a failed hook means: fail_open
abstains (the error stays visible in the decision), fail_closed denies. A
rewritten ``tool_input`` is judged again by every blocking hook before it is
returned, so a rewrite can never slip past a deny.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from guard.audit import open_audit
from guard.core.decision import Decision, HookResult, merge, strictest
from guard.core.errors import GuardError
from guard.core.events.model import Event, parse_event
from guard.core.hook import Hook, HookContext, JudgedTogether
from guard.core.kinds import KINDS, judged, kind_of
from guard.core.settings import Settings
from guard.core.spec import HookSpec, SmartSettings
from guard.runtime.kinds import build
from guard.runtime.registry import Registry
from guard.runtime.settle import audited, settle

__all__ = ["Engine", "apply_rewrites"]

log = logging.getLogger("guard.engine")


def apply_rewrites(original: dict[str, Any] | None, results: list[HookResult]) -> dict[str, Any] | None:
    """Apply every hook's ``updated_input`` in registration order; None when nothing changed.

    Each rewrite is read as "these fields changed from the original", so two hooks
    rewriting different fields both take effect, and a later hook wins a field
    both touched. A shadow hook's rewrite is never applied.
    """
    base = dict(original or {})
    current = dict(base)
    for result in results:
        new = result.updated_input
        if not isinstance(new, dict) or result.shadow:
            continue
        for key in base.keys() - new.keys():
            current.pop(key, None)
        for key, value in new.items():
            if base.get(key, object()) != value:
                current[key] = value
    return current if current != base else None


def _org_last(specs: list[HookSpec], results: list[HookResult]) -> list[HookResult]:
    """The results in the order their rewrites apply: the org policy's last, so no project hook undoes an org rewrite."""
    pairs = list(zip(specs, results, strict=True))
    return [r for s, r in pairs if s.source != "org"] + [r for s, r in pairs if s.source == "org"]


def _budget(timeout: float, answer_by: float | None) -> tuple[float, bool]:
    """The seconds a hook may take: its own timeout or what is left before the deadline; (seconds, cut)."""
    if answer_by is None:
        return timeout, False
    left = max(answer_by - time.monotonic(), 0.0)
    return (left, True) if left < timeout else (timeout, False)


class Engine:
    """Decides events with the hooks of one registry and the services of one settings."""

    def __init__(
        self, settings: Settings | None = None, registry: Registry | None = None, *, audit: bool = True
    ) -> None:
        self.settings = settings or Settings()
        self.registry = registry or Registry()
        self.ctx = HookContext(self.settings)
        self._hooks: dict[HookSpec, Hook] = {}
        #: Whether :meth:`decide` writes an audit row; a gate's calls use :meth:`run`, and the gate writes the row.
        self.audit = audit

    def warm(self) -> list[str]:
        """Load what judging the first event would load, without judging anything; returns the models made ready (routed ids).

        Builds every smart hook and readies the client of each model they may call
        (:func:`guard.judge.model.preload`: the OpenAI transport now, LiteLLM in a
        background thread). ``guard serve`` runs it before it listens, so a
        client's first judged call pays neither. Calls no model.
        """
        smart = [spec for spec in self.registry.specs() if judged(spec.kind)]
        if not smart:
            return []
        from guard.judge.model import preload

        for spec in smart:
            self._hook(spec)
        models = {m for m in (self.settings.model_for("quick"), self.settings.model_for("thorough")) if m}
        models |= {o.model for o in (spec.options for spec in smart) if isinstance(o, SmartSettings) and o.model}
        return preload(models, self.settings.effective_api_base())

    def _hook(self, spec: HookSpec) -> Hook:
        # keyed by the spec itself (frozen, hashable): run-scoped specs that are gone free their hooks too
        if spec not in self._hooks:
            self._hooks[spec] = build(spec, self.ctx)
        return self._hooks[spec]

    async def _run_one(self, spec: HookSpec, event: Event, answer_by: float | None) -> HookResult:
        return (await self._run_set([spec], event, answer_by))[0]

    async def _run_set(self, specs: list[HookSpec], event: Event, answer_by: float | None) -> list[HookResult]:
        """Run one hook, or several of one kind judged together (:class:`~guard.core.hook.JudgedTogether`), under the
        shortest of their timeouts and the client's deadline; each failure is its own hook's, under its failure_mode."""
        started = time.perf_counter()
        cut_by_deadline = True  # while preparing, only the client's deadline can cut the hook
        budget = min(spec.timeout for spec in specs)
        try:
            hooks = [self._hook(spec) for spec in specs]
            # one-off set-up (a smart hook's cache probe and model-client import, seconds on a busy machine)
            # is not judging time: the hook's own timeout starts after it. It is the client's time, so the
            # deadline covers it.
            # asyncio.timeout, not wait_for: the hook runs in this task, not in a new one per step (the service's misses pay for each)
            async with asyncio.timeout(None if answer_by is None else max(answer_by - time.monotonic(), 0.0)):
                for hook in hooks:
                    await hook.prepare(event)
            started = time.perf_counter()
            budget, cut_by_deadline = _budget(budget, answer_by)
            async with asyncio.timeout(budget):
                if len(hooks) == 1:
                    outcomes: list[HookResult | Exception] = [await hooks[0].run(event)]
                else:
                    outcomes = await hooks[0].run_together(hooks, event)  # type: ignore[attr-defined]
        except Exception as exc:  # every hook of the set failed with it
            outcomes = [exc] * len(specs)
        return [
            self._outcome(spec, outcome, started, budget, cut_by_deadline)
            for spec, outcome in zip(specs, outcomes, strict=True)
        ]

    def _outcome(
        self, spec: HookSpec, outcome: HookResult | Exception, started: float, budget: float, cut_by_deadline: bool
    ) -> HookResult:
        """A hook's result, or its failure (a crashing hook is isolated, never the caller's problem)."""
        shown: str | None = None
        if isinstance(outcome, HookResult):
            if outcome.latency_ms is None:
                outcome.latency_ms = round((time.perf_counter() - started) * 1000, 3)
            return outcome
        if isinstance(outcome, TimeoutError):
            if cut_by_deadline:
                error, details = "the client's hook deadline was reached before it answered", {"error_type": "Deadline"}
            else:
                error, details = f"timed out after {budget:g}s", {"error_type": "HookTimeout"}
        elif isinstance(outcome, GuardError):
            error, shown = str(outcome), getattr(outcome, "summary", None)
            # e.g. the model calls made before it failed; error_type lets reports classify failures
            details = {**(getattr(outcome, "details", None) or {}), "error_type": type(outcome).__name__}
        else:
            log.debug("hook %s crashed", spec.id, exc_info=outcome)
            error, details = f"crashed: {type(outcome).__name__}: {outcome}", {"error_type": type(outcome).__name__}
        failed = self._failure(spec, error, started, shown=shown)
        failed.details.update(details)
        return failed

    @staticmethod
    def _failure(spec: HookSpec, error: str, started: float, *, shown: str | None = None) -> HookResult:
        """The failed hook's result; a deny's reason (what the agent reads) says ``shown`` when the error has a summary for it."""
        closed = spec.failure_mode == "fail_closed"
        log.info("hook %s failed (%s): %s", spec.id, spec.failure_mode, error)
        return HookResult(
            id=spec.id,
            type=spec.kind,
            decision="deny" if closed else None,
            reason=f"hook {spec.id} failed and is fail_closed: {shown or error}" if closed else None,
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
            error=error,
        )

    def _sets(self, specs: list[HookSpec], event: Event) -> list[list[HookSpec]]:
        """``specs`` in the sets they run in: hooks whose kind judges several at once, with the same key, together; the rest alone."""
        sets: dict[object, list[HookSpec]] = {}
        for spec in specs:
            together: object = id(spec)
            try:
                hook = self._hook(spec)
                if isinstance(hook, JudgedTogether):
                    together = hook.together_key(event) or together
            except Exception:  # its own run reports the failure
                log.debug("hook %s: no key to judge it with others", spec.id, exc_info=True)
            sets.setdefault(together, []).append(spec)
        return list(sets.values())

    async def _run_all(
        self,
        specs: list[HookSpec],
        event: Event,
        answer_by: float | None,
        known: Mapping[HookSpec, HookResult] | None = None,
    ) -> list[HookResult]:
        known = known or {}
        sets = self._sets([spec for spec in specs if spec not in known], event)
        if (
            len(sets) == 1
        ):  # in this task: a gather's task would wait behind every other ready request on a busy service
            ran = [await self._run_set(sets[0], event, answer_by)]
        else:
            ran = await asyncio.gather(*(self._run_set(one, event, answer_by) for one in sets))
        by_spec = {
            spec: result
            for one, results in zip(sets, ran, strict=True)
            for spec, result in zip(one, results, strict=True)
        }
        self._keep(event, by_spec)
        results = [known[spec] if spec in known else by_spec[spec] for spec in specs]
        for spec, result in zip(specs, results, strict=True):
            result.shadow = spec.shadow
        return results

    def _keep(self, event: Event, ran: Mapping[HookSpec, HookResult]) -> None:
        """Keep the verdicts of kinds that opted into the decision cache (:attr:`guard.core.kinds.Kind.cache`), for the fast path."""
        try:
            kept = [
                (spec, result) for spec, result in ran.items() if KINDS.known(spec.kind) and kind_of(spec.kind).cache
            ]
            if not kept:
                return
            from guard.cache import open_cache
            from guard.judge.keys import keep_verdict

            cache = self.ctx.resource("cache", lambda: open_cache(self.settings))
            for spec, result in kept if cache is not None else ():
                keep_verdict(spec, event.payload(), result, cache)
        except Exception:  # the cache is optional: the verdict stands
            log.warning("decision cache write failed", exc_info=True)

    async def decide(
        self, event: Event | dict[str, Any], *, specs: list[HookSpec] | None = None, answer_by: float | None = None
    ) -> Decision:
        """Decide ``event`` with this engine's hooks: :meth:`run`, then the stop-loop guard, latency and audit row every decision gets.

        No fast path, failure policy or warm service: that is a gate's (:class:`~guard.runtime.gate.Gate`).

        ``answer_by`` (a ``time.monotonic()`` instant) is the client's deadline: a
        hook still running then is a failure under its failure_mode, so the
        caller always answers in time. A malformed event raises :class:`~guard.core.errors.EventError`.
        """
        started = time.perf_counter()
        ev = event if isinstance(event, Event) else parse_event(event)
        if specs is None:
            specs = self.registry.matching(ev.hook_event_name, ev.tool_name)
        payload = ev.payload()
        decision = settle(await self.run(ev, specs, answer_by=answer_by), ev.event, payload, self.registry.specs())
        latency_ms = decision.details["latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
        if self.audit and self.settings.audit_path is not None and audited(decision):
            try:
                self.ctx.resource("audit", lambda: open_audit(self.settings)).record(
                    payload, decision, latency_ms=latency_ms
                )
            except Exception:  # the audit log must never change a decision
                log.warning("audit log write failed", exc_info=True)
        return decision

    async def run(
        self,
        event: Event,
        specs: list[HookSpec],
        *,
        answer_by: float | None = None,
        known: Mapping[HookSpec, HookResult] | None = None,
    ) -> Decision:
        """Run ``specs`` (already matched) on ``event`` concurrently and merge their verdicts, re-judging a rewrite.

        ``known``: verdicts already reached for this very event (the gate's fast path ran the
        self-protection rule and the lanes before it passed the event on); those hooks do not run again.
        No stop-loop guard, latency or audit row: the gate adds them (:meth:`guard.runtime.gate.Gate.finish`).
        """
        results = await self._run_all(specs, event, answer_by, known)
        rewritten = apply_rewrites(event.tool_input, _org_last(specs, results))
        decision = merge(results, updated_input=rewritten)
        if rewritten is not None and decision.decision != "deny":
            decision = await self._recheck(decision, specs, event.with_tool_input(rewritten), answer_by)
        return decision

    async def _recheck(
        self, decision: Decision, specs: list[HookSpec], rewritten: Event, answer_by: float | None
    ) -> Decision:
        """Judge the rewritten input with every blocking hook; their rewrites are not applied again."""
        blocking = [s for s in specs if not s.fire_and_forget]
        again = await self._run_all(blocking, rewritten, answer_by)
        for result in again:
            result.details["recheck"] = True
            result.updated_input = None
        decision.warnings.extend(merge(again).warnings)
        verdicts = [r.decision for r in again if r.decision and not r.shadow]
        final = strictest([decision.decision, *verdicts])
        decision.hooks.extend(again)
        decision.details["rechecked"] = True
        if final != decision.decision:
            decision.decision = final
            decision.reason = (
                "; ".join(
                    f"[{r.id}] rewritten input: {r.reason}"
                    for r in again
                    if r.decision == final and r.reason and not r.shadow
                )
                or None
            )
            if final == "deny":
                decision.updated_input = None
        return decision

    def decide_sync(self, event: Event | dict[str, Any]) -> Decision:
        """Blocking wrapper for scripts and the CLI."""
        return asyncio.run(self.decide(event))
