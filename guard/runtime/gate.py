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
no config found              allow, with a warning that nothing is enforced; in the
                             ``project`` guard was installed for, as a config that
                             won't load (a ``cd`` must not switch guard off)
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

The steps, in order: prepare (read the payload once, :meth:`Gate.read`; match
hooks once), decide (the first of the deciders its builder gave it that answers,
:mod:`guard.runtime.deciders`: the fast path, which answers no-match and all-cached
events without an event loop, then the warm service when the builder wants it,
then the local engine under the deadline), finish (stop-loop guard, warnings,
latency and the audit row). ``decide`` and ``adecide`` share all three; the gate
builds no decider and no engine, and the engine only runs hooks and merges their verdicts.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from guard.core.decision import DecidingRule, Decision
from guard.core.errors import (
    ConfigError,
    EventError,
    EventTooLarge,
    MissingConfig,
    OrgPolicyError,
    SandboxReplaced,
    UntrustedConfig,
)
from guard.core.events.payload import check_fields, event_name, read_json
from guard.core.logs import LazyLogger
from guard.core.session import FILES_FIELD, SESSION_FIELD, WRITTEN_FIELD, reads_session
from guard.core.settings import LoadedConfig, Settings
from guard.core.spec import HookSpec, SmartSettings
from guard.runtime.deciders import Call, Decider
from guard.runtime.registry import Registry, default_registry
from guard.runtime.settle import audited, settle

if TYPE_CHECKING:
    import asyncio

    from guard.audit import AuditLog
    from guard.audit.writer import BackgroundAudit
    from guard.runtime.engine import Engine
    from guard.session.provenance import Provenance
    from guard.session.recording import SessionRecorder

__all__ = ["CONFIG_BLOCKED_EVENTS", "ConfigFile", "FailurePolicy", "Gate", "ReadEvent", "answer_by"]

log = LazyLogger("guard.gate")

#: Events a config that cannot be loaded blocks: the calls a guard.yaml exists to guard.
CONFIG_BLOCKED_EVENTS = frozenset({"pre_tool_use", "permission_request"})
#: The config failures nothing relaxes (``--fail-open``): each one's ``details.failure``, deciding rule (id, text, by)
#: and what an event that is not a tool call is told.
_UNRELAXED: dict[type[ConfigError], tuple[str, str, str, str, str]] = {
    OrgPolicyError: (
        "org_policy",
        "guard.org_policy",
        "the org policy is enforced as signed, or every tool call is denied",
        "the org policy",
        ": no rule is enforced",
    ),
    SandboxReplaced: (
        "sandbox",
        "guard.client_sandbox",
        "a session keeps the sandbox guard install configured, or every tool call is denied",
        "the sandbox check",
        "; guard blocks its tool calls",
    ),
}
_SESSION_WARNING = "guard_session_warning"  # carried on the payload from _prepare to _finish
_CONFIG_WARNING = (
    "guard_config_warning"  # likewise: a project config that failed while the org policy's hooks still ran
)
_WRITTEN_WARNING = "guard_written_warning"
NO_CONFIG = "no guard config found (--config, $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml): no rule is enforced"


def answer_by(deadline: float | None, started: float) -> float | None:
    """The ``time.monotonic()`` instant to answer by, for a client that kills its hook after ``deadline`` s.

    A margin (10%, at least 0.5 s, at most 3 s) leaves time to write the answer
    and for the process start the clock did not see.
    """
    if not deadline or deadline <= 0:
        return None
    return started + deadline - min(max(deadline * 0.1, 0.5), 3.0)


class ConfigFile(NamedTuple):
    """The config a gate loads itself: ``path`` (else guard's search), and whether it is the copy the user trusted.

    ``pinned`` (``guard hook``, the SDKs): the trusted copy (:mod:`guard.config.pinning`), never the disk as it is
    now. ``project``: the folder ``guard install`` anchored the hook to (``guard hook --project``), where finding no
    config is an error, never "nothing is enforced"; ``elsewhere``: why that anchor is another checkout's (a copied
    ``.codex/hooks.json``), an error as well; ``sandbox_replaced``: why the session's client runs without the sandbox
    guard configured (:class:`~guard.core.errors.SandboxReplaced`).
    """

    path: str | None = None
    pinned: bool = False
    project: str | None = None
    elsewhere: str | None = None
    sandbox_replaced: str | None = None


class FailurePolicy(NamedTuple):
    """What the caller asked of the failure policy beyond the hooks' own modes (``--fail-closed``, ``--fail-open``)."""

    #: Deny every call guard could not judge, whatever its hooks' failure modes.
    fail_closed: bool = False
    #: Let tool calls through (visibly, unguarded) while the project's config is untrusted or does not load.
    fail_open_config: bool = False


#: A gate's config unless its builder names one: guard's usual search, read as it is on disk.
SEARCH = ConfigFile()
#: A gate's failure policy unless its builder asks for more: the hooks' own failure modes decide.
HOOKS_POLICY = FailurePolicy()


class ReadEvent(NamedTuple):
    """An event as :meth:`Gate.read` left it: checked, normalized, repaired (``repaired`` says so)."""

    data: dict[str, Any]
    event: str
    repaired: bool


def _strictest_mode(specs: list[HookSpec]) -> str:
    return "fail_closed" if any(s.failure_mode == "fail_closed" for s in specs) else "fail_open"


def _enforced(specs: list[HookSpec]) -> list[HookSpec]:
    """The hooks whose verdict counts: a shadow hook never changes an answer, not even by failing closed."""
    return [s for s in specs if not s.shadow]


class Gate:
    """One loaded config and its registry, deciding events under guard's failure policy.

    ``config`` is the config to load (:class:`ConfigFile`), or one already loaded. A
    config that exists but does not load is kept as :attr:`config_error` instead of
    raised: the gate then answers events by the policy above.

    Its builder gives it its parts: ``deciders``, asked in order (:mod:`guard.runtime.deciders`:
    the fast path, the warm service where the builder wants it, the local engine, which
    always answers); ``engine``, the engine the builder gave the local engine decider
    (``guard serve``, ``guard eval``), whose settings, registry and audit log the gate
    shares; ``specs``, the hooks the caller chose instead of the config's (``guard check
    --rule``, an SDK). What the gate does itself stays here: the failure ``policy``, the
    audit row (``audit``: off for ``guard eval``), and ``given_context`` (keep the session
    context and files the caller put on the payload, an eval case's world, instead of
    dropping them as a client's; no turn is recorded then).
    """

    def __init__(
        self,
        config: ConfigFile | LoadedConfig = SEARCH,
        *,
        deciders: Sequence[Decider],
        engine: Engine | None = None,
        specs: list[HookSpec] | None = None,
        env: Mapping[str, str] | None = None,
        policy: FailurePolicy = HOOKS_POLICY,
        audit: bool = True,
        given_context: bool = False,
    ) -> None:
        self.env = os.environ if env is None else env
        self.config_error: ConfigError | None = None
        #: What differs on disk from the trusted config being enforced, and how to accept it (every decision shows it).
        self.trust_notes: list[str] = []
        if engine is not None:
            config, specs = LoadedConfig(settings=engine.settings), []
        if isinstance(config, ConfigFile):
            try:
                if (
                    config.elsewhere
                ):  # anchored to another checkout (guard.adapters.checkout): its config is not this one's
                    raise MissingConfig(config.elsewhere)
                if config.sandbox_replaced:
                    raise SandboxReplaced(config.sandbox_replaced)
                loaded = self._load(config)
            except ConfigError as exc:
                self.config_error, self.searched, loaded = exc, False, _org_alone(exc)
        else:
            loaded, self.searched = config, False
        if specs is not None:
            self.searched = False  # the caller named the hooks (guard check --rule, an SDK)
        self.loaded = loaded
        self.settings: Settings = loaded.settings
        self.registry = (
            engine.registry
            if engine is not None
            else Registry([*(loaded.specs if specs is None else specs), *default_registry.specs()])
        )
        #: Whether the hooks are the config's as loaded: only then may a service (which runs the config's own) answer.
        self.config_hooks = specs is None
        self.policy = policy
        #: Write the audit row of each decision (``guard eval`` judges its cases with the audit log off).
        self.audit = audit
        #: Keep the session context and files the caller put on the payload (an eval case's world) instead of
        #: dropping them as a client's; no turn is recorded then.
        self.given_context = given_context
        #: Asked in order until one answers; the last always does.
        self.deciders = tuple(deciders)
        self._sessions: SessionRecorder | None = None  # made when a hook reads session context
        self._written: Provenance | None = (
            None  # the record of what the agent wrote, made when a smart rule judges tool calls
        )
        self._audit: AuditLog | BackgroundAudit | None = (
            None  # opened on first use and kept: from the second row on, its writer thread
        )
        self._audit_closing: weakref.finalize[[], Gate] | None = (
            None  # drains that writer at close() or interpreter exit
        )
        self._audit_lock = threading.Lock()
        self._shared = engine  # a given engine's audit log is the one written (guard serve's writer thread)
        self._wrote_audit = False  # this gate wrote a row itself: what :meth:`ship_audit` ships
        self._loops = threading.local()  # each thread's event loop for the engine (:meth:`_thread_loop`)
        #: The event being decided, as far as it could be read (what a watchdog renders its answer for).
        self.current: tuple[dict[str, Any], str] = ({"hook_event_name": "(unreadable)"}, "")
        #: The current call's decision once made, while its audit row is written; or that a person is being asked about it
        #: (``on_ask: approval``). What :meth:`deadline_answer` gives a watchdog that fires meanwhile.
        self.made: Decision | None = None
        self.asking_a_person = False
        #: Called once before deciding does anything that can wait (a network cache, the service, the engine):
        #: ``guard hook`` arms its watchdog there, so a local cache hit starts no thread.
        self.before_slow_path: Callable[[], None] | None = None

    def _load(self, source: ConfigFile) -> LoadedConfig:
        config, project = source.path, source.project
        if not source.pinned:  # the disk's config (guard check): each pass imports only its own steps
            from guard.config.loading import load_config
            from guard.config.search import find_config

            self.searched = find_config(config) is None
            loaded = load_config(config)
            self.searched = (
                self.searched and loaded.settings.org_policy is None
            )  # where the org policy applies, something is enforced
            return loaded
        from guard.config.pinning import accept_command, load_trusted

        if project is not None and config is None and not os.path.isdir(project):
            raise MissingConfig(
                f"guard was installed for {project}, which is not a folder here: reinstall guard from the project"
                " (guard install claude), or remove its hooks"
            )
        trusted = load_trusted(config)
        self.searched, self.trust_notes = trusted.status == "none", trusted.notes
        if trusted.error is not None:
            raise trusted.error
        if self.searched and project is not None:
            raise MissingConfig(
                f"guard was installed for {project}, but finds no config there (guard.yaml, .guard/guard.yaml) and none"
                f" was trusted for it. Write one (guard init) and run `{accept_command(config)}` in a terminal, or"
                " remove guard's hooks (guard install claude --uninstall)"
            )
        return trusted.loaded or LoadedConfig()

    def use_model(self, model: str) -> None:
        """Judge every smart hook with ``model`` (both tiers): ``guard check --model``, ``guard eval --model``."""
        self.registry = Registry(
            [
                s.replace(options=s.options.replace(model=model)) if isinstance(s.options, SmartSettings) else s
                for s in self.registry.specs()
            ]
        )
        self.config_hooks = False  # the service would judge with the config's models

    # -- the policy -----------------------------------------------------------------

    def failure(
        self, error: str, *, event: str | None, specs: list[HookSpec] | None = None, kind: str = "error"
    ) -> Decision:
        """The decision when guard could not judge ``event``: the strictest failure mode of its hooks.

        ``specs`` defaults to every hook of ``event`` for any tool (the tool may be
        what could not be read), or every hook when the event itself is unknown.
        An event too large to read (``kind="too_large"``) is refused whatever the modes:
        the agent chose its size, so failing open on it would let the agent choose the answer.
        """
        if kind == "too_large":
            from guard.core.explanation import FAILURE_POLICY

            policy = DecidingRule(
                "guard.failure_policy",
                "an event too large to judge is refused, whatever the failure mode",
                FAILURE_POLICY,
                False,
                error,
            )
            return Decision(
                "deny",
                f"guard refuses an event too large to judge, whatever the failure mode (the agent chose its size): {error}",
                details={"failure": kind, "error": error},
                decided_by=[policy],
            )
        if specs is None:
            specs = [s for s in self.registry.specs() if event is None or s.event == event]
        specs = _enforced(specs)
        # a config that is untrusted or does not load has no hooks to take a mode from: it blocks as tool calls are blocked
        config_blocks = (
            self.config_error is not None
            and not self._config_relaxed()
            and (event is None or event in CONFIG_BLOCKED_EVENTS)
        )
        if self.policy.fail_closed or config_blocks or _strictest_mode(specs) == "fail_closed":
            from guard.core.explanation import FAILURE_POLICY

            ids = ", ".join(s.id for s in specs if s.failure_mode == "fail_closed") or (
                self._failed_config() if config_blocks else "--fail-closed"
            )
            reason = f"guard could not judge this call and it is guarded fail_closed ({ids}): {error}"
            policy = DecidingRule(
                "guard.failure_policy", f"a call guard cannot judge is denied ({ids})", FAILURE_POLICY, False, error
            )
            return Decision("deny", reason, details={"failure": kind, "error": error}, decided_by=[policy])
        warning = f"guard did not judge this {event or 'event'} ({kind}): {error}"
        return Decision(details={"failure": kind, "error": error}, warnings=[warning] if specs else [])

    def deadline_answer(self, error: str) -> Decision:
        """What ``guard hook``'s watchdog answers when the client's deadline comes: the decision if it was made already, a deny
        while a person is being asked (an approval no one gave is never an allow), else the failure policy."""
        if self.made is not None:
            return self.made
        if self.asking_a_person:
            from guard.runtime.approval import unanswered

            return unanswered(error)
        _, event = self.current
        return self.failure(error, event=event or None, kind="deadline")

    def _failed_config(self) -> str:
        if isinstance(self.config_error, OrgPolicyError):
            return "an org policy that cannot be enforced"
        if isinstance(self.config_error, SandboxReplaced):
            return "a session without guard's sandbox"
        return (
            "an untrusted config" if isinstance(self.config_error, UntrustedConfig) else "a config that does not load"
        )

    def _config_relaxed(self) -> bool:
        """Whether the config failure lets calls through (``--fail-open``): a project's may, those of :data:`_UNRELAXED` never."""
        return self.policy.fail_open_config and not isinstance(self.config_error, tuple(_UNRELAXED))

    def _config_failure(self, event: str) -> Decision:
        assert self.config_error is not None
        for kind, (failure, rule_id, rule_text, by, unblocked) in _UNRELAXED.items():
            if not isinstance(self.config_error, kind):
                continue
            if event not in CONFIG_BLOCKED_EVENTS:
                return Decision(details={"failure": failure}, warnings=[f"{self.config_error}{unblocked}"])
            rule = DecidingRule(rule_id, rule_text, by, True, str(self.config_error))
            reason = f"guard blocks tool calls: {self.config_error}"
            return Decision("deny", reason, details={"failure": failure}, decided_by=[rule])
        untrusted, missing = (
            isinstance(self.config_error, UntrustedConfig),
            isinstance(self.config_error, MissingConfig),
        )
        error = (
            f"config {'not trusted' if untrusted else 'missing' if missing else 'does not load'}: {self.config_error}"
        )
        if event in CONFIG_BLOCKED_EVENTS and not self.policy.fail_open_config:
            until, fix = (
                ("you trust its config", "")
                if untrusted
                else ("it finds its config", "")
                if missing
                else ("its config loads", "fix it, or ")
            )
            reason = f"guard blocks tool calls until {until}. {error} ({fix}set GUARD_FAIL_OPEN=1 to run unguarded)"
            by = "trust" if untrusted else "the config check"
            rule = DecidingRule(
                "guard.config",
                f"guard blocks tool calls until {until}",
                by,
                True,
                f"{error} ({fix}or set GUARD_FAIL_OPEN=1)",
            )
            return Decision("deny", reason, details={"failure": "config"}, decided_by=[rule])
        enforced = (
            "only the org policy's rules are enforced" if self.loaded.settings.org_policy else "no rule is enforced"
        )
        if not self.policy.fail_open_config:
            enforced += ", and tool calls are blocked"  # what the session's first message must not leave out
        return Decision(details={"failure": "config"}, warnings=[f"{error}: {enforced}"])

    # -- deciding -------------------------------------------------------------------

    def read(
        self, raw: bytes | str | dict[str, Any], fmt: str | None = None, *, env: Mapping[str, str] | None = None
    ) -> ReadEvent:
        """The one parse: JSON within the size and depth limits, the client's shape (``fmt``) normalized, guard's fields checked.

        Raises :class:`EventError` (:class:`EventTooLarge` for size and depth).
        ``guard serve`` reads its request bodies here, answering 400 or 413 itself,
        and passes the result on, so nothing is read twice. ``env``: the client's
        environment for normalizing (the service has none of its callers').
        """
        read = self._read(raw, fmt, self.env if env is None else env)[1]
        if isinstance(read, EventError):
            raise read
        return read

    def _read(
        self, raw: bytes | str | dict[str, Any], fmt: str | None, env: Mapping[str, str]
    ) -> tuple[dict[str, Any], ReadEvent | EventError]:
        """(what could be read, the event or why it is unreadable): the failure policy looks at what could be read."""
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        try:
            data, repaired = read_json(raw)
            if fmt is not None:
                from guard.adapters import adapter

                # a client's own encoding (Copilot's toolArgs is JSON in a string) is checked and repaired once decoded
                data, renormalized = read_json(adapter(fmt).normalize(data, env))
                repaired = repaired or renormalized
            return data, ReadEvent(data, check_fields(data), repaired)
        except EventError as exc:
            return data, exc

    def _prepare(
        self, raw: bytes | str | dict[str, Any] | ReadEvent, fmt: str | None
    ) -> tuple[dict[str, Any], str, list[HookSpec] | Decision]:
        """Read and match the event: (payload, event, matching specs), or (payload, event, the decision made)."""
        data, read = (raw.data, raw) if isinstance(raw, ReadEvent) else self._read(raw, fmt, self.env)
        if isinstance(read, EventError):
            event_or_none = _event_or_none(data)
            self.current = (_readable_part(data), event_or_none or "")
            kind = "too_large" if isinstance(read, EventTooLarge) else "payload"
            return *self.current, self.failure(f"malformed event: {read}", event=event_or_none, kind=kind)
        data, event = read.data, read.event
        if not self.given_context:
            data.pop(FILES_FIELD, None)  # the files a judge is shown are read here, never taken from a client
        self.current = (data, event)
        if read.repaired:
            data["guard_payload_repaired"] = True
        if self.config_error is not None:
            failed = self._config_failure(event)
            if failed.decision == "deny" or not self.loaded.settings.org_policy:
                return data, event, failed
            # the project's config failed, not the org's: the org policy's hooks still judge what is let through
            data[_CONFIG_WARNING] = failed.warnings
        specs = self.registry.matching(event, data.get("tool_name"), fmt)
        if self.given_context:
            pass  # the caller's own world (an eval case's session and files): kept as given, nothing recorded
        elif self._keeps_sessions():
            warning = self._recorder().attach(data, specs)
            if warning:
                data[_SESSION_WARNING] = warning
        else:
            data.pop(SESSION_FIELD, None)  # a session context is never taken from the client
        if not self.given_context:
            data.pop(WRITTEN_FIELD, None)  # nor a record of what the agent wrote
            if specs and self._keeps_written():
                warning = self._provenance().attach(data, specs)
                if warning:
                    data[_WRITTEN_WARNING] = warning
        return data, event, specs if specs else Decision()

    def _keeps_sessions(self) -> bool:
        """Whether any hook reads session context: only then are turns recorded and context attached."""
        return any(reads_session(spec) for spec in self.registry.specs())

    def _keeps_written(self) -> bool:
        """Whether a smart rule judges tool calls: only then is what the agent writes recorded (:mod:`guard.session.provenance`)."""
        return any(s.event == "pre_tool_use" and isinstance(s.options, SmartSettings) for s in self.registry.specs())

    def _provenance(self) -> Provenance:
        if self._written is None:
            from guard.session.provenance import Provenance

            self._written = Provenance(self.env, lambda: self._own_files)
        return self._written

    @functools.cached_property
    def _own_files(self) -> frozenset[str]:
        """guard's cache and audit files (with SQLite's side files): never a change the agent made, wherever the config puts them."""
        url = self.settings.cache_url
        files = [
            str(self.settings.path(f))
            for f in (url[len("sqlite:///") :] if url.startswith("sqlite:///") else None, self.settings.audit_path)
            if f
        ]
        return frozenset(f + suffix for f in files for suffix in ("", "-wal", "-shm", "-journal"))

    def _recorder(self) -> SessionRecorder:
        if self._sessions is None:
            from guard.session.recording import SessionRecorder

            self._sessions = SessionRecorder(self.env)
        return self._sessions

    def finish(
        self, payload: dict[str, Any], event: str, decision: Decision, started: float, client: str | None = None
    ) -> Decision:
        """Stop-loop guard, warnings, latency and the audit row (naming the ``client`` format): once, for every decider.

        ``started``: the ``time.perf_counter()`` the decision began at.
        """
        decision = settle(decision, event, payload, self.registry.specs())
        if self.searched:
            decision.warnings.append(NO_CONFIG)
        decision.warnings.extend(payload.pop(_CONFIG_WARNING, None) or ())
        decision.warnings.extend(self.trust_notes)
        if payload.pop("guard_payload_repaired", False):
            decision.details["payload_repaired"] = "invalid UTF-8 or lone surrogates were replaced by U+FFFD"
        decision.details["latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
        served = "server" in decision.details  # the service wrote its own audit row and recorded the turn
        self._session_finish(payload, event, decision, served)
        denied = event == "permission_denied"  # the client's own permission decision: audited even with no hook on it
        if (audited(decision) or denied) and not served and self.audit and self.settings.audit_path is not None:
            try:
                row = _client_denial(payload, decision, client) if denied else decision
                self._audit_log().record(payload, row, latency_ms=decision.details["latency_ms"], client=client)
                self._wrote_audit = self._shared is None
            except Exception:  # the audit log must never change a decision
                log.warning("audit log write failed", exc_info=True)
        return decision

    def _session_finish(self, payload: dict[str, Any], event: str, decision: Decision, served: bool) -> None:
        """Record the turn for later judgements; the decision and audit row name the session context shown, not its text."""
        if self.given_context:
            return
        shown = payload.pop(SESSION_FIELD, None)
        warning = payload.pop(_SESSION_WARNING, None)
        if warning:
            decision.warnings.append(warning)
        if shown is not None:
            decision.details["session"] = {
                "user_messages": len(shown["user_messages"]),
                "actions": len(shown["actions"]),
                "user_messages_from": self._recorder().source(payload),
            }
        if not served and self._keeps_sessions():
            self._recorder().record(payload, event, decision)
        warning = payload.pop(_WRITTEN_WARNING, None)
        if warning:
            decision.warnings.append(warning)
        if not served and self._keeps_written():
            self._provenance().record(payload, event, decision, self.registry.specs())
        payload.pop(WRITTEN_FIELD, None)

    def _audit_log(self) -> AuditLog | BackgroundAudit:
        """The audit log: a given engine's (``guard serve`` writes it from a thread), else the gate's own, kept open.

        The gate's first row is written here and now, so a one-shot process
        (``guard hook``, ``guard check``) starts no thread and has its row on disk
        before it exits. A gate that decides again lives on (an SDK's): its rows
        go to one writer thread (:mod:`guard.audit.writer`), drained by
        :meth:`close` or at interpreter exit.
        """
        from guard.audit import open_audit

        if self._shared is not None:
            shared: AuditLog | BackgroundAudit = self._shared.ctx.resource("audit", lambda: open_audit(self.settings))
            return shared
        with self._audit_lock:
            if self._audit is None:
                self._audit = open_audit(self.settings)
            elif self._audit_closing is None:
                from guard.audit.writer import BackgroundAudit

                self._audit = BackgroundAudit(self._audit, self.settings)
                self._audit_closing = weakref.finalize(self, self._audit.close)
            return self._audit

    def _start(
        self,
        raw: bytes | str | dict[str, Any] | ReadEvent,
        fmt: str | None,
        answer_by: float | None,
        client: str | None,
    ) -> tuple[dict[str, Any], str, Call | Decision]:
        """Prepare: (payload, event, the event as a :class:`Call` for the deciders or the decision already made)."""
        payload, event, prepared = self._prepare(raw, fmt)
        if event == "session_start" and self.config_error is None:
            for decider in self.deciders:
                decider.warm_for_session(self)
        if isinstance(prepared, Decision):
            return payload, event, prepared
        if answer_by is not None:
            from guard.storage.database import BUSY_TIMEOUT_S

            if answer_by - time.monotonic() < 2 * BUSY_TIMEOUT_S:
                # the fast path may wait on a locked SQLite file twice (cache read, audit write): with less
                # time left than that, the watchdog covers the whole decision, not just the slow path
                self.slow_path()
        return payload, event, Call(self, payload, event, prepared, answer_by, client)

    def _failed(self, call: Call, exc: Exception) -> Decision:
        log.debug("deciding %s failed", call.event, exc_info=True)
        if isinstance(exc, EventError):
            return self.failure(f"malformed event: {exc}", event=call.event, specs=call.specs, kind="payload")
        return self.failure(
            f"internal error: {type(exc).__name__}: {exc}", event=call.event, specs=call.specs
        )  # a bug in guard is never a silent allow

    def decide(
        self,
        raw: bytes | str | dict[str, Any] | ReadEvent,
        *,
        fmt: str | None = None,
        answer_by: float | None = None,
        client: str | None = None,
    ) -> tuple[dict[str, Any], Decision]:
        """Decide one event synchronously: prepare, the first decider that answers, finish.

        Returns the payload as read (for the client adapter) and the decision.
        ``client``: the format an event already normalized came in (for the audit row); ``fmt`` implies it.
        """
        started = time.perf_counter()
        self.made, self.asking_a_person = None, False
        payload, event, call = self._start(raw, fmt, answer_by, fmt or client)
        if isinstance(call, Decision):
            self.made = call
            return payload, self.finish(payload, event, call, started, fmt or client)
        decision: Decision | None = None
        try:
            for decider in self.deciders:
                if decider.slow:
                    self.slow_path()
                decision = decider.decide(call)
                if decision is not None:
                    break
        except Exception as exc:
            decision = self._failed(call, exc)
        assert decision is not None  # the last decider (the local engine) always answers
        if decision.decision == "ask":
            decision = self._approved(call, decision)
        self.made = decision
        return call.payload, self.finish(call.payload, call.event, decision, started, call.client)

    def _approved(self, call: Call, decision: Decision) -> Decision:
        """An ask from hooks with ``on_ask: approval``, answered by a person while the call waits (:mod:`guard.runtime.approval`)."""
        from guard.runtime import approval

        specs = approval.asking(decision, call.event, self.registry.specs())
        if not specs:
            return decision
        self.slow_path()
        self.asking_a_person = True
        try:
            pending = approval.open_request(self.settings, call.payload, specs, decision, call.answer_by)
        except Exception as exc:  # no request, no one to answer: an ask nobody can answer is a deny
            return _unopened(decision, exc)
        try:
            return approval.settle(decision, specs, pending, approval.wait(pending))
        except Exception as exc:  # the store failed mid-wait: an approval no one could give is a deny, never the failure policy's allow
            return approval.store_failed(pending, exc)

    async def _aapproved(self, call: Call, decision: Decision) -> Decision:
        """:meth:`_approved` on the running loop: the webhook and the store in a worker thread, the wait as sleeps."""
        import asyncio

        from guard.runtime import approval

        specs = approval.asking(decision, call.event, self.registry.specs())
        if not specs:
            return decision
        try:
            pending = await asyncio.get_running_loop().run_in_executor(
                None, approval.open_request, self.settings, call.payload, specs, decision, call.answer_by
            )
        except Exception as exc:
            return _unopened(decision, exc)
        try:
            return approval.settle(decision, specs, pending, await approval.await_answer(pending))
        except Exception as exc:  # as in :meth:`_approved`
            return approval.store_failed(pending, exc)

    async def adecide(
        self,
        raw: bytes | str | dict[str, Any] | ReadEvent,
        *,
        fmt: str | None = None,
        answer_by: float | None = None,
        client: str | None = None,
    ) -> tuple[dict[str, Any], Decision]:
        """Decide one event on the running loop: the same prepare, deciders and finish as :meth:`decide` (``guard serve``, async agents)."""
        started = time.perf_counter()
        payload, event, call = self._start(raw, fmt, answer_by, fmt or client)
        if isinstance(call, Decision):
            return payload, self.finish(payload, event, call, started, fmt or client)
        decision: Decision | None = None
        try:
            for decider in self.deciders:
                if decider.slow:
                    self.slow_path()
                decision = await decider.adecide(call)
                if decision is not None:
                    break
        except Exception as exc:
            decision = self._failed(call, exc)
        assert decision is not None  # the last decider (the local engine) always answers
        if decision.decision == "ask":
            decision = await self._aapproved(call, decision)
        return call.payload, self.finish(call.payload, call.event, decision, started, call.client)

    def slow_path(self) -> None:
        """Run :attr:`before_slow_path` once, before anything that can wait."""
        if self.before_slow_path is not None:
            call, self.before_slow_path = self.before_slow_path, None
            call()

    def thread_loop(self) -> asyncio.AbstractEventLoop:
        """This thread's event loop for the engine, kept across decisions (never closed, so never waiting for
        threads a hung hook left behind): the model client's pooled connections belong to it, so the next
        miss reuses them instead of opening (and leaking) a connection per call."""
        import asyncio

        loop = getattr(self._loops, "loop", None)
        if loop is None or loop.is_closed():
            loop = self._loops.loop = asyncio.new_event_loop()
        return loop

    def close(self) -> None:
        """Write every queued audit row and close the log; close this thread's event loop, shutting its worker
        threads down without waiting (a one-shot CLI exits next). The gate may decide again: it reopens what it needs."""
        with self._audit_lock:
            audit, closing, self._audit, self._audit_closing = self._audit, self._audit_closing, None, None
        if closing is not None:
            closing()  # the writer drains its queue, then closes the log
        elif audit is not None:
            audit.close()
        loop = getattr(self._loops, "loop", None)
        if loop is not None and not loop.is_closed():
            loop.close()

    def ship_audit(self) -> None:
        """After a one-shot process answered (``guard hook``, ``guard check``): ship the rows it wrote to the team's stores,
        from a forked shipper, never waiting for them (:func:`guard.audit.handoff.ship_after_exit`)."""
        if (
            not self._wrote_audit
            or self.settings.audit_path is None
            or not (self.settings.audit_url or self.settings.audit_otlp)
        ):
            return
        try:
            from guard.audit.handoff import ship_after_exit

            ship_after_exit(self.settings, self.settings.path(self.settings.audit_path))
        except (
            Exception
        ):  # the answer is out: nothing here may change how the process ends; the rows wait for the next shipper
            log.debug("could not start the audit shipper", exc_info=True)

    def __enter__(self) -> Gate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _unopened(decision: Decision, exc: Exception) -> Decision:
    """The answer when an approval request could not be opened: no one can answer it, so the call is denied, saying why."""
    from guard.core.explanation import FAILURE_POLICY

    error = f"could not open an approval request: {type(exc).__name__}: {exc}"
    rule = DecidingRule("guard.approval", "an ask no one can answer is denied", FAILURE_POLICY, False, error)
    return Decision(
        "deny",
        f"guard could not ask a person about this call: {error}",
        hooks=decision.hooks,
        details={**decision.details, "failure": "approval", "error": error},
        warnings=decision.warnings,
        decided_by=[rule],
    )


def _org_alone(error: ConfigError) -> LoadedConfig:
    """What still applies when the project's config failed with ``error``: the org policy alone (nothing when it failed itself)."""
    if isinstance(error, OrgPolicyError):
        return LoadedConfig()
    from guard.config.assembly import with_org
    from guard.config.org_policy import configured

    try:
        org = configured()
    except ConfigError:
        return LoadedConfig()
    return LoadedConfig() if org is None else with_org(org, None)


def _event_or_none(data: dict[str, Any]) -> str | None:
    try:
        return event_name(data)
    except EventError:
        return None


def _client_denial(payload: dict[str, Any], decision: Decision, client: str | None) -> Decision:
    """The audit row of a ``permission_denied`` event: the client's deny and its reason, beside any hook's verdict on it."""
    reason = payload.get("reason")
    said = f": {reason}" if isinstance(reason, str) and reason else ""
    return Decision(
        "deny",
        f"{client or 'the client'} denied this call{said}",
        hooks=decision.hooks,
        details={**decision.details, "denied_by": "client"},
        warnings=decision.warnings,
    )


def _readable_part(data: dict[str, Any]) -> dict[str, Any]:
    """What can safely be kept of an unreadable event, for the audit log and the adapter."""
    kept: dict[str, Any] = {"hook_event_name": data.get("hook_event_name") if _event_or_none(data) else "(unreadable)"}
    for name in ("session_id", "tool_name", "cwd"):
        value = data.get(name)
        if isinstance(value, str) and len(value) < 1000:
            kept[name] = value.encode("utf-8", "replace").decode("utf-8")
    return kept
