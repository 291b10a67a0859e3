"""The one decision path: an event in, a decision out, every failure under one policy.

``guard hook``, ``guard serve``, ``guard check`` and the Python API all decide
events through a :class:`Gate`, so they agree on what a failure means:

===========================  ====================================================
what went wrong              what the gate answers
===========================  ====================================================
config exists, won't load    tool calls (pre_tool_use, permission_request) are
                             denied with the file, key and line; other events are
                             allowed with a warning (``fail_open_config`` relaxes)
config never trusted         (``pinned``: guard hook, guard serve) as a config that
                             won't load: tool calls denied, saying to run ``guard
                             trust``; its hooks never run (``fail_open_config``
                             relaxes to "nothing enforced", visibly)
trusted config changed       (``pinned``) the trusted copy is enforced; every
                             decision warns which file changed, how to accept it
no config found              allow, with a warning that nothing is enforced
bad payload                  the failure mode of the hooks the event could match
                             (strictest wins): fail_closed denies, fail_open
                             allows with a warning; under a config that is not
                             trusted or does not load, blocked as a tool call
payload too large            denied whatever the failure modes: the agent chose
                             its size
a hook fails / times out     that hook's failure_mode; a fail_open failure is a
                             warning on the decision
the client's deadline        hooks still running fail under their failure_mode
internal error               as a bad payload: never a silent allow
===========================  ====================================================

Warnings are how "allowed, but not judged" stays visible: adapters show them
(Claude Code: ``systemMessage``), the CLI prints them on stderr, and the audit
log keeps them.

The steps, in order: read the payload (:mod:`guard.core.events.payload`), match hooks
once, answer no-match and all-cached events without an event loop (the fast
path: no asyncio, pydantic or model client), then the remote service if one is
configured, then the local engine under the deadline; merge, stop-loop guard and
audit happen here for all of them.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from guard.core.decision import DecidingRule, Decision, HookResult, guard_stop_loop, merge
from guard.core.errors import ConfigError, EventError, EventTooLarge, UntrustedConfig
from guard.core.events.payload import check_fields, event_name, read_json
from guard.core.logs import LazyLogger
from guard.core.session import FILES_FIELD, SESSION_FIELD, reads_session
from guard.core.settings import LoadedConfig, Settings
from guard.core.spec import HookSpec
from guard.runtime.registry import Registry, default_registry

__all__ = ["CONFIG_BLOCKED_EVENTS", "Gate", "answer_by"]

log = LazyLogger("guard.gate")

#: Events a config that cannot be loaded blocks: the calls a guard.yaml exists to guard.
CONFIG_BLOCKED_EVENTS = frozenset({"pre_tool_use", "permission_request"})
_SESSION_WARNING = "guard_session_warning"  # carried on the payload from _prepare to _finish
NO_CONFIG = "no guard config found (--config, $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml): no rule is enforced"


def answer_by(deadline: float | None, started: float) -> float | None:
    """The ``time.monotonic()`` instant to answer by, for a client that kills its hook after ``deadline`` s.

    A margin (10%, at least 0.5 s, at most 3 s) leaves time to write the answer
    and for the process start the clock did not see.
    """
    if not deadline or deadline <= 0:
        return None
    return started + deadline - min(max(deadline * 0.1, 0.5), 3.0)


_UNOPENED = object()


def _strictest_mode(specs: list[HookSpec]) -> str:
    return "fail_closed" if any(s.failure_mode == "fail_closed" for s in specs) else "fail_open"


def _enforced(specs: list[HookSpec]) -> list[HookSpec]:
    """The hooks whose verdict counts: a shadow hook never changes an answer, not even by failing closed."""
    return [s for s in specs if not s.shadow]


class Gate:
    """One loaded config and its registry, deciding events under guard's failure policy.

    A config that exists but does not load is kept as :attr:`config_error`
    instead of raised: the gate then answers events by the policy above. With
    ``pinned`` (``guard hook``, ``guard serve``) the config is the copy the user
    trusted (:mod:`guard.config.pinning`), never the disk as it is now.
    """

    def __init__(
        self,
        config: str | None = None,
        *,
        loaded: LoadedConfig | None = None,
        specs: list[HookSpec] | None = None,
        server: str | None = None,
        fail_closed: bool = False,
        fail_open_config: bool = False,
        env: Mapping[str, str] | None = None,
        pinned: bool = False,
        start_service: bool = True,
    ) -> None:
        self.env = os.environ if env is None else env
        self.config_error: ConfigError | None = None
        #: What differs on disk from the trusted config being enforced, and how to accept it (every decision shows it).
        self.trust_notes: list[str] = []
        if loaded is None:
            try:
                loaded = self._load(config, pinned)
            except ConfigError as exc:
                self.config_error, self.searched, loaded = exc, False, LoadedConfig()
        else:
            self.searched = False
        if specs is not None:
            self.searched = False  # the caller named the hooks (guard check --rule, an SDK)
        self.loaded = loaded
        self.settings: Settings = loaded.settings
        self.registry = Registry([*(loaded.specs if specs is None else specs), *default_registry.specs()])
        #: Whether the hooks are the config's as loaded: only then may a service (which runs the config's own) answer.
        self.config_hooks = specs is None
        self.server = server or self.env.get("GUARD_SERVER") or loaded.settings.server_url
        self.fail_closed = fail_closed
        self.fail_open_config = fail_open_config
        #: Whether ``server.url: auto`` (and a session's start) may launch a background ``guard serve``;
        #: ``guard check`` uses one that runs but starts none (each would idle for 30 minutes).
        self.start_service = start_service
        self._engine: Any = None
        self._fallback_note: str | None = None
        self._sessions: Any = None  # the SessionRecorder, made when a hook reads session context
        self._audit: Any = None  # the audit log and decision cache, opened on first use and kept for the next decision
        self._cache: Any = _UNOPENED
        self._loops = threading.local()  # each thread's event loop for the engine (:meth:`_thread_loop`)
        #: The event being decided, as far as it could be read (what a watchdog renders its answer for).
        self.current: tuple[dict[str, Any], str] = ({"hook_event_name": "(unreadable)"}, "")
        #: Called once before deciding does anything that can wait (a network cache, the service, the engine):
        #: ``guard hook`` arms its watchdog there, so a local cache hit starts no thread.
        self.before_slow_path: Callable[[], None] | None = None

    def _load(self, config: str | None, pinned: bool) -> LoadedConfig:
        from guard.config import find_config, load_config

        if not pinned:
            self.searched = find_config(config) is None
            return load_config(config)
        from guard.config.pinning import load_trusted

        trusted = load_trusted(config)
        self.searched, self.trust_notes = trusted.status == "none", trusted.notes
        if trusted.error is not None:
            raise trusted.error
        return trusted.loaded or LoadedConfig()

    @classmethod
    def for_engine(cls, engine: Any, **options: Any) -> Gate:
        """A gate around an existing engine and its registry (``guard serve``); the gate audits, not the engine."""
        gate = cls(loaded=LoadedConfig(settings=engine.settings), specs=[], **options)
        gate.registry = engine.registry
        engine.audit = False
        gate._engine = engine
        return gate

    def use_model(self, model: str) -> None:
        """Judge every smart hook with ``model`` (both tiers): ``guard check --model``, ``guard eval --model``."""
        self.registry = Registry([s.replace(model=model) if s.kind == "smart" else s for s in self.registry.specs()])
        self.config_hooks = False  # the service would judge with the config's models

    # -- the policy -----------------------------------------------------------------

    def failure(self, error: str, *, event: str | None, specs: list[HookSpec] | None = None, kind: str = "error") -> Decision:
        """The decision when guard could not judge ``event``: the strictest failure mode of its hooks.

        ``specs`` defaults to every hook of ``event`` for any tool (the tool may be
        what could not be read), or every hook when the event itself is unknown.
        An event too large to read (``kind="too_large"``) is refused whatever the modes:
        the agent chose its size, so failing open on it would let the agent choose the answer.
        """
        if kind == "too_large":
            from guard.core.explanation import FAILURE_POLICY

            policy = DecidingRule("guard.failure_policy", "an event too large to judge is refused, whatever the failure mode", FAILURE_POLICY, False, error)
            return Decision("deny", f"guard refuses an event too large to judge, whatever the failure mode (the agent chose its size): {error}",
                            details={"failure": kind, "error": error}, decided_by=[policy])
        if specs is None:
            specs = [s for s in self.registry.specs() if event is None or s.event == event]
        specs = _enforced(specs)
        # a config that is untrusted or does not load has no hooks to take a mode from: it blocks as tool calls are blocked
        config_blocks = self.config_error is not None and not self.fail_open_config and (event is None or event in CONFIG_BLOCKED_EVENTS)
        if self.fail_closed or config_blocks or _strictest_mode(specs) == "fail_closed":
            from guard.core.explanation import FAILURE_POLICY

            ids = ", ".join(s.id for s in specs if s.failure_mode == "fail_closed") or (("an untrusted config" if isinstance(self.config_error, UntrustedConfig) else "a config that does not load") if config_blocks else "--fail-closed")
            reason = f"guard could not judge this call and it is guarded fail_closed ({ids}): {error}"
            policy = DecidingRule("guard.failure_policy", f"a call guard cannot judge is denied ({ids})", FAILURE_POLICY, False, error)
            return Decision("deny", reason, details={"failure": kind, "error": error}, decided_by=[policy])
        warning = f"guard did not judge this {event or 'event'} ({kind}): {error}"
        return Decision(details={"failure": kind, "error": error}, warnings=[warning] if specs else [])

    def _config_failure(self, event: str) -> Decision:
        assert self.config_error is not None
        untrusted = isinstance(self.config_error, UntrustedConfig)
        error = f"config {'not trusted' if untrusted else 'does not load'}: {self.config_error}"
        if event in CONFIG_BLOCKED_EVENTS and not self.fail_open_config:
            until, fix = ("you trust its config", "") if untrusted else ("its config loads", "fix it, or ")
            reason = f"guard blocks tool calls until {until}. {error} ({fix}set GUARD_FAIL_OPEN=1 to run unguarded)"
            by = "trust" if untrusted else "the config check"
            rule = DecidingRule("guard.config", f"guard blocks tool calls until {until}", by, True, f"{error} ({fix}or set GUARD_FAIL_OPEN=1)")
            return Decision("deny", reason, details={"failure": "config"}, decided_by=[rule])
        return Decision(details={"failure": "config"}, warnings=[f"{error}: no rule is enforced"])

    # -- deciding -------------------------------------------------------------------

    def _prepare(self, raw: bytes | str | dict[str, Any], fmt: str | None) -> tuple[dict[str, Any], str, list[HookSpec] | Decision]:
        """Read and match the event: (payload, event, matching specs), or (payload, event, the decision made)."""
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        try:
            data, repaired = read_json(raw)
            if fmt is not None:
                from guard.adapters import adapter

                # a client's own encoding (Copilot's toolArgs is JSON in a string) is checked and repaired once decoded
                data, renormalized = read_json(adapter(fmt).normalize(data, self.env))
                repaired = repaired or renormalized
            event = check_fields(data)
        except EventError as exc:
            event_or_none = _event_or_none(data)
            self.current = (_readable_part(data), event_or_none or "")
            kind = "too_large" if isinstance(exc, EventTooLarge) else "payload"
            return *self.current, self.failure(f"malformed event: {exc}", event=event_or_none, kind=kind)
        data.pop(FILES_FIELD, None)  # the files a judge is shown are read here, never taken from a client
        self.current = (data, event)
        if repaired:
            data["guard_payload_repaired"] = True
        if self.config_error is not None:
            return data, event, self._config_failure(event)
        specs = self.registry.matching(event, data.get("tool_name"), fmt)
        if self._keeps_sessions():
            warning = self._recorder().attach(data, specs)
            if warning:
                data[_SESSION_WARNING] = warning
        else:
            data.pop(SESSION_FIELD, None)  # a session context is never taken from the client
        return data, event, specs if specs else Decision()

    def _keeps_sessions(self) -> bool:
        """Whether any hook reads session context: only then are turns recorded and context attached."""
        return any(reads_session(spec) for spec in self.registry.specs())

    def _recorder(self) -> Any:
        if self._sessions is None:
            from guard.session.recording import SessionRecorder

            self._sessions = SessionRecorder(self.env)
        return self._sessions

    def _finish(self, payload: dict[str, Any], event: str, decision: Decision, started: float, client: str | None = None) -> Decision:
        """Stop-loop guard, warnings, latency and the audit row (naming the ``client`` format): the same for every path."""
        decision = guard_stop_loop(decision, event, payload)
        if decision.decision != "allow":
            from guard.core.explanation import explain

            explain(decision, self.registry.specs())
        if self.searched:
            decision.warnings.append(NO_CONFIG)
        decision.warnings.extend(self.trust_notes)
        if payload.pop("guard_payload_repaired", False):
            decision.details["payload_repaired"] = "invalid UTF-8 or lone surrogates were replaced by U+FFFD"
        decision.details["latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
        served = "server" in decision.details  # the service wrote its own audit row and recorded the turn
        self._session_finish(payload, event, decision, served)
        denied = event == "permission_denied"  # the client's own permission decision: audited even with no hook on it
        if (decision.hooks or "failure" in decision.details or denied) and not served and self.settings.audit_path is not None:
            try:
                row = _client_denial(payload, decision, client) if denied else decision
                self._audit_log().record(payload, row, latency_ms=decision.details["latency_ms"], client=client)
            except Exception:  # the audit log must never change a decision
                log.warning("audit log write failed", exc_info=True)
        return decision

    def _session_finish(self, payload: dict[str, Any], event: str, decision: Decision, served: bool) -> None:
        """Record the turn for later judgements; the decision and audit row name the session context shown, not its text."""
        shown = payload.pop(SESSION_FIELD, None)
        warning = payload.pop(_SESSION_WARNING, None)
        if warning:
            decision.warnings.append(warning)
        if shown is not None:
            decision.details["session"] = {"user_messages": len(shown["user_messages"]), "actions": len(shown["actions"]),
                                           "user_messages_from": self._recorder().source(payload)}
        if not served and self._keeps_sessions():
            self._recorder().record(payload, event, decision)

    def _audit_log(self) -> Any:
        """The audit log: the engine's when there is one (``guard serve`` writes it from a thread), else the gate's own, kept open."""
        from guard.audit import open_audit

        if self._engine is not None:
            return self._engine.ctx.resource("audit", lambda: open_audit(self.settings))
        if self._audit is None:
            self._audit = open_audit(self.settings)
        return self._audit

    def _decision_cache(self) -> Any:
        """The decision cache the fast path reads, opened once per gate (an SDK's gate decides many calls)."""
        if self._engine is not None:
            from guard.cache import open_cache

            return self._engine.ctx.resource("cache", lambda: open_cache(self.settings))
        if self._cache is _UNOPENED:
            from guard.cache import open_cache

            self._cache = open_cache(self.settings)
        return self._cache

    def _cached(self, specs: list[HookSpec], payload: dict[str, Any]) -> list[HookResult] | None:
        """Every hook's verdict without the engine: the self-protection rule's, then the read-only lane's or the decision cache's; None when any must run."""
        if any(spec.kind not in ("smart", "protect") for spec in specs):
            return None
        try:
            results: dict[str, HookResult] = {}
            if any(spec.kind == "protect" for spec in specs):
                from guard.hooks.protect import judge

                results = {spec.id: judge(spec, payload) for spec in specs if spec.kind == "protect"}
                if any(r.decision == "deny" for r in results.values()) or len(results) == len(specs):
                    return list(results.values())  # a deterministic deny needs no cached verdict beside it
            smart = [s for s in specs if s.kind == "smart"]
            if any(spec.skip_read_only for spec in smart):
                from guard.judge.read_only_lane import lane_result

                for spec in smart:
                    lane = lane_result(spec, payload, self.env)
                    if lane is not None:
                        results[spec.id] = lane
            if len(results) == len(specs):
                return [results[spec.id] for spec in specs]  # decided without opening the cache
            from guard.judge.keys import result_from_cache, smart_cache_key

            if not self.settings.cache_url.startswith("sqlite:///"):
                self._slow_path()  # a network cache can hang
            cache = self._decision_cache()
            if cache is None:
                return None
            for spec in [s for s in smart if s.id not in results]:
                value = cache.get(smart_cache_key(spec, self.settings, payload), record_miss=False)
                if value is None:
                    return None
                results[spec.id] = result_from_cache(spec, value)
        except Exception:  # any trouble: the engine decides (the cache is optional there, a hook's crash is recorded)
            log.debug("fast path lookup failed", exc_info=True)
            return None
        return [results[spec.id] for spec in specs]  # in registration order, as the engine reports them

    def decide(self, raw: bytes | str | dict[str, Any], *, fmt: str | None = None, answer_by: float | None = None) -> tuple[dict[str, Any], Decision]:
        """Decide one event synchronously: fast path, then the service, then the engine.

        Returns the payload as read (for the client adapter) and the decision.
        """
        started = time.perf_counter()
        payload, event, prepared = self._prepare(raw, fmt)
        if event == "session_start" and self.config_error is None:
            self._warm_for_session()
        if isinstance(prepared, Decision):
            return payload, self._finish(payload, event, prepared, started, fmt)
        if answer_by is not None:
            from guard.storage.database import BUSY_TIMEOUT_S

            if answer_by - time.monotonic() < 2 * BUSY_TIMEOUT_S:
                # the fast path may wait on a locked SQLite file twice (cache read, audit write): with less
                # time left than that, the watchdog covers the whole decision, not just the slow path
                self._slow_path()
        try:
            cached = self._cached(prepared, payload)
            if cached is not None and all(r.decision is None and r.type == "protect" for r in cached):
                decision = Decision()  # only the self-protection rule matched, with nothing to say: as if no hook matched
            elif cached is not None:
                decision = merge(cached)
                decision.details["fast_path"] = True
            else:
                self._slow_path()
                decision = self._remote(payload, prepared, answer_by, fmt) or self._local(payload, prepared, answer_by)
        except Exception as exc:  # a bug in guard is never a silent allow
            log.debug("deciding %s failed", event, exc_info=True)
            decision = self.failure(f"internal error: {type(exc).__name__}: {exc}", event=event, specs=prepared)
        return payload, self._finish(payload, event, decision, started, fmt)

    def _slow_path(self) -> None:
        if self.before_slow_path is not None:
            call, self.before_slow_path = self.before_slow_path, None
            call()

    async def adecide(
        self, raw: bytes | str | dict[str, Any], *, fmt: str | None = None, answer_by: float | None = None, client: str | None = None
    ) -> tuple[dict[str, Any], Decision]:
        """Decide one event on the running loop with one warm engine (``guard serve``, async agents).

        ``client``: the format an event already normalized came in (for the audit row); ``fmt`` implies it.
        """
        client = fmt or client
        started = time.perf_counter()
        payload, event, prepared = self._prepare(raw, fmt)
        if isinstance(prepared, Decision):
            return payload, self._finish(payload, event, prepared, started, client)
        try:
            decision = await self.engine().decide(payload, specs=prepared, answer_by=answer_by)
        except EventError as exc:
            decision = self.failure(f"malformed event: {exc}", event=event, specs=prepared, kind="payload")
        except Exception as exc:  # a bug in guard is never a silent allow
            log.debug("deciding %s failed", event, exc_info=True)
            decision = self.failure(f"internal error: {type(exc).__name__}: {exc}", event=event, specs=prepared)
        return payload, self._finish(payload, event, decision, started, client)

    def engine(self) -> Any:
        """The engine for this gate's hooks (built once: it keeps the warm model clients)."""
        if self._engine is None:
            from guard.runtime.engine import Engine

            self._engine = Engine(self.settings, self.registry, audit=False)
        return self._engine

    def _thread_loop(self) -> Any:
        """This thread's event loop for the engine, kept across decisions (never closed, so never waiting for
        threads a hung hook left behind): the model client's pooled connections belong to it, so the next
        miss reuses them instead of opening (and leaking) a connection per call."""
        import asyncio

        loop = getattr(self._loops, "loop", None)
        if loop is None or loop.is_closed():
            loop = self._loops.loop = asyncio.new_event_loop()
        return loop

    def close(self) -> None:
        """Close this thread's event loop, shutting its worker threads down without waiting (a one-shot CLI exits next)."""
        loop = getattr(self._loops, "loop", None)
        if loop is not None and not loop.is_closed():
            loop.close()

    def _local(self, payload: dict[str, Any], specs: list[HookSpec], deadline: float | None) -> Decision:
        """Run the engine on this thread's event loop (:meth:`_thread_loop`)."""
        import asyncio

        from guard.core.events.model import parse_event

        try:
            event = parse_event(payload)
        except EventError as exc:
            return self.failure(f"malformed event: {exc}", event=event_name(payload), specs=specs, kind="payload")
        loop = self._thread_loop()
        try:
            # the engine cuts hooks at the deadline itself; this outer bound only catches guard's own hangs
            outer = None if deadline is None else max(deadline - time.monotonic(), 0.0) + 0.25
            decision: Decision = loop.run_until_complete(asyncio.wait_for(self.engine().decide(event, specs=specs, answer_by=deadline), outer))
        except TimeoutError:
            decision = self.failure("the client's hook deadline was reached", event=event.event, specs=specs, kind="deadline")
        finally:
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.wait(pending, timeout=0.2))
        if self._fallback_note:
            decision.details["server_fallback"] = self._fallback_note
        return decision

    def _remote(self, payload: dict[str, Any], specs: list[HookSpec], deadline: float | None, client: str | None = None) -> Decision | None:
        """The service's decision, or None to decide locally (the reason is noted on that decision).

        With no ``server.url`` a service that a session's start launched for this
        config is used; with ``auto`` one is started if none runs. One still
        starting is waited for (it loads the model client once, for every call to
        come) as long as the time left would still let this process run ``specs``
        itself should it not come up: the call is always judged. Hooks the caller
        chose (``guard check --rule``, ``--model``, an SDK's engine) are never sent:
        the service would answer with the config's.
        """
        if not self.config_hooks:
            return None
        from guard.server import autostart
        from guard.server.client import send_event, service_key

        longest = max((s.timeout for s in specs), default=10.0)
        if self.server in (None, "auto"):
            spare = autostart.STARTUP_WAIT if deadline is None else deadline - time.monotonic() - longest
            url = autostart.running_url(self.loaded, wait=max(spare, 0.0))  # it caps the wait at STARTUP_WAIT from the launch
        else:
            url = self.server
        if url is None and self.server is None:
            return None
        timeout = longest + 5
        if deadline is not None:
            timeout = min(timeout, deadline - time.monotonic())
        key = service_key(self.loaded.settings)
        reply = send_event(url, payload, timeout=timeout, key=key, client=client) if url and timeout > 0 else None
        if reply is not None:
            served = Decision.from_dict(reply)
            served.details["server"] = url
            return served
        if self.server == "auto" and not self.start_service:
            self._fallback_note = "no guard serve runs for this config; judged in-process"
        elif self.server == "auto":
            started = autostart.start(self.loaded)
            self._fallback_note = "started guard serve in the background for later calls; judged in-process" if started else "guard serve is starting; judged in-process"
        else:
            self._fallback_note = f"guard serve at {url} unreachable; judged in-process"
        return None

    def _warm_for_session(self) -> None:
        """A session starts: launch this config's warm service in the background and return at once.

        ``guard install`` hooks SessionStart for this, so the session's first judged
        tool call finds a warm judge (no model client import in the hook process).
        """
        if not self.start_service or self.server not in (None, "auto") or not any(s.kind == "smart" for s in self.registry.specs()):
            return
        from guard.server import autostart

        self._slow_path()
        try:
            if autostart.running_url(self.loaded) is None:
                autostart.start(self.loaded)
        except Exception:  # warming is an optimisation: the session's calls are judged in-process instead
            log.warning("could not start the warm service", exc_info=True)


def _event_or_none(data: dict[str, Any]) -> str | None:
    try:
        return event_name(data)
    except EventError:
        return None


def _client_denial(payload: dict[str, Any], decision: Decision, client: str | None) -> Decision:
    """The audit row of a ``permission_denied`` event: the client's deny and its reason, beside any hook's verdict on it."""
    reason = payload.get("reason")
    said = f": {reason}" if isinstance(reason, str) and reason else ""
    return Decision("deny", f"{client or 'the client'} denied this call{said}", hooks=decision.hooks,
                    details={**decision.details, "denied_by": "client"}, warnings=decision.warnings)


def _readable_part(data: dict[str, Any]) -> dict[str, Any]:
    """What can safely be kept of an unreadable event, for the audit log and the adapter."""
    kept: dict[str, Any] = {"hook_event_name": data.get("hook_event_name") if _event_or_none(data) else "(unreadable)"}
    for name in ("session_id", "tool_name", "cwd"):
        value = data.get(name)
        if isinstance(value, str) and len(value) < 1000:
            kept[name] = value.encode("utf-8", "replace").decode("utf-8")
    return kept
