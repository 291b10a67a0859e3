"""The rules page: each rule's record (calls, verdict rates, errors, fail-open allows, cache hits, cost, latency) and its verdicts over time.

A rule in shadow mode has a second record beside its enforced one: what it
would have allowed, asked about or denied, with the latest calls it would have
stopped. ``/rules.json`` gives the same records to scripts (and to ``guard view``
users watching a shadow rule while its calls run).

The chart is an inline SVG drawn here (stacked bars per time bucket), so the page
needs no chart library and no script.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates

from guard.audit import redacted_text
from guard.core.decision import ABSTAIN, BY_STRICTNESS
from guard.view.audit_queries import AuditQueries, RuleStats
from guard.view.sources import ViewSources, local_time

__all__ = ["RANGES", "routes"]

#: The time ranges the page offers, in seconds (None: the whole log).
RANGES: dict[str, float | None] = {"24h": 86_400.0, "7d": 7 * 86_400.0, "30d": 30 * 86_400.0, "all": None}
_VERDICTS = (*BY_STRICTNESS, ABSTAIN)
CHART_WIDTH, CHART_HEIGHT = 300, 48


def chart(rule: RuleStats) -> list[dict[str, Any]]:
    """The bars of ``rule``'s chart: one rectangle per verdict per bucket, stacked, scaled to the busiest bucket."""
    tallest = max((sum(b.values()) for b in rule.buckets), default=0) or 1
    width = CHART_WIDTH / max(len(rule.buckets), 1)
    bars: list[dict[str, Any]] = []
    for i, bucket in enumerate(rule.buckets):
        y = float(CHART_HEIGHT)
        for verdict in _VERDICTS:
            height = CHART_HEIGHT * bucket[verdict] / tallest
            if height > 0:
                y -= height
                bars.append(
                    {
                        "x": round(i * width, 2),
                        "y": round(y, 2),
                        "w": round(width * 0.9, 2),
                        "h": round(height, 2),
                        "verdict": verdict,
                        "n": bucket[verdict],
                    }
                )
    return bars


def _record(rule: RuleStats) -> dict[str, Any]:
    """One rule's enforced and shadow records, as ``/rules.json`` gives them."""
    enforced = {
        name: getattr(rule, name)
        for name in (
            "calls",
            "allow",
            "ask",
            "deny",
            "abstain",
            "errors",
            "fail_open",
            "cached",
            "cost_usd",
            "p50_ms",
            "p95_ms",
        )
    }
    shadow = {
        "calls": rule.shadow_calls,
        "allow": rule.shadow_allow,
        "ask": rule.shadow_ask,
        "deny": rule.shadow_deny,
        "examples": rule.shadow_examples,
    }
    return {"rule": rule.hook, "type": rule.type, "enforced": enforced, "shadow": shadow}


def routes(sources: ViewSources, pages: Jinja2Templates) -> list[BaseRoute]:
    audit = AuditQueries(sources.audit)

    def chosen_stats(request: Request) -> tuple[str, float | None, list[RuleStats], tuple[float, float] | None]:
        chosen = request.query_params.get("range", "all")
        if chosen not in RANGES:
            chosen = "all"
        length = RANGES[chosen]
        stats, span = audit.rules(since=time.time() - length if length is not None else None)
        for rule in stats:
            for example in rule.shadow_examples:
                example["reason"] = (
                    redacted_text(example["reason"], sources.redact) if example["reason"] else example["reason"]
                )
        return chosen, length, stats, span

    def as_json(request: Request) -> Response:
        chosen, _, stats, span = chosen_stats(request)
        return JSONResponse({"range": chosen, "span": span, "rules": [_record(rule) for rule in stats]})

    def index(request: Request) -> Response:
        chosen, length, stats, span = chosen_stats(request)
        context = {
            "section": "rules",
            "rules": [{"stats": rule, "bars": chart(rule)} for rule in stats],
            "span": [local_time(t) for t in span] if span else None,
            "ranges": list(RANGES),
            "chosen": chosen,
            "since": time.strftime("%Y-%m-%dT%H:%M", time.localtime(span[0])) if span and length is not None else None,
            "width": CHART_WIDTH,
            "height": CHART_HEIGHT,
            "audit": sources.audit,
        }
        return pages.TemplateResponse(request, "rules.html", context)

    return [Route("/rules", index, name="rules"), Route("/rules.json", as_json, name="rules_json")]
