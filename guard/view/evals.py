"""The evals pages of the view: the runs found, one run, two runs side by side, one case.

Every figure comes from what ``guard eval`` wrote and is put in words by the same
code as its reports (:mod:`guard.eval.tables`); comparing two runs is
``compare_to_baseline``, so "regressed" and "significant drop" mean here what they
mean to ``guard eval --baseline``. A run is named by its id and a variant by its
index (``ID|N``), both only looked up among the runs found (:mod:`guard.view.eval_runs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates

from guard.eval import tables
from guard.eval.compare import SIGNIFICANCE, compare_to_baseline
from guard.eval.schema import Estimate, ResultRow, VariantMetrics
from guard.view.eval_reliability import reliability_chart
from guard.view.eval_runs import EvalRun, case_input, find_runs, load_results
from guard.view.sources import ViewSources, index_param

__all__ = ["routes"]

#: Per-case rows one page lists before asking for a narrower filter.
CASE_LIMIT = 500
#: The metrics a comparison lists, and whether a rise is good.
DELTA_METRICS = {
    "f1": True,
    "accuracy": True,
    "precision": True,
    "recall": True,
    "fpr": False,
    "specificity": True,
    "kappa": True,
    "error_rate": False,
}
OUTCOMES = ("all", "wrong", "right")


@dataclass(frozen=True)
class Side:
    """One variant of one run: what a comparison or a case view puts in a column."""

    run: EvalRun
    index: int
    variant: VariantMetrics

    @property
    def ref(self) -> str:
        return f"{self.run.id}|{self.index}"

    @property
    def label(self) -> str:
        return f"{self.run.name} · {self.variant.name}"


def _side(runs: dict[str, EvalRun], ref: str | None) -> Side | None:
    run_id, _, given = (ref or "").rpartition("|")
    run, index = runs.get(run_id), index_param(given)
    if run is None or index is None:
        return None
    variant = run.variant(index)
    return Side(run, index, variant) if variant else None


def _sides(runs: list[EvalRun]) -> list[Side]:
    return [Side(run, i, v) for run in runs if run.report for i, v in enumerate(run.report.variants)]


def _delta(a: Estimate, b: Estimate, higher_is_better: bool) -> tuple[str, str]:
    """B − A as text, and whether it is a gain, a loss or no change."""
    if a.value is None or b.value is None:
        return "–", ""
    diff = b.value - a.value
    if abs(diff) < 5e-4:
        return f"{diff:+.3f}", "same"
    return f"{diff:+.3f}", "better" if (diff > 0) == higher_is_better else "worse"


def _case_rows(run: EvalRun, variant: int | None, outcome: str, query: str) -> tuple[list[dict[str, Any]], int]:
    """The run's per-case outcomes that pass the filter (at most CASE_LIMIT), and how many passed."""
    found = []
    for side in _sides([run]):
        if variant is not None and side.index != variant:
            continue
        for key, o in side.variant.case_outcomes.items():
            if (
                (outcome == "wrong" and o.correct)
                or (outcome == "right" and not o.correct)
                or (query and query.lower() not in key.lower())
            ):
                continue
            found.append({"key": key, "side": side, "outcome": o})
    return found[:CASE_LIMIT], len(found)


def routes(sources: ViewSources, pages: Jinja2Templates) -> list[BaseRoute]:
    """The pages; plain functions, so Starlette runs them in its thread pool: reading a large run or
    bootstrapping a comparison never holds up the event loop of a ``guard serve`` that mounts the view."""

    def by_id() -> dict[str, EvalRun]:
        return {run.id: run for run in find_runs(sources.evals)}  # newest first, as listed

    def missing(request: Request, what: str) -> Response:
        return pages.TemplateResponse(request, "eval_missing.html", {"section": "evals", "what": what}, status_code=404)

    def index(request: Request) -> Response:
        runs = find_runs(sources.evals)
        readable = [run for run in runs if run.report and run.report.variants]
        previous = {
            newer.id: older for newer, older in zip(readable, readable[1:], strict=False)
        }  # newest first: the next one is older
        return pages.TemplateResponse(
            request,
            "evals.html",
            {"section": "evals", "runs": runs, "previous": previous, "folders": sources.evals, "tables": tables},
        )

    def run_page(request: Request) -> Response:
        run = by_id().get(request.query_params.get("run", ""))
        if run is None:
            return missing(request, "No such eval run among the configured folders.")
        if run.report is None:
            return pages.TemplateResponse(request, "eval_run.html", {"section": "evals", "run": run})
        report = run.report
        variant = index_param(request.query_params.get("variant"))
        variant = variant if variant is not None and run.variant(variant) else None
        outcome = request.query_params.get("outcome", "all")
        outcome = outcome if outcome in OUTCOMES else "all"
        query = request.query_params.get("q", "")[:200]
        cases, matched = _case_rows(run, variant, outcome, query)
        per_variant = [
            {
                "side": side,
                "confusion": tables.confusion_table(side.variant),
                "slices": tables.slice_table(side.variant),
                "chart": reliability_chart(load_results(run, side.variant)),
            }
            for side in _sides([run])
        ]
        context = {
            "section": "evals",
            "run": run,
            "report": report,
            "tables": tables,
            "title": tables.title(report),
            "notices": tables.notices(report),
            "result": tables.result_line(report),
            "headline": tables.headline_tables(report),
            "per_variant": per_variant,
            "cases": cases,
            "matched": matched,
            "filters": {"variant": variant, "outcome": outcome, "q": query},
            "outcomes": OUTCOMES,
        }
        return pages.TemplateResponse(request, "eval_run.html", context)

    def compare_page(request: Request) -> Response:
        runs = by_id()
        a = _side(runs, request.query_params.get("a"))
        b = _side(runs, request.query_params.get("b"))
        context: dict[str, Any] = {
            "section": "evals",
            "options": _sides(list(runs.values())),
            "a": a,
            "b": b,
            "significance": SIGNIFICANCE,
        }
        if (request.query_params.get("a") or request.query_params.get("b")) and (a is None or b is None):
            return missing(request, "Pick two variants of runs found in the configured folders.")
        if a is not None and b is not None:
            result = compare_to_baseline([b.variant], [a.variant], a.label)[0]
            va, vb = a.variant, b.variant
            context["result"] = result
            context["deltas"] = [
                (
                    name,
                    tables.fmt_estimate(va.metrics[name]),
                    tables.fmt_estimate(vb.metrics[name]),
                    *_delta(va.metrics[name], vb.metrics[name], up),
                )
                for name, up in DELTA_METRICS.items()
                if name in va.metrics and name in vb.metrics
            ]
            context["usage"] = [
                ("latency p50 ms", tables.fmt(va.latency_p50_ms, 0), tables.fmt(vb.latency_p50_ms, 0)),
                ("latency p95 ms", tables.fmt(va.latency_p95_ms, 0), tables.fmt(vb.latency_p95_ms, 0)),
                ("cost /1k", tables.fmt_cost(va.cost_per_1k_usd), tables.fmt_cost(vb.cost_per_1k_usd)),
                ("Brier", tables.fmt(va.brier), tables.fmt(vb.brier)),
                ("ECE", tables.fmt(va.ece), tables.fmt(vb.ece)),
            ]
            context["regressed"] = [(key, va.case_outcomes[key], vb.case_outcomes[key]) for key in result.regressed]
            context["improved"] = [(key, va.case_outcomes[key], vb.case_outcomes[key]) for key in result.improved]
        return pages.TemplateResponse(request, "eval_compare.html", context)

    def case_page(request: Request) -> Response:
        runs = by_id()
        refs = [ref for ref in (request.query_params.get("a"), request.query_params.get("b")) if ref]
        sides = [_side(runs, ref) for ref in refs]
        key = request.query_params.get("case", "")
        if not sides or any(s is None or key not in s.variant.case_outcomes for s in sides):
            return missing(request, "No such case in the eval run(s) named.")
        found = [s for s in sides if s is not None]
        columns = [
            {"side": s, "outcome": s.variant.case_outcomes[key], "rows": _rows_of(load_results(s.run, s.variant), key)}
            for s in found
        ]
        inputs = [case_input(s.run, key, sources.redact) for s in found]
        shown = next((c for c in inputs if c.missing is None), inputs[0])
        return pages.TemplateResponse(
            request, "eval_case.html", {"section": "evals", "key": key, "columns": columns, "case": shown}
        )

    return [
        Route("/evals", index, name="evals"),
        Route("/evals/run", run_page, name="eval_run"),
        Route("/evals/compare", compare_page, name="eval_compare"),
        Route("/evals/case", case_page, name="eval_case"),
    ]


def _rows_of(rows: list[ResultRow], key: str) -> list[ResultRow]:
    dataset, _, case_id = key.partition("/")
    return sorted((r for r in rows if r.dataset == dataset and r.case_id == case_id), key=lambda r: r.repeat)
