"""``/ui`` in ``guard serve``: the ``guard view`` pages, behind the service's token.

A browser cannot put a bearer token on a link it follows, so the token is given
once, on the login form (POST ``/ui/login``) or as ``?token=`` on any ``/ui``
page, and answered with a cookie scoped to ``/ui``, HttpOnly and
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
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount

from guard.view.app import CONTENT_SECURITY_POLICY

__all__ = ["COOKIE", "PREFIX", "cookie_value", "is_ui_path", "mount"]

PREFIX = "/ui"
COOKIE = "guard_ui"
_LOGIN = f"{PREFIX}/login"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_LOGIN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>guard view: sign in</title></head>
<body><h1>guard view</h1><p>{message}</p>
<form method="post" action="{action}">
<input type="hidden" name="next" value="{next}">
<label>Service token <input type="password" name="token" autocomplete="current-password" autofocus></label>
<button type="submit">Open</button></form></body></html>"""


def is_ui_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def cookie_value(token: str) -> str:
    """What the cookie holds: proof of the token that does not reveal it."""
    return hmac.new(token.encode(), b"guard serve /ui", hashlib.sha256).hexdigest()


def _safe_next(value: str) -> str:
    """Where to go after signing in: a path under ``/ui`` only (no open redirect)."""
    return value if is_ui_path(value) and not value.startswith("//") and "\\" not in value else f"{PREFIX}/"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


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
        response.set_cookie(COOKIE, self.cookie.decode(), path=PREFIX, httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return response

    def _login(self, request: Request, message: str, status: int) -> Response:
        to = request.url.path if request.url.path != _LOGIN else f"{PREFIX}/" + (f"?{request.url.query}" if request.url.query else "")
        page = _LOGIN_PAGE.format(message=_escape(message), action=_escape(_LOGIN), next=_escape(_safe_next(to)))
        return HTMLResponse(page, status_code=status, headers={"WWW-Authenticate": "Bearer", "Content-Security-Policy": CONTENT_SECURITY_POLICY, "Cache-Control": "no-store"})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        path = scope["path"]  # the full path: a Mount keeps it and sets root_path
        if path == _LOGIN and request.method == "POST":
            form = dict(parse_qsl((await request.body()).decode("utf-8", "replace")))
            if hmac.compare_digest(form.get("token", "").encode(), self.token):
                response = self._signed_in(request, form.get("next", ""))
            else:
                response = self._login(request, "Wrong token.", 401)
        elif "token" in request.query_params and request.method == "GET":
            if hmac.compare_digest(request.query_params["token"].encode(), self.token):
                kept = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "token"])
                response = self._signed_in(request, path + (f"?{kept}" if kept else ""))
            else:
                response = self._login(request, "Wrong token.", 401)
        elif self._proven(request):
            await self.app(scope, receive, send)
            return
        else:
            response = self._login(request, "This service needs its token (GUARD_SERVE_TOKEN) to show its decisions.", 401)
        await response(scope, receive, send)


def mount(settings: Any, token: str | None) -> Mount:
    """The view of ``settings``' audit log under ``/ui``: behind the token, or loopback names only without one."""
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    from guard.cli.view import LOOPBACK_NAMES
    from guard.view import ViewSources, create_view

    audit = settings.path(settings.audit_path) if settings.audit_path else None
    view: ASGIApp = create_view(ViewSources(audit, (), frozenset(settings.audit_redact)))
    view = _TokenGate(view, token) if token else TrustedHostMiddleware(view, allowed_hosts=list(LOOPBACK_NAMES))
    return Mount(PREFIX, app=view)
