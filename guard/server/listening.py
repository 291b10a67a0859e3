"""The uvicorn server ``guard serve`` and ``guard view`` run: where it listens, and what it does once it does.

Imported only inside those commands' ``run``: uvicorn is the ``serve`` extra's, and no other command loads it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import sys
import time
from collections.abc import Callable

import uvicorn

from guard.config.watch import Watch
from guard.core.errors import GuardError
from guard.server.autostart import write_state
from guard.server.metrics import Metrics

__all__ = ["Announcing", "Service", "bound_url", "refuse_taken_port"]


def bound_url(server: uvicorn.Server) -> str:
    """Where a started uvicorn server listens, with the port it was given (``--port 0`` picks one)."""
    host, port = server.servers[0].sockets[0].getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def refuse_taken_port(host: str, port: int, who: str) -> None:
    """GuardError when another program listens on ``host:port``: said in guard's words before any work, where uvicorn
    logged a bind error after its start-up lines and exited 3. ``--port 0`` is never taken."""
    if port == 0:
        return
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except OSError:
        return  # a host that does not resolve: uvicorn says so
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a closing socket is no owner
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise GuardError(
                    f"{host}:{port} is already in use (another {who}?): stop it, or pass --port N (0 picks a free one)"
                ) from exc


class Announcing(uvicorn.Server):
    """uvicorn's Server, handing the address it got to ``announce`` once it listens (``guard view`` prints it)."""

    def __init__(self, config: uvicorn.Config, announce: Callable[[str], None]) -> None:
        super().__init__(config)
        self.announce = announce

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self.announce(bound_url(self))


class Service(uvicorn.Server):
    """``guard serve``'s server: it tells ``server.url: auto`` clients where it listens and leaves when idle."""

    def __init__(
        self,
        config: uvicorn.Config,
        metrics: Metrics,
        watch: Watch,
        *,
        state_file: str | None,
        idle_timeout: float | None,
        after_startup: Callable[[], None] | None = None,
        after_shutdown: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(config)
        self.metrics, self.watch, self.state_file, self.idle_timeout = metrics, watch, state_file, idle_timeout
        self.leaving = False
        self.after_startup, self.after_shutdown = after_startup, after_shutdown

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self.after_startup is not None:  # warm and serving
            self.after_startup()
        if self.started and self.state_file:
            write_state(self.state_file, bound_url(self), os.getpid())

    async def on_tick(self, counter: int) -> bool:
        changed = self.watch.changed() if counter % 10 == 0 else None
        if (
            changed and not self.leaving
        ):  # what guard hook enforces is no longer what this service loaded: leave, a fresh one loads it
            print(f"guard serve: {changed} changed since the trusted config was loaded; leaving", file=sys.stderr)
            self.leaving = self.should_exit = True
        if self.idle_timeout and counter % 10 == 0 and self.metrics.in_flight == 0:
            if time.monotonic() - self.metrics.last_request > self.idle_timeout:
                self.should_exit = True
        return bool(await super().on_tick(counter))

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.state_file:
            with contextlib.suppress(OSError, ValueError):
                with open(self.state_file) as fh:
                    mine = json.load(fh).get("pid") == os.getpid()
                if mine:
                    os.unlink(self.state_file)
        await super().shutdown(sockets=sockets)
        if self.after_shutdown is not None:  # every request is done; uvicorn re-raises a SIGTERM after this
            self.after_shutdown()
