"""The view's ASGI app: pages from :mod:`guard.view.decisions`, :mod:`guard.view.rules`
and :mod:`guard.view.evals`, the packaged static files, and the headers every answer carries.

Every page is a GET that only reads; the audit log is opened read-only. A page
shows what the audit log kept, which the log already redacted when it wrote the row;
the view redacts the configured names again, so a field added to
``audit.redact`` later is hidden in old rows too.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route, Router
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from guard.audit import recovery as audit_recovery
from guard.core.explanation import coverage
from guard.view import approvals, decisions, evals, rules
from guard.view.sources import ViewSources, local_time

__all__ = ["CONTENT_SECURITY_POLICY", "create_view"]

_HERE = Path(__file__).parent
_log = logging.getLogger(__name__)
#: What reading data of the wrong shape raises (handled inside the app, where pages can still be rendered).
_DATA_ERRORS = (ValueError, TypeError, ArithmeticError, LookupError, AttributeError)

#: Only the view's own scripts, styles and requests; no inline script, no framing, no form posts elsewhere.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


class _SecurityHeaders:
    """Adds the CSP and friends to every answer, static files included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class _OwnRoutes:
    """``url_for`` names resolve against the view's routes, under the path it is mounted at.

    Mounted in another app (``/ui`` in ``guard serve``), Starlette would look names
    up in the outer router and build URLs from the outer app's root.
    """

    def __init__(self, app: ASGIApp, router: Router) -> None:
        self.app = app
        self.router = router

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = {**scope, "router": self.router, "app_root_path": scope.get("root_path", "")}
        await self.app(scope, receive, send)


def templates() -> Jinja2Templates:
    """The page templates, HTML-escaped by default (every value on a page may come from an agent)."""
    env = Environment(
        loader=FileSystemLoader(_HERE / "templates"),
        autoescape=select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pretty"] = _pretty
    env.filters["coverage"] = lambda details: coverage(details) if isinstance(details, dict) else []
    env.filters["ms"] = _milliseconds
    env.filters["local_time"] = local_time
    return Jinja2Templates(env=env)


def _milliseconds(value: float | None) -> str:
    """A latency for a person: one decimal under 10 ms, none above; a dash when unknown."""
    if value is None:
        return "—"
    return f"{value:.1f} ms" if value < 10 else f"{value:.0f} ms"


def _pretty(value: object) -> str:
    """``value`` as indented JSON for a ``<pre>`` (escaped by the template like any text)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def create_view(sources: ViewSources) -> Starlette:
    """The view app for ``sources``; mount it anywhere (``request.url_for`` keeps links right under ``/ui``)."""

    pages = templates()

    async def home(request: Request) -> Response:
        return RedirectResponse(request.url_for("decisions"), status_code=303)

    routes: list[BaseRoute] = [
        Route("/", home, name="home"),
        *decisions.routes(sources, pages),
        *rules.routes(sources, pages),
        *evals.routes(sources, pages),
        *approvals.routes(sources, pages),
        Mount("/static", app=StaticFiles(directory=_HERE / "static"), name="static"),
    ]

    async def unreadable(request: Request, exc: Exception) -> Response:
        """A broken, locked or unwritable audit log: say which file and what SQLite said, never a traceback or a server error.

        The page itself worked: it is a 200 saying what is wrong with the file (a damaged log is set aside by guard hook's next write).
        """

        what = (
            "is not a readable audit log: guard hook sets it aside and starts a new log on its next decision"
            if audit_recovery.is_damaged(exc)
            else "cannot be read (guard view migrates an older log once, which needs write access)"
        )
        message = f"{sources.audit} {what} ({exc})"
        return pages.TemplateResponse(
            request, "page_error.html", {"section": None, "heading": "The audit log cannot be read", "message": message}
        )

    async def unexpected(request: Request, exc: Exception) -> Response:
        """Data no guard command wrote (the agent can write the audit log and run folders) tripped a page: say so; the traceback goes to the log."""
        _log.error("guard view: %s failed: %r", request.url.path, exc, exc_info=exc)
        message = f"{type(exc).__name__}: {exc}. The audit log or an eval run folder may hold data guard did not write."
        return pages.TemplateResponse(
            request,
            "page_error.html",
            {"section": None, "heading": "This page cannot be shown", "message": message},
            status_code=500,
        )

    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {sqlite3.DatabaseError: unreadable}
    handlers.update(dict.fromkeys(_DATA_ERRORS, unexpected))
    app = Starlette(routes=routes, exception_handlers=handlers)
    app.state.sources = sources
    app.add_middleware(_OwnRoutes, router=app.router)
    app.add_middleware(_SecurityHeaders)
    return app
