"""The approvals pages: calls waiting for a person, and the buttons that answer them (docs/approvals.md).

Reading is open as every page is (loopback only); answering is not. A POST
answers a request only when it proves one of:

- the request's own proof (``t=``, from the link its webhook carried: an HMAC of
  its id under the secret of the user whose call waits, :mod:`guard.approvals.request`);
- the view's sign-in, a cookie (HttpOnly, SameSite=Strict) set by opening the
  address ``guard view`` printed with its token, which is derived from the same
  secret;
- or that the view sits behind ``guard serve``'s token (``/ui``), which every
  request there proved already.

The agent can reach loopback, but it can read neither the secret nor the
webhook's message, so it can make none of these. A POST whose ``Origin`` is not
this view is refused too (the cookie is SameSite=Strict besides).
"""

from __future__ import annotations

import hmac
import time
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates

from guard.approvals.request import excerpt, proves, view_token
from guard.approvals.store import APPROVED, DENIED, ApprovalRequest, ApprovalStore
from guard.storage.secret import seal
from guard.view.sources import ViewSources, local_time

__all__ = ["COOKIE", "routes"]

COOKIE = "guard_approvals"
_FORM_LIMIT = 4096


def _cookie_value() -> str:
    return seal("approvals-view-cookie")


def _signed_in(request: Request, sources: ViewSources) -> bool:
    if sources.gated:
        return True
    given = request.cookies.get(COOKIE, "")
    try:
        return bool(given) and hmac.compare_digest(given.encode(), _cookie_value().encode())
    except Exception:  # no secret: no one is signed in
        return False


def _same_origin(request: Request) -> bool:
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    return urlsplit(origin).netloc == request.headers.get("host", "")


def _shown(item: ApprovalRequest) -> dict[str, Any]:
    data: dict[str, Any] = item.to_dict()
    data.update(
        when=local_time(item.created),
        excerpt=excerpt(item.input, 160),
        left=max(item.expires - time.time(), 0.0),
        answered=local_time(item.answered_at) if item.answered_at else None,
    )
    return data


def routes(sources: ViewSources, pages: Jinja2Templates) -> list[BaseRoute]:
    store = ApprovalStore(sources.approvals)

    def listing(request: Request) -> Response:
        token = request.query_params.get("token")
        if token is not None:
            if not hmac.compare_digest(token.encode(), view_token().encode()):
                return pages.TemplateResponse(
                    request,
                    "page_error.html",
                    {
                        "section": "approvals",
                        "heading": "Wrong token",
                        "message": "That is not this view's token: open the address guard view printed.",
                    },
                    status_code=401,
                )
            response = RedirectResponse(request.url_for("approvals"), status_code=303)
            response.set_cookie(
                COOKIE, _cookie_value(), path=request.scope.get("root_path") or "/", httponly=True, samesite="strict"
            )
            return response
        items = [_shown(item) for item in store.listed()]
        return pages.TemplateResponse(
            request,
            "approvals.html",
            {"section": "approvals", "items": items, "signed_in": _signed_in(request, sources)},
        )

    async def detail(request: Request) -> Response:
        request_id = request.path_params["id"]
        found = (
            store.get(request_id) if request_id.isascii() and request_id.isalnum() and len(request_id) <= 32 else None
        )
        proof = request.query_params.get("t", "")
        message = None
        if request.method == "POST" and found is not None:
            body = (await request.body())[:_FORM_LIMIT]
            form = dict(parse_qsl(body.decode("utf-8", "replace")))
            proof = form.get("t", "")
            allowed = _same_origin(request) and (_signed_in(request, sources) or proves(found.id, proof))
            if not allowed:
                return pages.TemplateResponse(
                    request,
                    "page_error.html",
                    {
                        "section": "approvals",
                        "heading": "Not answered",
                        "message": "Only a person with this request's link, or signed in to this view, can answer it.",
                    },
                    status_code=403,
                )
            answer = APPROVED if form.get("answer") == "approve" else DENIED
            by = (form.get("by") or "").strip()[:80] or "someone in guard view"
            try:
                found = store.answer(found.id, answer, by=by, via="guard view")
            except ValueError as exc:
                message = str(exc)
        if found is None:
            return pages.TemplateResponse(
                request, "approval.html", {"section": "approvals", "item": None, "id": request_id[:32]}, status_code=404
            )
        may_answer = _signed_in(request, sources) or proves(found.id, proof)
        context = {
            "section": "approvals",
            "item": _shown(found),
            "id": found.id,
            "may_answer": may_answer,
            "proof": proof if may_answer else "",
            "message": message,
        }
        if request.method == "POST" and message is None:
            return RedirectResponse(
                request.url_for("approval", id=found.id).include_query_params(t=proof), status_code=303
            )
        return pages.TemplateResponse(request, "approval.html", context)

    return [
        Route("/approvals", listing, name="approvals"),
        Route("/approvals/{id}", detail, name="approval", methods=["GET", "POST"]),
    ]
