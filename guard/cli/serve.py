"""``guard serve``: the HTTP service (one warm engine, the shared cache, /metrics).

starlette and uvicorn are imported here, inside ``run``, and nowhere on the
``guard hook`` path. SIGTERM or Ctrl-C stops accepting connections and lets
in-flight requests finish (up to ``--shutdown-timeout`` seconds).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from guard.errors import GuardError

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("serve", help="run the HTTP service (POST /v1/hooks, /healthz, /metrics)")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8787, help="port (default 8787; 0 picks a free one)")
    p.add_argument("--config", help="guard.yaml or settings.json (default: $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml)")
    p.add_argument("--shutdown-timeout", type=float, default=30.0, metavar="S", help="seconds in-flight requests get on shutdown (default 30)")
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"))
    p.add_argument("--access-log", action="store_true", help="log every request (decisions are in the audit log anyway)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from guard.server.app import create_app
    except ImportError as exc:
        raise GuardError(f"guard serve needs starlette and uvicorn ({exc.name} is missing): pip install 'guard[serve]'") from exc
    from guard.config import load_config
    from guard.engine import Engine
    from guard.registry import Registry, default_registry

    loaded = load_config(args.config)
    engine = Engine(loaded.settings, Registry([*loaded.specs, *default_registry.specs()]))
    app = create_app(engine)
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        access_log=args.access_log,
        timeout_graceful_shutdown=round(args.shutdown_timeout),
    )
    server = uvicorn.Server(config)
    backend = loaded.settings.cache_url.split(":", 1)[0]
    print(f"guard serve: {len(loaded.specs)} hooks from {', '.join(loaded.sources) or 'no config'}; decision cache: {backend}", file=sys.stderr)
    server.run()
    return 0
