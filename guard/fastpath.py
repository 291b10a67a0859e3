"""Deciding an event without the engine when that is possible.

Two cases cover most tool calls and need neither asyncio, pydantic nor a model
client: no hook matches (allow at once), or every matching hook is a smart hook
whose verdict is already in the decision cache. Anything else returns None and
the caller runs the full :class:`~guard.engine.Engine`.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from guard.config import LoadedConfig
from guard.decision import Decision, HookResult, guard_stop_loop, merge
from guard.events.names import canonical_event
from guard.hooks.spec import HookSpec
from guard.registry import Registry

__all__ = ["decide_fast"]

log = logging.getLogger("guard.fastpath")


def _cached_results(specs: list[HookSpec], payload: dict[str, Any], loaded: LoadedConfig) -> list[HookResult] | None:
    if any(spec.kind not in ("smart", "protect") for spec in specs):
        return None
    results = []
    try:
        if any(spec.kind == "protect" for spec in specs):
            from guard.hooks.protect import judge

            results = [judge(spec, payload) for spec in specs if spec.kind == "protect"]
            if any(r.decision == "deny" for r in results) or len(results) == len(specs):
                return results  # a deterministic deny needs no cached verdict beside it
        from guard.cache import open_cache
        from guard.judge.keys import result_from_cache, smart_cache_key

        cache = open_cache(loaded.settings)
        if cache is None:
            return None
        for spec in [s for s in specs if s.kind == "smart"]:
            value = cache.get(smart_cache_key(spec, loaded.settings, payload), record_miss=False)
            if value is None:
                return None
            results.append(result_from_cache(spec, value))
    except Exception:  # any trouble: let the engine decide (it treats the cache as optional, and records a hook's crash)
        log.debug("fast path lookup failed", exc_info=True)
        return None
    return results


def decide_fast(payload: dict[str, Any], loaded: LoadedConfig, registry: Registry) -> Decision | None:
    """The decision for ``payload`` if it needs no hook to run, else None."""
    started = time.perf_counter()
    event = canonical_event(str(payload["hook_event_name"]))
    specs = registry.matching(event, payload.get("tool_name"))
    if not specs:
        return Decision()
    results = _cached_results(specs, payload, loaded)
    if results is None:
        return None
    if all(r.decision is None and r.type == "protect" for r in results):
        return Decision()  # only the self-protection hook matched and it had nothing to say: as if no hook matched
    decision = guard_stop_loop(merge(results), event, payload)
    decision.details["latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
    decision.details["fast_path"] = True
    if loaded.settings.audit_path is not None:
        try:
            from guard.audit import open_audit

            open_audit(loaded.settings).record(payload, decision, latency_ms=decision.details["latency_ms"])
        except Exception:
            log.warning("audit log write failed", exc_info=True)
    return decision
