"""The ``guard serve`` ASGI app: one warm Engine per process behind a small JSON API.

    POST /v1/hooks            one event (canonical, or a client's shape with ?format=X)
                              → canonical decision JSON
    POST /v1/hooks/{format}   one event in that client's shape → that client's hook
                              output as the body (what ``guard hook --format X`` prints),
                              with X-Guard-Exit-Code / X-Guard-Stderr / X-Guard-Decision
    GET  /healthz             liveness and what is loaded
    GET  /metrics             Prometheus text

A client mistake (bad JSON, JSON nested too deep, wrong field types, a body that
is not ``application/json``, oversized body, unknown format, an event without
``hook_event_name``) is a 4xx with ``{"error": …, "status": …}``; lone surrogates
are repaired by :func:`~guard.core.events.payload.read_payload`; only guard's own
faults are 500s. With a token (``guard serve`` always has one: the user's, else
the per-user key, :mod:`guard.server.identity`) every endpoint wants
``Authorization: Bearer <token>`` (or ``guard hook``'s credential derived from
it), and an answer to a request carrying ``X-Guard-Nonce`` is signed
(``X-Guard-Proof``) so ``guard hook`` can tell it from an impostor's. A request
naming a project (``X-Guard-Project``: the curl client's ``--project``) whose
``guard hook`` would enforce another config is refused (409), as is any request
once the trusted config changed (503): that hook decides instead. Requests
pass :class:`_RequestPolicy` (token, content type) before any route runs, so the
routes only decide. Every request shares the engine, so it shares the decision
cache, the single-flight table and the warm model clients.
"""

from __future__ import annotations

import gc
import hmac
import json
import logging
import os
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from guard.adapters import CLIENTS, Client, adapter
from guard.audit import open_audit
from guard.audit.writer import BackgroundAudit
from guard.config.watch import Watch
from guard.core.decision import DecidingRule, Decision
from guard.core.errors import EventError, UnknownName
from guard.core.events.payload import MAX_EVENT_BYTES
from guard.judge.model import client_status
from guard.runtime.deciders import in_process
from guard.runtime.engine import Engine
from guard.runtime.gate import Gate
from guard.server import ui
from guard.server.client import CLIENT_HEADER
from guard.server.identity import LOCAL_PROOF_HEADER, NONCE_HEADER, PROOF_HEADER, credential, local_key, proof
from guard.server.metrics import Metrics

__all__ = ["MAX_BODY_BYTES", "create_app", "warm"]

log = logging.getLogger("guard.server")

#: Largest event accepted: the one payload limit every entry point reads events under.
MAX_BODY_BYTES = MAX_EVENT_BYTES
#: ``/v1/hooks/{format}``: clients read its body as their hook's answer.
_CLIENT_ROUTE = re.compile(r"^/v1/hooks/[a-z]+/?$")
#: The project a hook is anchored to (the curl client sends its ``--project``): answered only when it is this service's.
PROJECT_HEADER = b"x-guard-project"


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message, "status": status}, status_code=status)


async def _read_body(request: Request, max_body: int) -> bytes:
    """The request body, or a 413 once it passes ``max_body`` (read no further: the limit guards the service's memory)."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > max_body:
        raise HTTPException(413, f"body of {length} bytes is over the {max_body}-byte limit")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_body:
            raise HTTPException(413, f"body is over the {max_body}-byte limit")
    return bytes(body)


def _answer_by(request: Request) -> float | None:
    """The caller's deadline: ``X-Guard-Deadline`` seconds from now (``guard hook`` sends what it has left)."""
    try:
        left = float(request.headers.get("x-guard-deadline", ""))
    except ValueError:
        return None
    return time.monotonic() + left if 0 < left < 3600 else None


def _client_format(name: str | None) -> Client:
    """The client ``name`` names (guard's or an installed plugin's), or a 404 saying which there are."""
    try:
        return adapter(name or "")
    except UnknownName as exc:
        raise HTTPException(404, str(exc)) from exc


def _sent_by(request: Request) -> str | None:
    """The client a ``guard hook`` judged this normalized event for (``X-Guard-Client``), for the audit row; only a registered client counts
    (guard's or an installed plugin's: a name the service does not know is not written into the audit log)."""
    name = request.headers.get(CLIENT_HEADER)
    return name if name and CLIENTS.known(name) else None


class _Service:
    """The route handlers, around one engine and one metrics registry."""

    def __init__(
        self, engine: Engine, metrics: Metrics, max_body: int, warnings: tuple[str, ...] = (), token: str | None = None
    ) -> None:
        self.engine = engine
        self.token = token
        self.local_key = local_key(token) if token else None  # what a hook on this machine believes from a loopback URL
        # the service decides in-process, sharing the engine's cache and audit log
        self.gate = Gate(engine=engine, deciders=in_process(engine))
        self.gate.trust_notes = list(warnings)
        self.metrics = metrics
        self.max_body = min(max_body, MAX_EVENT_BYTES)  # past the gate's own limit a body could never be read

    async def _decide(self, request: Request, fmt: str | None) -> tuple[dict[str, Any], Decision]:
        body = await _read_body(request, self.max_body)
        if fmt is not None:
            _client_format(fmt)  # an unknown format is a 404, before the body is read as anything
        try:
            event = self.gate.read(body, fmt, env={})  # the one parse; the service has none of its callers' environment
        except EventError as exc:
            raise HTTPException(400, str(exc)) from exc
        payload, decision = await self.gate.adecide(
            event, answer_by=_answer_by(request), client=fmt or _sent_by(request)
        )
        self.metrics.observe_decision(decision)
        return payload, decision

    async def decide(self, request: Request) -> Response:
        _, decision = await self._decide(request, request.query_params.get("format"))
        response = JSONResponse(decision.to_dict())
        nonce = request.headers.get(NONCE_HEADER)
        if nonce and self.token:  # guard hook believes only an answer signed with the key it shares with this service
            response.headers[PROOF_HEADER] = proof(self.token, nonce[:128], bytes(response.body))
            if self.local_key:
                response.headers[LOCAL_PROOF_HEADER] = proof(self.local_key, nonce[:128], bytes(response.body))
        return response

    async def decide_for_client(self, request: Request) -> Response:
        fmt = request.path_params["format"]
        module = _client_format(fmt)
        refused = request.scope.get("guard_refusal")
        refusal: dict[str, str] = {}
        try:
            if refused is not None:
                raise HTTPException(*refused)
            payload, decision = await self._decide(request, fmt)
        except HTTPException as exc:
            # a client reading this route (a Claude Code http hook) runs the call on any non-2xx answer,
            # so a refused or malformed request is answered by the failure policy, in the client's shape
            payload = {"hook_event_name": "(unreadable)"}
            refusal = {"X-Guard-Refused": str(exc.status_code)}  # the curl client runs guard hook instead of reading it
            decision = self.gate.failure(
                f"guard serve refused the request ({exc.status_code}): {exc.detail}", event=None, kind="request"
            )
            if self.gate.settings.org_policy and decision.decision != "deny":
                decision = _org_unjudged(decision)
            self.metrics.observe_decision(decision)
        rendered = module.render(payload, decision)
        body = rendered.stdout
        if not body and rendered.exit_code == 2:  # no exit codes over HTTP: the block goes in the body
            body = json.dumps({"decision": "block", "reason": rendered.stderr})
        headers = {"X-Guard-Exit-Code": str(rendered.exit_code), "X-Guard-Decision": decision.decision, **refusal}
        if rendered.stderr:
            headers["X-Guard-Stderr"] = quote(rendered.stderr)
        media = "application/json" if body.lstrip().startswith("{") else "text/plain"
        return Response(body, media_type=media, headers=headers)

    async def healthz(self, request: Request) -> Response:
        backend = self.engine.settings.cache_url.split(":", 1)[0]  # never the URL: it may hold a Redis password
        return JSONResponse(
            {
                "status": "ok",
                "pid": os.getpid(),
                "hooks": len(self.engine.registry.specs()),
                "cache": backend,
                "model_clients": client_status(),
            }
        )

    async def metrics_text(self, request: Request) -> Response:
        return PlainTextResponse(self.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


def _org_unjudged(failed: Decision) -> Decision:
    """A refused request under an org policy: the org's rules judged nothing (and the policy may have just changed), so a deny."""
    error = str(failed.details.get("error", "guard serve refused the request"))
    rule = DecidingRule(
        "guard.org_policy",
        "the org policy is enforced as signed, or every tool call is denied",
        "the org policy",
        True,
        error,
    )
    return Decision(
        "deny",
        f"guard blocks this call: the org policy's rules could not judge it: {error}",
        details=dict(failed.details),
        decided_by=[rule],
    )


class _RequestPolicy:
    """Who may call and what they may send, before any route runs.

    A token is required on every path, compared in constant time (the token
    itself, or ``guard hook``'s credential derived from it). POST bodies must be declared
    ``application/json``: a browser page can make a visitor's browser POST a form
    or ``text/plain`` to a loopback port without a CORS preflight, but not JSON.
    Without a token, only requests addressed to a loopback name are answered: a page
    whose own name was rebound to 127.0.0.1 would otherwise be same-origin with the service.
    """

    def __init__(self, app: ASGIApp, token: str | None, watch: Watch | None = None) -> None:
        self.app = app
        self.watch = watch
        self.expected = f"Bearer {token}".encode() if token else None
        self.hook_credential = f"Bearer {credential(token)}".encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope)
            if refusal is not None and _CLIENT_ROUTE.match(scope["path"]):
                # the client-format route answers with the failure policy in the client's shape (see decide_for_client)
                scope["guard_refusal"] = (refusal.status_code, json.loads(bytes(refusal.body))["error"])
            elif refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> Response | None:
        headers = dict(scope["headers"])
        if ui.is_ui_path(scope["path"]):
            return None  # the view checks the token itself and signs a browser in (guard.server.ui)
        if self.expected is None and not ui.is_loopback_host(headers.get(b"host", b"").decode("latin-1")):
            # DNS rebinding: a page on evil.example resolved to 127.0.0.1 is same-origin with this service, JSON and all
            return _error(
                400, "without a token this service answers only requests addressed to 127.0.0.1, localhost or [::1]"
            )
        if self.expected is not None and self.hook_credential is not None:
            given = headers.get(b"authorization", b"")
            if not (hmac.compare_digest(given, self.expected) | hmac.compare_digest(given, self.hook_credential)):
                response = _error(401, "missing or wrong bearer token (Authorization: Bearer $GUARD_SERVE_TOKEN)")
                response.headers["WWW-Authenticate"] = "Bearer"
                return response
        if scope["method"] == "POST":
            ctype = headers.get(b"content-type", b"").decode("latin-1").split(";")[0].strip().lower()
            if ctype != "application/json":
                return _error(415, f"send the event as application/json, not {ctype or 'a body without Content-Type'}")
        if self.watch is None or not scope["path"].startswith("/v1/hooks"):
            return None
        project = headers.get(PROJECT_HEADER)
        if project is not None and not self.watch.enforced_in(os.fsdecode(project)):
            # a hook anchored to another project (a git worktree asking the main checkout's service): its own config decides
            return _error(
                409, f"this service enforces the config of {self.watch.folder}, not of {os.fsdecode(project)}"
            )
        changed = self.watch.changed()
        if changed:  # guard hook would enforce something else now: it must decide, not this service
            return _error(
                503,
                f"{changed} changed since this service loaded the trusted config; it is leaving (guard hook decides)",
            )
        return None


class _MetricsMiddleware:
    """Counts every HTTP request by route template and status, and the requests in flight."""

    def __init__(self, app: ASGIApp, metrics: Metrics, routes: list[Route]) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = routes

    def _route(self, scope: Scope) -> str:
        for route in self.routes:
            match, _ = route.matches(scope)
            if match is not Match.NONE:
                return route.path
        return "unmatched"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        started = time.perf_counter()
        self.metrics.in_flight += 1
        try:
            await self.app(scope, receive, send_and_note)
        finally:
            self.metrics.in_flight -= 1
            self.metrics.observe_request(scope["method"], self._route(scope), status, time.perf_counter() - started)


def warm(engine: Engine) -> list[str]:
    """Ready every smart hook and its model client before the first request (see :meth:`Engine.warm`).

    uvicorn opens the port only after this, so a client's first judged call does
    not pay the OpenAI transport's import; LiteLLM's seconds-long import goes on
    in a background thread (``/healthz`` says ``loading``). Returns the models warmed. A failure here is logged, not fatal: the
    request that needs the model will report it properly.
    """
    try:
        return engine.warm()
    except Exception:  # noqa: BLE001 - start serving anyway; the first judgement reports the problem
        log.warning("could not warm the model client", exc_info=True)
        return []


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _error(exc.status_code, exc.detail)


async def _internal_error(request: Request, exc: Exception) -> Response:
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return _error(500, f"internal error: {type(exc).__name__}")


def _background_audit(engine: Engine) -> BackgroundAudit | None:
    """The engine's audit log, written off the event loop (see :mod:`guard.audit.writer`)."""
    if engine.settings.audit_path is None:
        return None

    writer = engine.ctx.resources["audit"] = BackgroundAudit(open_audit(engine.settings), engine.settings)
    return writer


def create_app(
    engine: Engine,
    *,
    token: str | None = None,
    max_body: int = MAX_BODY_BYTES,
    metrics: Metrics | None = None,
    evals: tuple[Path, ...] = (),
    warnings: tuple[str, ...] = (),
    watch: Watch | None = None,
) -> Starlette:
    """The service for ``engine``; ``guard serve`` runs it under uvicorn. ``token``: the bearer token callers must send; ``evals``: run folders /ui shows;
    ``warnings``: shown on every decision (what differs on disk from the trusted config being enforced); ``watch``: the files
    whose change means the engine's config is no longer what guard hook enforces (decisions are then refused, 503)."""
    metrics = metrics or Metrics()
    service = _Service(engine, metrics, max_body, warnings, token)
    routes = [
        Route("/v1/hooks", service.decide, methods=["POST"]),
        Route("/v1/hooks/{format}", service.decide_for_client, methods=["POST"]),
        Route("/healthz", service.healthz, methods=["GET"]),
        Route("/metrics", service.metrics_text, methods=["GET"]),
    ]
    app_routes: list[BaseRoute] = [
        *routes,
        ui.mount(engine.settings, token, evals),
    ]  # the web view of the audit log, /ui

    audit = _background_audit(engine)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        warmed = warm(engine)
        if warmed:
            log.info("model client ready for %s", ", ".join(warmed))
        # what start-up and warming built lives as long as the service: out of the collector's sight,
        # a full collection under load walks the requests' objects only, not every module's
        gc.collect()
        gc.freeze()
        try:
            yield
        finally:
            if audit is not None:
                audit.close()  # every decision made is in the log before the process exits

    app = Starlette(
        routes=app_routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error, Exception: _internal_error},
    )
    app.state.engine = engine
    app.state.metrics = metrics
    app.add_middleware(_RequestPolicy, token=token, watch=watch)
    app.add_middleware(_MetricsMiddleware, metrics=metrics, routes=routes)  # outermost: refusals are counted too
    return app
