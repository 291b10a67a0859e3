"""``/ui`` in ``guard serve``: the ``guard view`` pages, behind the service's token.

A browser cannot put a bearer token on a link it follows, so the token is given
once, on the sign-in form (``/ui/login``, where a page opened without it is sent)
or as ``?token=`` on any ``/ui`` page, and answered with a cookie scoped to ``/ui``, HttpOnly and
SameSite=Strict, holding an HMAC of the token (never the token itself), then a
redirect to the same page without the token in its URL. Each request compares
the cookie (or an ``Authorization: Bearer`` header, for scripts) in constant time.

Without a token the service listens on loopback only; then ``/ui`` answers only
requests addressed to a loopback name, so a page the user visits cannot read it
through DNS rebinding.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from html import escape
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount
from starlette.types import ASGIApp, Receive, Scope, Send

from guard.core.decision import REDACTED
from guard.core.settings import Settings
from guard.server.identity import is_per_user

__all__ = ["COOKIE", "LOOPBACK_NAMES", "PREFIX", "cookie_value", "is_loopback_host", "is_ui_path", "mount"]

#: Host names the view answers to without a token, here and under ``guard view`` (the port is not part of the check).
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")
PREFIX = "/ui"
COOKIE = "guard_ui"
_LOGIN = f"{PREFIX}/login"
_LOGIN_BODY_LIMIT = 8192
#: The sign-in form has no script, style or image (its icon is an empty data: URL): it may only post to this service.
_LOGIN_POLICY = "default-src 'none'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
_ASK = "This service needs its token (GUARD_SERVE_TOKEN) to show its decisions."


_LOGIN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>guard view: sign in</title><link rel="icon" href="data:,"></head>
<body><h1>guard view</h1><p>{message}</p>
<form method="post" action="{action}">
<input type="hidden" name="next" value="{next}">
<label>Service token <input type="password" name="token" autocomplete="current-password" autofocus></label>
<button type="submit">Open</button></form></body></html>"""


class _TokenOutOfAccessLog(logging.Filter):
    """``guard serve --access-log`` writes each path with its query: a ``?token=`` sign-in link must not put the token in a log."""

    PARAM = re.compile(r"([?&]token=)[^&]*")

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if (
            isinstance(args, tuple) and len(args) > 2 and isinstance(args[2], str)
        ):  # uvicorn: (client, method, path and query, ...)
            record.args = (*args[:2], self.PARAM.sub(rf"\g<1>{REDACTED}", args[2]), *args[3:])
        return True


_ACCESS_LOG_FILTER = _TokenOutOfAccessLog()


def is_loopback_host(host: str) -> bool:
    """Whether a ``Host`` header names this machine's loopback (any port): what a DNS-rebinding page cannot send."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    name, colon, port = host.rpartition(":")
    return bool(colon) and port.isascii() and port.isdigit() and name.lower() in LOOPBACK_NAMES


def is_ui_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def cookie_value(token: str) -> str:
    """What the cookie holds: proof of the token that does not reveal it."""
    return hmac.new(token.encode(), b"guard serve /ui", hashlib.sha256).hexdigest()


def _safe_next(value: str) -> str:
    """Where to go after signing in: a path under ``/ui`` only (no open redirect)."""
    inside = is_ui_path(value) and "\\" not in value and "/../" not in value + "/" and "%2e" not in value.lower()
    return value if inside else f"{PREFIX}/"


def _without_token(request: Request) -> str:
    """The path and query of ``request`` with any ``token`` parameter left out (it must not stay in the address bar or history)."""
    kept = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "token"])
    return request.url.path + (f"?{kept}" if kept else "")


async def _small_body(request: Request) -> bytes:
    """The login form's body, read no further than a form with a token can be."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > _LOGIN_BODY_LIMIT:
            return b""
    return body


class _TokenGate:
    """Lets a request into the view when it proves the token; signs a browser in once."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.bearer = f"Bearer {token}".encode()
        self.token = token.encode()
        self.cookie = cookie_value(token).encode()

    def _proven(self, request: Request) -> bool:
        given = request.cookies.get(COOKIE, "").encode()
        header = request.headers.get("authorization", "").encode()
        return hmac.compare_digest(given, self.cookie) | hmac.compare_digest(header, self.bearer)

    def _signed_in(self, request: Request, to: str) -> Response:
        response = RedirectResponse(_safe_next(to), status_code=303)
        response.set_cookie(
            COOKIE,
            self.cookie.decode(),
            path=PREFIX,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return response

    def _form(self, to: str, message: str, status: int) -> Response:
        """The sign-in form, going on to ``to`` once the token is right."""
        page = _LOGIN_PAGE.format(message=escape(message), action=escape(_LOGIN), next=escape(_safe_next(to)))
        return HTMLResponse(
            page,
            status_code=status,
            headers={
                "WWW-Authenticate": "Bearer",
                "Content-Security-Policy": _LOGIN_POLICY,
                "Cache-Control": "no-store",
            },
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        path = scope["path"]  # the full path: a Mount keeps it and sets root_path
        if path == _LOGIN and request.method == "POST":
            form = dict(parse_qsl((await _small_body(request)).decode("utf-8", "replace")))
            if hmac.compare_digest(form.get("token", "").encode(), self.token):
                response = self._signed_in(request, form.get("next", ""))
            else:
                response = self._form(form.get("next", ""), "Wrong token.", 401)
        elif path == _LOGIN and request.method == "GET":
            response = self._form(request.query_params.get("next", ""), _ASK, 200)
        elif "token" in request.query_params and request.method == "GET":
            if hmac.compare_digest(request.query_params["token"].encode(), self.token):
                response = self._signed_in(request, _without_token(request))
            else:
                response = self._form(_without_token(request), "Wrong token.", 401)
        elif self._proven(request):
            await self.app(scope, receive, send)
            return
        elif request.method == "GET" and "text/html" in request.headers.get("accept", ""):
            response = RedirectResponse(
                f"{_LOGIN}?{urlencode({'next': _without_token(request)})}", status_code=303
            )  # a person: the form
        else:
            response = self._form(_without_token(request), _ASK, 401)
        await response(scope, receive, send)


class _BuiltOnFirstRequest:
    """The view, built when someone first opens it.

    ``guard serve`` races a session's first tool call at start-up; the view's
    templates (Jinja2) and pages are not part of answering that call.
    """

    def __init__(self, settings: Settings, evals: tuple[Path, ...], gated: bool) -> None:
        self.settings = settings
        self.evals = evals
        self.gated = gated  # behind the per-user token: a request that reached the view may answer approvals
        self.app: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.app is None:
            # lazy: jinja2 and the pages only on the first /ui request, not on guard serve's start
            from guard.view import ViewSources, create_view

            audit = self.settings.path(self.settings.audit_path) if self.settings.audit_path else None
            self.app = create_view(
                ViewSources(audit, self.evals, frozenset(self.settings.audit_redact), gated=self.gated)
            )
        await self.app(scope, receive, send)


def mount(settings: Settings, token: str | None, evals: tuple[Path, ...] = ()) -> Mount:
    """The view of ``settings``' audit log (and the ``evals`` run folders) under ``/ui``: behind the token, or loopback names only without one."""

    logging.getLogger("uvicorn.access").addFilter(_ACCESS_LOG_FILTER)  # one filter however many apps are made

    # only the per-user token lets whoever got in answer approvals: a token the user set may be the agent's to read
    view: ASGIApp = _BuiltOnFirstRequest(settings, evals, gated=is_per_user(token))
    view = _TokenGate(view, token) if token else TrustedHostMiddleware(view, allowed_hosts=list(LOOPBACK_NAMES))
    return Mount(PREFIX, app=view)
