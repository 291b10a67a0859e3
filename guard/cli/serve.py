"""``guard serve``: the HTTP service (one warm engine, the shared cache, /metrics).

starlette and uvicorn are imported here, inside ``run``, and nowhere on the
``guard hook`` path. SIGTERM or Ctrl-C stops accepting connections and lets
in-flight requests finish (up to ``--shutdown-timeout`` seconds).

It answers only callers that hold its token, on every route, loopback included:
the user's token (``--token``, ``GUARD_SERVE_TOKEN``, ``server.token``), else a
per-user one derived from guard's secret (``--print-token`` shows it), which
``guard hook`` derives by itself and the agent cannot read
(:mod:`guard.server.identity`). It listens on loopback unless told otherwise,
and listens anywhere else only with a token of the user's: the service runs your
hooks and spends your model budget for whoever can reach it. It enforces the
config the user trusted, as ``guard hook`` does (:mod:`guard.config.pinning`).
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import os
import socket
import sys
from pathlib import Path

from guard.cache.batched_counts import for_service
from guard.cli.user_consent import refusal
from guard.config.pinning import load_trusted
from guard.config.watch import Watch
from guard.core.errors import GuardError
from guard.core.extras import require
from guard.core.settings import LoadedConfig
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry, default_registry
from guard.server.identity import explicit_token, service_key

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "serve",
        help="run the HTTP service (POST /v1/hooks, /healthz, /metrics)",
        description="Serve one warm engine over HTTP: POST /v1/hooks (canonical events, or a client's shape with ?format=X), "
        "/healthz, /metrics and the web view under /ui. Loopback unless a token is set; guard hook starts one in the "
        "background for a session (guard services lists and stops those).",
    )
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8787, help="port (default 8787; 0 picks a free one)")
    p.add_argument(
        "--token",
        help="bearer token every request must carry (default: $GUARD_SERVE_TOKEN, then server.token, "
        "else a per-user token derived from guard's secret); one of yours is required to listen beyond loopback",
    )
    p.add_argument(
        "--print-token",
        action="store_true",
        help="print the token this service would require (for a Claude Code http hook "
        "or signing in to /ui) and exit; refused under an agent client",
    )
    p.add_argument(
        "--config", help="guard.yaml or settings.json (default: $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml)"
    )
    p.add_argument(
        "--shutdown-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds in-flight requests get on shutdown (default 30)",
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=("critical", "error", "warning", "info", "debug"),
        help="uvicorn's and guard's log level (default info)",
    )
    p.add_argument(
        "--access-log", action="store_true", help="log every request (decisions are in the audit log anyway)"
    )
    p.add_argument(
        "--state-file", help="write {url, pid} here once listening, remove it on exit (used by server.url: auto)"
    )
    p.add_argument(
        "--evals", nargs="+", default=[], metavar="DIR", help="guard eval --out folders to show under /ui/evals"
    )
    p.add_argument("--idle-timeout", type=float, metavar="S", help="exit after S seconds without a request")
    p.add_argument(
        "--unix-socket",
        metavar="PATH",
        help="also listen on this Unix socket (mode 0600; taken over from any "
        "service there): what guard install claude --client curl asks",
    )
    p.set_defaults(func=run)


class _UnixListener:
    """A Unix socket usable only by this user, bound under a temporary name and moved to its path once the service is warm.

    The move is atomic, so while a newer service (a changed config) takes the path over from an
    older one a client always finds one of them there, and never one still loading its model client.
    """

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.tmp = self.path.with_name(f"{self.path.stem}.{os.getpid()}")
        self.tmp.unlink(missing_ok=True)
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.bind(str(self.tmp))
        os.chmod(self.tmp, 0o600)
        self.inode = os.stat(self.tmp).st_ino

    def place(self) -> None:
        os.replace(self.tmp, self.path)

    def remove(self) -> None:
        """Remove the socket file on exit unless a newer service has taken its path over."""
        for path in (self.tmp, self.path):
            with contextlib.suppress(OSError):
                if os.stat(path).st_ino == self.inode:
                    os.unlink(path)


def _unix_listener(path: str) -> _UnixListener | None:
    """The Unix socket, or None with a warning when it cannot be made (a path over the system's limit): TCP still serves."""
    try:
        return _UnixListener(path)
    except OSError as exc:
        print(f"guard serve: warning: not listening on {path}: {exc}", file=sys.stderr)
        return None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def _print_token(token: str | None) -> int:
    refused = refusal("guard serve --print-token")
    if refused or token is None:
        print(f"guard serve: error: {refused or 'no token: guard secret cannot be read'}", file=sys.stderr)
        return 1
    print(token)
    return 0


def run(args: argparse.Namespace) -> int:
    require("serve", "guard serve")
    # the web stack is the serve extra: imported once require() has said how to install it if it is missing
    import uvicorn

    from guard.server.app import create_app
    from guard.server.listening import Service, refuse_taken_port

    watch = Watch(args.config)  # before loading: a change while it loads is seen too
    trusted = load_trusted(args.config)  # the config the user trusted, as guard hook enforces it
    if trusted.error is not None:
        raise trusted.error
    loaded = trusted.loaded or LoadedConfig()
    token = service_key(loaded.settings, args.token)
    if args.print_token:
        return _print_token(token)
    for note in trusted.notes:
        print(f"guard serve: warning: {note}", file=sys.stderr)
    if token is None:
        raise GuardError(
            "guard serve cannot derive its per-user token: guard's secret cannot be read (see guard doctor); set GUARD_SERVE_TOKEN"
        )
    if not (args.token or explicit_token(loaded.settings)) and not _is_loopback(args.host):
        raise GuardError(
            f"refusing to listen on {args.host} without a token of yours: anyone who can reach it could run your hooks and "
            f"spend your model budget. Set GUARD_SERVE_TOKEN (or --token, or server.token in guard.yaml) and have "
            f"clients send it as 'Authorization: Bearer <token>', or listen on 127.0.0.1"
        )
    refuse_taken_port(args.host, args.port, "guard serve")
    engine = Engine(loaded.settings, Registry([*loaded.specs, *default_registry.specs()]))
    counted = for_service(loaded.settings)
    if counted is not None:  # lookups on the event loop only read; hit and miss counts are written in batches
        engine.ctx.resources["cache"] = counted
    app = create_app(
        engine, token=token, evals=tuple(Path(d) for d in args.evals), warnings=tuple(trusted.notes), watch=watch
    )
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        access_log=args.access_log,
        timeout_graceful_shutdown=round(args.shutdown_timeout),
        ws="none",  # no WebSocket routes: not loading uvicorn's WebSocket protocol saves a start-up ~20 ms
    )
    unix = _unix_listener(args.unix_socket) if args.unix_socket else None

    def after_shutdown() -> None:
        if counted is not None:
            counted.close()  # every tallied count written
        if unix is not None:
            unix.remove()

    server = Service(
        config,
        app.state.metrics,
        watch,
        state_file=args.state_file,
        idle_timeout=args.idle_timeout,
        after_startup=unix.place if unix is not None else None,
        after_shutdown=after_shutdown,
    )
    backend = loaded.settings.cache_url.split(":", 1)[0]
    auth = "bearer token required" + (
        "" if args.token or explicit_token(loaded.settings) else " (per-user: guard serve --print-token shows it)"
    )
    print(f"guard serve: {loaded.summary()}; decision cache: {backend}; {auth}", file=sys.stderr)
    server.run(
        sockets=None if unix is None else [config.bind_socket(), unix.socket]
    )  # TCP first: bound_url reads the first
    return 0
