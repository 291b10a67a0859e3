"""The gate's middle step: who answers a prepared event, tried in order until one does.

:class:`~guard.runtime.gate.Gate` reads and matches an event (prepare), asks its
deciders in turn (decide), then applies the stop-loop guard, warnings, latency and
the audit row (finish). Whoever builds a gate makes its deciders and gives them to
it, in order; the sync and async entry points ask the same ones:

- :class:`FastPath`: no-match and all-cached events, answered without an event
  loop, pydantic or a model client (the self-protection rule, the read-only lane,
  the decision cache);
- the warm service: ``guard serve`` answering for this config. It lives in
  :mod:`guard.server.decider`, a layer above this one, so only a builder that wants
  it (``guard hook``, ``guard check``, ``guard.Gate``) puts it in the sequence; the
  runtime never imports the server, and no import changes what a gate does.
  :class:`OnFirstUse` makes it when an event first reaches it (``guard hook``: a
  call the fast path answers never loads ``guard.server``);
- :class:`LocalEngine`: the hooks run here, under the client's deadline, on the
  :class:`~guard.runtime.engine.Engine` it was given (``guard serve``, ``guard eval``)
  or builds on first use.

A decider returns None to pass the event on; the last one (the local engine) always
answers. :func:`in_process` is the sequence of a gate that decides only in this process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from guard.core.decision import Decision, HookResult, merge
from guard.core.errors import EventError
from guard.core.events.payload import event_name
from guard.core.kinds import kind_of
from guard.core.logs import LazyLogger
from guard.core.spec import HookSpec

if TYPE_CHECKING:
    from guard.cache import DecisionCache
    from guard.runtime.engine import Engine
    from guard.runtime.gate import Gate

__all__ = ["Call", "Decider", "FastPath", "LocalEngine", "OnFirstUse", "in_process"]

log = LazyLogger("guard.gate")


class Call:
    """One prepared event on its way through the deciders (a plain class: ``dataclasses`` would cost the hook path an import)."""

    __slots__ = ("answer_by", "client", "event", "gate", "known", "notes", "payload", "specs")

    def __init__(
        self,
        gate: Gate,
        payload: dict[str, Any],
        event: str,
        specs: list[HookSpec],
        answer_by: float | None = None,
        client: str | None = None,
    ) -> None:
        #: The gate deciding it: its settings, registry, environment and failure policy.
        self.gate = gate
        self.payload = payload
        self.event = event
        self.specs = specs
        #: The client's deadline, a ``time.monotonic()`` instant.
        self.answer_by = answer_by
        #: The client format the event came in (the service's audit row names it).
        self.client = client
        #: Set by a decider that passed the event on, for the decision finally made (why the service did not answer).
        self.notes: dict[str, str] = {}
        #: Verdicts the fast path reached before it passed the event on (the self-protection rule's, a lane's):
        #: the local engine uses them instead of computing them again for the same payload.
        self.known: dict[HookSpec, HookResult] = {}


class Decider(Protocol):
    """Answers a :class:`Call`, or returns None to pass it to the next decider."""

    #: Whether asking it can wait (a network, a process, a model): the gate arms ``before_slow_path`` first.
    slow: bool

    def decide(self, call: Call) -> Decision | None: ...

    async def adecide(self, call: Call) -> Decision | None: ...

    def warm_for_session(self, gate: Gate) -> None:
        """A session starts under ``gate``: get ready for its calls without waiting (the warm service launches)."""


class FastPath:
    """Every matching hook's verdict without the engine: self-protection, then the read-only lane or the decision cache.

    Holds the gate's decision cache open across calls (an SDK's gate decides many);
    once ``local``, the gate's local engine decider, has an engine, the engine's (one
    connection per process). One fast path serves one gate.
    """

    slow = False

    def __init__(self, local: LocalEngine) -> None:
        self.local = local
        self._cache: DecisionCache | None = None
        self._opened = False

    def decide(self, call: Call) -> Decision | None:
        cached = self._verdicts(call)
        if cached is None:
            return None
        if all(r.decision is None for r in cached):
            return (
                Decision()
            )  # only hooks with nothing to say matched (the self-protection rule): as if no hook matched
        decision = merge(cached)
        decision.details["fast_path"] = True
        return decision

    async def adecide(self, call: Call) -> Decision | None:
        return self.decide(call)  # nothing here waits on a loop: the same code answers both entry points

    def warm_for_session(self, gate: Gate) -> None:
        """Nothing to warm: the cache opens with the first call that needs it."""

    def cache(self, gate: Gate) -> DecisionCache | None:
        """The decision cache, opened once: the local engine's when it has one (``guard serve``), else this path's own (None: off)."""
        from guard.cache import open_cache

        engine = self.local.built
        if engine is not None:
            shared: DecisionCache | None = engine.ctx.resource("cache", lambda: open_cache(gate.settings))
            return shared
        if not self._opened:
            self._cache, self._opened = open_cache(gate.settings), True
        return self._cache

    def _verdicts(self, call: Call) -> list[HookResult] | None:
        specs, payload, gate = call.specs, call.payload, call.gate
        try:
            kinds = [kind_of(spec.kind) for spec in specs]
            if not all(kind.fast for kind in kinds):
                return None
            results: dict[str, HookResult] = {}
            for spec, kind in zip(specs, kinds, strict=True):  # the self-protection rule, the lanes, a plugin's own
                verdict = kind.load("verdict")(spec, payload, gate.env) if kind.verdict is not None else None
                if verdict is not None:
                    results[spec.id] = call.known[spec] = verdict
            if any(r.decision == "deny" for r in results.values()) or len(results) == len(specs):
                return [
                    results[spec.id] for spec in specs if spec.id in results
                ]  # a deterministic deny needs no cached verdict
            if not gate.settings.cache_url.startswith("sqlite:///"):
                gate.slow_path()  # a network cache can hang
            cache = self.cache(gate)
            if cache is None:
                return None
            for spec, kind in zip(specs, kinds, strict=True):
                if spec.id in results:
                    continue
                cached = (
                    kind.load("cached_verdict")(spec, gate.settings, payload, cache)
                    if kind.cached_verdict is not None
                    else None
                )
                if cached is None:
                    return None
                results[spec.id] = cached
        except Exception:  # any trouble: the engine decides (the cache is optional there, a hook's crash is recorded)
            log.debug("fast path lookup failed", exc_info=True)
            return None
        return [results[spec.id] for spec in specs]  # in registration order, as the engine reports them


class LocalEngine:
    """The hooks run in this process: on the caller's loop (``adecide``) or on this thread's kept loop (``decide``).

    ``engine``: the one to run them on (``guard serve`` and ``guard eval`` share theirs, and give it to the gate
    too); None builds one on first use, from the gate's settings and registry as they are then, and keeps it (it
    holds the warm model clients). One local engine decider serves one gate.
    """

    slow = True

    def __init__(self, engine: Engine | None = None) -> None:
        #: The engine, once given or built (None before the first event that needed one).
        self.built = engine

    def warm_for_session(self, gate: Gate) -> None:
        """Nothing to warm: the engine is built by the first call that gets this far."""

    def engine(self, gate: Gate) -> Engine:
        if self.built is None:
            from guard.runtime.engine import (
                Engine,
            )  # the engine's modules (asyncio, the hook kinds) stay off the fast path

            self.built = Engine(gate.settings, gate.registry, audit=False)
        return self.built

    async def adecide(self, call: Call) -> Decision:
        from guard.core.events.model import parse_event

        try:
            event = parse_event(call.payload)
        except EventError as exc:
            return call.gate.failure(
                f"malformed event: {exc}", event=event_name(call.payload), specs=call.specs, kind="payload"
            )
        engine = self.engine(call.gate)
        decision: Decision = await engine.run(event, call.specs, answer_by=call.answer_by, known=call.known)
        decision.details.update(call.notes)
        return decision

    def decide(self, call: Call) -> Decision:
        import asyncio

        loop = call.gate.thread_loop()
        # the engine cuts hooks at the deadline itself; this outer bound only catches guard's own hangs
        outer = None if call.answer_by is None else max(call.answer_by - time.monotonic(), 0.0) + 0.25
        try:
            decision: Decision = loop.run_until_complete(asyncio.wait_for(self.adecide(call), outer))
            return decision
        except TimeoutError:
            return call.gate.failure(
                "the client's hook deadline was reached", event=call.event, specs=call.specs, kind="deadline"
            )
        finally:
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.wait(pending, timeout=0.2))


class OnFirstUse:
    """A decider made by ``make`` when an event first reaches it, or a session starts: what it imports stays off the
    path of every call an earlier decider answers (``guard hook``'s warm service: a cache hit never loads ``guard.server``).

    ``slow``: whether the decider it makes can wait, known before it is made.
    """

    def __init__(self, make: Callable[[], Decider], *, slow: bool = True) -> None:
        self.slow = slow
        self._make = make
        self._made: Decider | None = None

    def made(self) -> Decider:
        if self._made is None:
            self._made = self._make()
        return self._made

    def decide(self, call: Call) -> Decision | None:
        return self.made().decide(call)

    async def adecide(self, call: Call) -> Decision | None:
        return await self.made().adecide(call)

    def warm_for_session(self, gate: Gate) -> None:
        self.made().warm_for_session(gate)


def in_process(engine: Engine | None = None) -> tuple[Decider, ...]:
    """The deciders of a gate that decides only in this process: the fast path, then the local engine (on ``engine``,
    shared with whoever gave it, or its own built on first use)."""
    local = LocalEngine(engine)
    return FastPath(local), local
