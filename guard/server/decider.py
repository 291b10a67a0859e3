"""The gate's warm-service decider: send a prepared event to this config's running ``guard serve``.

The surfaces that build gates and want the service (``guard hook``, ``guard check``,
the Python API and the SDK integrations) put a :class:`ServiceDecider` among the
gate's deciders, between the fast path and the local engine, so the runtime never
imports the server. Importing it is cheap: the HTTP client and the autostart state
are loaded only when an event reaches the service.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from guard.core.decision import Decision
from guard.core.extras import MissingExtra
from guard.core.kinds import judged
from guard.core.logs import LazyLogger
from guard.core.session import WRITTEN_FIELD
from guard.core.settings import SERVER_ENV, from_env
from guard.runtime.deciders import Call

if TYPE_CHECKING:
    from guard.runtime.gate import Gate

__all__ = ["ServiceDecider"]

log = LazyLogger("guard.gate")


class ServiceDecider:
    """The service's decision, or None to decide locally (the reason is noted on that decision).

    With no ``server.url`` a service that a session's start launched for this
    config is used; with ``auto`` one is started if none runs. One still
    starting is waited for (it loads the model client once, for every call to
    come) as long as the time left would still let this process run the hooks
    itself should it not come up: the call is always judged. Hooks the caller
    chose (``guard check --rule``, ``--model``, ``specs=``) are never sent: the
    service would answer with the config's.

    ``server``: the service's URL or ``auto`` (``guard hook --server``), before
    ``GUARD_SERVER`` in the gate's environment and the config's ``server.url``.
    ``start_service``: whether ``auto`` (and a session's start) may launch a
    background ``guard serve``; ``guard check`` uses one that runs but starts none
    (each would idle for 30 minutes).
    """

    slow = True

    def __init__(self, server: str | None = None, *, start_service: bool = True) -> None:
        self.server = server
        self.start_service = start_service

    def url(self, gate: Gate) -> str | None:
        """The service to ask for ``gate``'s config: a URL, ``auto``, or None (one a session started, if any)."""
        return self.server or from_env(SERVER_ENV, gate.env) or gate.settings.server_url

    async def adecide(self, call: Call) -> Decision | None:
        if not call.gate.config_hooks:
            return None
        import asyncio

        return await asyncio.to_thread(
            self.decide, call
        )  # urllib and the autostart wait block: never on the caller's loop

    def decide(self, call: Call) -> Decision | None:
        gate = call.gate
        if not gate.config_hooks:
            return None
        from guard.server import autostart
        from guard.server.client import send_event, service_key

        server = self.url(gate)
        longest = max((s.timeout for s in call.specs), default=10.0)
        deadline = call.answer_by
        if server in (None, "auto"):
            spare = autostart.STARTUP_WAIT if deadline is None else deadline - time.monotonic() - longest
            url = autostart.running_url(
                gate.loaded, wait=max(spare, 0.0)
            )  # it caps the wait at STARTUP_WAIT from the launch
        else:
            url = server
        if url is None and server is None:
            return None
        timeout = longest + 5
        if deadline is not None:
            timeout = min(timeout, deadline - time.monotonic())
        key = service_key(gate.loaded.settings)
        # the record of written files is the service's own to read (up to a megabyte of earlier contents): not sent
        sent = {name: value for name, value in call.payload.items() if name != WRITTEN_FIELD}
        reply = send_event(url, sent, timeout=timeout, key=key, client=call.client) if url and timeout > 0 else None
        if reply is not None:
            served = Decision.from_dict(reply)
            served.details["server"] = url
            return served
        if server == "auto" and not self.start_service:
            note = "no guard serve runs for this config; judged in-process"
        elif server == "auto":
            try:
                started = autostart.start(gate.loaded)
            except MissingExtra as exc:
                note = f"{exc}; judged in-process"
            else:
                note = (
                    "started guard serve in the background for later calls; judged in-process"
                    if started
                    else "guard serve is starting; judged in-process"
                )
        else:
            note = f"guard serve at {url} unreachable; judged in-process"
        call.notes["server_fallback"] = note
        return None

    def warm_for_session(self, gate: Gate) -> None:
        """A session starts: launch this config's warm service in the background and return at once.

        ``guard install`` hooks SessionStart for this, so the session's first judged
        tool call finds a warm judge (no model client import in the hook process).
        """
        if (
            not self.start_service
            or self.url(gate) not in (None, "auto")
            or not any(judged(s.kind) for s in gate.registry.specs())
        ):
            return
        from guard.server import autostart

        gate.slow_path()
        try:
            if autostart.running_url(gate.loaded) is None:
                autostart.start(gate.loaded)
        except MissingExtra:  # guard install and guard doctor say so; each call is judged in-process
            return
        except Exception:  # warming is an optimisation: the session's calls are judged in-process instead
            log.warning("could not start the warm service", exc_info=True)
