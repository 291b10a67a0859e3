"""The decisions pages: the audit log newest first, filtered by a GET form (a filtered view is a URL to share), one decision in full, and new rows for the live list.

What a row shows is redacted again here with the configured names, so a name
added to ``audit.redact`` after a secret was logged hides it from the page too.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates

from guard.audit import redacted, redacted_details, redacted_hook, redacted_text
from guard.core.kinds import quiet
from guard.view.audit_integrity import AuditIntegrity
from guard.view.audit_queries import AuditQueries, DecisionFilters
from guard.view.sources import ViewSources, index_param, local_time

__all__ = ["PAGE_SIZE", "routes"]

PAGE_SIZE = 50
#: Rows one live poll sends at most (a burst beyond it is a reload away).
LIVE_LIMIT = 200
EXCERPT = 160
_FILTER_FIELDS = ("decision", "rule", "tool", "session", "client", "since", "until", "q")


def _epoch(value: str, field: str) -> float:
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        raise ValueError(f"{field}: {value!r} is not a date and time (YYYY-MM-DDTHH:MM)") from None


def filters_from(request: Request) -> tuple[DecisionFilters, dict[str, str]]:
    """The filters a query string asks for, and the non-empty parameters (to keep in links); ValueError names a bad one."""
    given = {k: request.query_params[k].strip() for k in _FILTER_FIELDS if request.query_params.get(k, "").strip()}
    filters = DecisionFilters(
        decision=given.get("decision"),
        rule=given.get("rule"),
        tool=given.get("tool"),
        session=given.get("session"),
        client=given.get("client"),
        since=_epoch(given["since"], "since") if "since" in given else None,
        until=_epoch(given["until"], "until") if "until" in given else None,
        text=given.get("q"),
    )
    return filters, given


def _excerpt(payload: object) -> str:
    """The part of the input a person scans for: a command or path when there is one, else the tool input as JSON."""
    if isinstance(payload, str):
        text = payload
    else:
        tool_input = payload.get("tool_input", payload) if isinstance(payload, dict) else payload
        if isinstance(tool_input, dict):
            first = next(
                (
                    tool_input[k]
                    for k in ("command", "file_path", "url", "path", "pattern", "prompt")
                    if isinstance(tool_input.get(k), str)
                ),
                None,
            )
            text = first if first is not None else json.dumps(tool_input, ensure_ascii=False)
        else:
            text = json.dumps(tool_input, ensure_ascii=False)
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…"


def _shown(row: dict[str, Any], names: frozenset[str]) -> dict[str, Any]:
    """A row as the pages show it: redacted again, with the derived columns."""
    hooks = [redacted_hook(h, names) for h in row["hooks"]]
    payload = redacted_text(row["payload"], names) if row["payload_truncated"] else redacted(row["payload"], names)
    warnings = [redacted_text(w, names) for w in row["warnings"]]
    judging = [
        h for h in hooks if h.get("decision") or not quiet(str(h.get("type")))
    ]  # the self-protection rule, silent on every call, is noise
    models = sorted(
        {" · ".join(str(h[k]) for k in ("tier", "model") if h.get(k)) for h in hooks if h.get("model") or h.get("tier")}
    )
    errors = [f"{h['id']}: {h['error']}" for h in hooks if h.get("error")]
    return {
        **row,
        "when": local_time(row["time"]),
        "hooks": hooks,
        "rules": judging,
        "payload": payload,
        "payload_text": payload if isinstance(payload, str) else json.dumps(payload, indent=2, ensure_ascii=False),
        "details": redacted_details(row["details"], names),
        "excerpt": _excerpt(payload),
        "models": models,
        "cached": bool(hooks) and all(h.get("cached") for h in judging or hooks),
        "reason": redacted_text(row["reason"], names) if row["reason"] else row["reason"],
        "warnings": warnings,
        "problems": warnings or errors,  # a fail_open warning already names the hook and its error
        "unjudged": row.get("judged") == 0,
    }


def routes(sources: ViewSources, pages: Jinja2Templates) -> list[BaseRoute]:
    audit = AuditQueries(sources.audit)
    integrity = AuditIntegrity(sources.audit)

    def problems() -> list[str]:
        """The banner: the store's gaps for a copy of it (``--audit URL``), else the local log's chain and writes."""
        return sources.central() if sources.central is not None else integrity.problems()

    def refreshed() -> None:
        if sources.refresh is not None:
            sources.refresh()

    def index(request: Request) -> Response:
        refreshed()
        context: dict[str, Any] = {
            "section": "decisions",
            "given": {},
            "rows": [],
            "error": None,
            "audit": sources.audit,
        }
        try:
            filters, context["given"] = filters_from(request)
        except ValueError as exc:
            context["error"] = str(exc)
            return pages.TemplateResponse(
                request, "decisions.html", {**context, "choices": audit.choices()}, status_code=400
            )
        before = index_param(request.query_params.get("before"))
        rows = audit.decisions(filters, before=before, limit=PAGE_SIZE + 1)
        context.update(
            integrity=problems(),
            rows=[_shown(r, sources.redact) for r in rows[:PAGE_SIZE]],
            older=rows[PAGE_SIZE - 1]["id"] if len(rows) > PAGE_SIZE else None,
            paged=before is not None,
            choices=audit.choices(),
        )
        return pages.TemplateResponse(request, "decisions.html", context)

    def newer(request: Request) -> Response:
        """Rows newer than ``after`` under the same filters, rendered as table rows for the live list to prepend."""
        try:
            filters, _ = filters_from(request)
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        refreshed()
        after = index_param(request.query_params.get("after")) or 0
        rows = [_shown(r, sources.redact) for r in audit.decisions(filters, after=after, limit=LIVE_LIMIT)]
        html = pages.get_template("decisions_rows.html").render(rows=rows, url_for=request.url_for)
        return JSONResponse({"top": rows[0]["id"] if rows else after, "count": len(rows), "html": html})

    def detail(request: Request) -> Response:
        row_id = request.path_params["id"]
        index = index_param(row_id)
        row = audit.decision(index) if index is not None else None
        shown = _shown(row, sources.redact) if row is not None else None
        return pages.TemplateResponse(
            request,
            "decision.html",
            {"section": "decisions", "id": row_id, "row": shown},
            status_code=200 if shown else 404,
        )

    return [
        Route("/decisions", index, name="decisions"),
        Route("/decisions/newer", newer, name="decisions_newer"),
        Route("/decisions/{id}", detail, name="decision"),
    ]
