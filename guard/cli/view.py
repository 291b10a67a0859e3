"""``guard view``: the local web view of decisions, rules and eval runs.

It listens on loopback only and answers only requests addressed to a loopback
name, so a web page the user visits cannot reach it through DNS rebinding. To
share the view with a team, ``guard serve`` mounts it under ``/ui`` behind its token.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from guard.approvals.request import view_token
from guard.audit.handoff import without_password
from guard.audit.mirror import Mirror
from guard.config.loading import load_config
from guard.core.extras import require

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "view",
        help="browse decisions, rules and eval runs in a local web page",
        description="Serve a read-only web page of the audit log (every decision and its reason, filters, search), "
        "per-rule figures and guard eval runs, on loopback only; it prints its address once it listens.",
    )
    p.add_argument(
        "--config", help="guard.yaml or settings.json (default: $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml)"
    )
    p.add_argument(
        "--audit",
        metavar="FILE|URL",
        help="audit log to show (default: the config's), or the team's audit store "
        "(postgresql://…): every machine's and user's decisions",
    )
    p.add_argument("--evals", nargs="+", default=[], metavar="DIR", help="folders holding guard eval --out runs")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        choices=("127.0.0.1", "::1", "localhost"),
        help="loopback interface (default 127.0.0.1)",
    )
    p.add_argument("--port", type=int, default=8377, help="port (default 8377; 0 picks a free one)")
    p.set_defaults(func=run)


def _index_older_rows(audit: Path | None) -> None:
    """Index a log written before the view's index existed now, saying so, rather than on the first page someone opens."""
    # the view package needs the view extra (starlette, jinja2), which run() has required
    from guard.view.audit_queries import AuditQueries

    try:
        indexed = AuditQueries(audit).index_older_rows()
    except (sqlite3.Error, OSError) as exc:  # the pages name the problem too
        print(f"guard view: cannot index {audit}: {exc}", file=sys.stderr)
        return
    if indexed:
        print(f"guard view: indexed {indexed} decision(s) logged before this version", file=sys.stderr)


def _announce(url: str) -> None:
    """The page's address once the view listens (with ``--port 0``, the port it got)."""
    print(f"guard view: {url}/ (Ctrl-C stops it)", flush=True)
    print(
        f"guard view: to answer approvals here, open {url}/approvals?token={view_token()} (keep it to yourself)",
        flush=True,
    )


def run(args: argparse.Namespace) -> int:
    require("view", "guard view")
    # the web stack is the view extra: imported once require() has said how to install it if it is missing
    import uvicorn
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    from guard.server.listening import Announcing, refuse_taken_port
    from guard.server.ui import LOOPBACK_NAMES
    from guard.view import ViewSources, create_view

    refuse_taken_port(args.host, args.port, "guard view")
    loaded = load_config(args.config)
    settings = loaded.settings
    evals = tuple(Path(d) for d in args.evals)
    redact = frozenset(settings.audit_redact)
    if args.audit and args.audit.startswith(("postgresql://", "postgres://")):
        mirror = Mirror(args.audit)
        mirror.refresh()  # a store that cannot be reached says so now, not on the first page
        sources = ViewSources(mirror.path, evals, redact, refresh=mirror.refresh, central=mirror.gaps)
        shown = f"the audit store {without_password(args.audit)} (copied to {mirror.path})"
    else:
        audit = (
            Path(args.audit) if args.audit else (settings.path(settings.audit_path) if settings.audit_path else None)
        )
        sources = ViewSources(audit, evals, redact)
        shown = f"audit log {audit or '(none)'}"
        _index_older_rows(audit)
    app = TrustedHostMiddleware(create_view(sources), allowed_hosts=list(LOOPBACK_NAMES))
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")
    server = Announcing(config, _announce)
    print(f"guard view: {shown}; {len(sources.evals)} eval folder(s)", file=sys.stderr)
    server.run()
    return 0
