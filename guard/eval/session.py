"""One eval run end to end: load, judge (resuming), score, compare, gate, write the outputs.

Used by ``guard eval`` and by the pytest fixture. Exit codes follow promptfoo's
split, because a CI job must tell "the judge got worse" from "the run broke":
0 = every gate holds, 100 = a quality gate failed, or against the baseline a
significant drop or more regressions / new denies / new allows than allowed,
1 = the run broke (bad dataset or config, unreachable or unauthorised model;
raised as GuardError before judging, or the run stopped), 3 = replay had no
recording for some cases (a rule or case changed since the cassettes were made):
re-record, 4 = some cases could not be judged (a timeout, a provider error): the
run finished and its other verdicts stand, and running it again with the same
``--out`` judges only those. Under 3 and 4 nothing was gated: an unjudged case is
neither a pass nor a regression, and a gate over the rest could pass only because
the hard cases were left out.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from guard.config.loading import load_config
from guard.core.errors import GuardError
from guard.core.settings import Settings
from guard.core.spec import DEPTHS
from guard.eval.base_rate import parse_prevalence
from guard.eval.cases import JudgedCase, load_datasets
from guard.eval.compare import RANK_METRICS, Limits, baseline_pairs, load_baseline
from guard.eval.gates import GATE_METRICS, ROUTE_METRIC, Gate, parse_gate
from guard.eval.outputs import build_report, write_outputs
from guard.eval.prices import PriceBook, parse_price
from guard.eval.recording import recording
from guard.eval.routes import judge_routes
from guard.eval.runner import (
    DEFAULT_CONCURRENCY,
    EngineJudge,
    ResultsFile,
    Variant,
    WorkItem,
    plan,
    read_rows,
    run_in_workers,
    run_schedule,
)
from guard.eval.schema import Estimate, MetricsReport, ResultRow, UnrecordedRule
from guard.eval.tables import case_lines, failure_lines
from guard.judge.model import response_mode
from guard.protection.targets import HOOK_ID

if TYPE_CHECKING:
    from guard.core.settings import LoadedConfig

__all__ = [
    "JUDGINGS",
    "EXIT_ERROR",
    "EXIT_GATE",
    "EXIT_NOT_JUDGED",
    "EXIT_OK",
    "EXIT_UNRECORDED",
    "EvalResult",
    "evaluate",
    "evaluate_async",
    "warm_up",
]

EXIT_OK, EXIT_ERROR, EXIT_UNRECORDED, EXIT_NOT_JUDGED, EXIT_GATE = 0, 1, 3, 4, 100
#: ``--judging``: a case's rules in one request with the config's other rules on the call, or each in a request of its own.
JUDGINGS = ("together", "apart")


@dataclass
class EvalResult:
    """What a run produced: the metrics, the rows, where the files are, and its exit code."""

    report: MetricsReport
    rows: list[ResultRow]
    out: Path
    exit_code: int
    problems: list[str] = field(default_factory=list)
    judged: int = 0  # rows judged by this run
    reused: int = 0  # rows kept from an earlier run in the same --out
    backoffs: int = 0  # times a model's concurrency was halved after a 429

    def assert_metrics(self, **minimums: float) -> EvalResult:
        """Assert each metric is at least its minimum for every (model, depth), e.g. ``f1=0.9``; the failure names the misjudged cases."""

        failures = list(self.problems if self.exit_code == EXIT_ERROR else [])
        failed = []
        for name, minimum in minimums.items():
            if name not in GATE_METRICS:
                raise ValueError(f"unknown metric {name!r}; choose from {', '.join(GATE_METRICS)}")
            for variant in self.report.variants:
                est = variant.metrics.get(name, Estimate())
                if est.value is None or est.value < minimum:
                    interval = (
                        f" [{est.low:.3f}, {est.high:.3f}]" if est.low is not None and est.high is not None else ""
                    )
                    shown = "undefined" if est.value is None else f"{est.value:.3f}{interval}"
                    failures.append(f"{variant.name}: {name} = {shown} < {minimum}")
                    if variant not in failed:
                        failed.append(variant)
        if failures:
            wrong = [
                line
                for variant in failed
                for line in case_lines(
                    self.report,
                    variant,
                    [k for k, o in variant.case_outcomes.items() if not o.correct],
                    "misjudged" if len(self.report.variants) == 1 else f"misjudged by {variant.name}:",
                )
            ]
            raise AssertionError(
                "guard eval: "
                + "; ".join(failures)
                + "".join(f"\n  {line}" for line in wrong)
                + f"\n(report: {self.out / 'report.md'})"
            )
        return self

    def assert_passed(self) -> EvalResult:
        """Assert the run's gates and baseline limits hold (exit 0); the failure names the regressed or misjudged cases."""

        if self.exit_code != EXIT_OK:
            raise AssertionError(
                "guard eval: "
                + "\n  ".join([*self.problems, *failure_lines(self.report)])
                + f"\n(report: {self.out / 'report.md'})"
            )
        return self


def _model_label(settings: Settings) -> str:
    quick, thorough = settings.model_for("quick"), settings.model_for("thorough")
    if quick and thorough and quick != thorough:
        return f"{quick}+{thorough}"
    return quick or thorough or "unconfigured"


def build_variants(
    settings: Settings, models: Sequence[str], depths: Sequence[str], judgings: Sequence[str] = ()
) -> list[Variant]:
    """Every (model, depth, judging) triple; caching and the audit log are off for all of them.

    A judging (``together``: each case's rules in one request with the config's other rules on the same call;
    ``apart``: each rule in a request of its own) shows in the depth's label, ``auto, apart``.
    """
    for asked in depths:
        if asked not in DEPTHS:
            raise GuardError(f"--depth {asked!r}: choose quick, thorough or auto")
    for asked in judgings:
        if asked not in JUDGINGS:
            raise GuardError(f"--judging {asked!r}: choose together or apart")
    base = settings.replace(cache_url="off", audit_path=None)
    variants = []
    model_choices: list[str | None] = [*dict.fromkeys(models)] or [None]
    depth_choices: list[str | None] = [*dict.fromkeys(depths)] or [None]
    judging_choices: list[str | None] = [*dict.fromkeys(judgings)] or [None]
    for model in model_choices:
        for depth in depth_choices:
            for judging in judging_choices:
                pinned = base.replace(models={"quick": model, "thorough": model}) if model else base
                label = (depth or "config") + (f", {judging}" if judging else "")
                variants.append(
                    Variant(
                        model or _model_label(base),
                        label,
                        pinned,
                        pinned_model=model,
                        pinned_depth=depth,
                        judging=judging,
                    )
                )
    return variants


@contextmanager
def _engine_log_quiet() -> Iterator[None]:
    """Hook failures become rows and report lines; one log line each would drown the progress bar."""
    engine_log = logging.getLogger("guard.engine")
    level = engine_log.level
    engine_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        engine_log.setLevel(level)


def warm_up(model: str | None) -> None:
    """Import LiteLLM before the clock starts: its seconds-long import must not land in the first rows' latency."""

    response_mode(model or "openai/unset")


async def evaluate_async(
    datasets: Sequence[str],
    *,
    config: str | None = None,
    models: Sequence[str] = (),
    depths: Sequence[str] = (),
    judgings: Sequence[str] = (),
    repeats: int = 1,
    concurrency: int = DEFAULT_CONCURRENCY,
    workers: int = 1,
    record: str | None = None,
    replay: str | None = None,
    out: str = ".eval-out",
    fail_under: Sequence[str | Gate] = (),
    baseline: str | None = None,
    progress: bool | None = None,
    seed: int = 0,
    prevalence: float | None = None,
    prices: Sequence[str] = (),
    rank_by: str = "f1",
    max_regressions: int | None = None,
    max_new_denies: int | None = None,
    max_new_allows: int | None = None,
    routes: bool = False,
) -> EvalResult:
    """Run an eval and write its outputs into ``out``; see the module docstring for exit codes.

    ``routes`` adds route coverage (:mod:`guard.eval.routes`): each deny case's effect by
    every other route, through its rule's matcher and judge (not resumed: judged each run).

    ``prevalence`` (the share of real calls that should be stopped) adds precision,
    alert volume and false denies per 1,000 calls at that base rate. ``prices``
    (``MODEL=IN/OUT``, USD per million tokens) price models the config's ``prices:``
    and LiteLLM's map do not. ``rank_by`` is the metric a multi-model run is ranked
    and tested on. With a ``baseline``, ``max_regressions`` defaults to 0: a case
    that was right may not turn wrong unless allowed.
    """

    if record and replay:
        raise GuardError("--record and --replay exclude each other")
    if repeats < 1 or concurrency < 1:
        raise GuardError("--repeats and --concurrency must be at least 1")
    if not 1 <= workers <= concurrency:
        raise GuardError(f"--workers must be between 1 and --concurrency ({concurrency})")
    if workers > 1 and (record or replay):
        raise GuardError("--record/--replay keep one cassette in one process: run them without --workers")
    if not datasets:
        raise GuardError("name at least one dataset (.jsonl)")
    gates = [parse_gate(g) if isinstance(g, str) else g for g in fail_under]
    if not routes and any(metric == ROUTE_METRIC for metric, _ in gates):
        raise GuardError(f"--fail-under {ROUTE_METRIC} is measured by --routes: add --routes")
    if rank_by not in RANK_METRICS:
        raise GuardError(f"--rank-by {rank_by}: choose one of {', '.join(RANK_METRICS)}")
    if baseline is None and any(limit is not None for limit in (max_regressions, max_new_denies, max_new_allows)):
        raise GuardError(
            "--max-regressions, --max-new-denies and --max-new-allows count changes against a baseline: add --baseline FILE"
        )
    if any(limit is not None and limit < 0 for limit in (max_regressions, max_new_denies, max_new_allows)):
        raise GuardError("--max-regressions, --max-new-denies and --max-new-allows must be at least 0")
    given = dict(parse_price(text) for text in prices)
    if prevalence is not None:
        try:
            parse_prevalence(prevalence)
        except ValueError as exc:
            raise GuardError(f"--prevalence: {exc}") from None
    loaded = _rules_only(load_config(config))
    infos, cases = load_datasets(datasets, loaded.specs)
    variants = build_variants(loaded.settings, models, depths, judgings)
    base = (baseline, load_baseline(baseline)) if baseline else None
    if base:
        baseline_pairs(variants, base[1], base[0])  # fails now, not after paying for the run
    results_path = Path(out) / "results.jsonl"

    with ExitStack() as stack:
        stack.enter_context(_engine_log_quiet())
        existing = read_rows(results_path)
        mode, directory = ("record", record) if record else ("replay", replay) if replay else (None, None)
        recorder = (
            stack.enter_context(recording(mode, directory, [i.name for i in infos], resume=bool(existing)))
            if mode and directory
            else None
        )
        judge = EngineJudge(variants, recorder)
        items = [WorkItem(v, c, r, judge.fingerprint(v, c)) for r in range(repeats) for c in cases for v in variants]
        kept, todo = plan(items, existing)
        await judge.warm(todo)  # every variant's client, before any row is timed
        sink = ResultsFile(results_path, kept)
        stack.callback(sink.close)
        if workers > 1:
            outcome = await run_in_workers(
                todo, variants, sink, workers=workers, concurrency=concurrency, progress=progress
            )
        else:
            outcome = await run_schedule(todo, judge, sink, concurrency=concurrency, progress=progress)
        order = {item.key: index for index, item in enumerate(items)}
        rows = sorted([*kept, *outcome.rows], key=lambda row: order[row.key])
        coverage = (
            await judge_routes(variants, cases, rows, judge, concurrency=concurrency)
            if routes and not outcome.aborted
            else []
        )

    by_key = {case.key: case for case in cases}
    limits = Limits(
        regressions=0 if max_regressions is None else max_regressions,
        new_denies=max_new_denies,
        new_allows=max_new_allows,
    )
    report = build_report(
        rows,
        infos,
        variants,
        config=str(loaded.sources[0]) if loaded.sources else config,
        repeats=repeats,
        replayed=bool(replay),
        gates=gates,
        baseline=base,
        seed=seed,
        prevalence=prevalence,
        book=PriceBook(given, loaded.settings.prices),
        metric=rank_by,
        limits=limits,
        unrecorded=_unrecorded(rows, by_key),
        rerecord=_rerecord_command(datasets, config, models, depths, judgings, repeats, replay, out),
        inputs={key: case.summary for key, case in by_key.items()},
        routes=coverage,
    )
    write_outputs(Path(out), report)
    problems = [f"run stopped: {outcome.aborted}"] if outcome.aborted else []
    if outcome.aborted:
        code = EXIT_ERROR
    elif report.unrecorded:
        code = EXIT_UNRECORDED
    elif report.not_judged:
        code = EXIT_NOT_JUDGED
    elif any(not g.passed for g in report.gates) or any(b.failed for b in report.baseline):
        code = EXIT_GATE
    else:
        code = EXIT_OK
    return EvalResult(
        report=report,
        rows=rows,
        out=Path(out),
        exit_code=code,
        problems=problems,
        judged=len(outcome.rows),
        reused=len(kept),
        backoffs=outcome.rate_limit_backoffs,
    )


def _unrecorded(rows: Sequence[ResultRow], cases: dict[str, JudgedCase]) -> list[UnrecordedRule]:
    """The cases replay had no recording for, grouped by the rules that judge them, most cases first."""
    groups: dict[str, list[str]] = {}
    for row in rows:
        if row.error_kind == "unrecorded":
            key = f"{row.dataset}/{row.case_id}"
            members = groups.setdefault(cases[key].model_rules, [])
            if key not in members:
                members.append(key)
    return [
        UnrecordedRule(rule=rule, cases=keys) for rule, keys in sorted(groups.items(), key=lambda item: -len(item[1]))
    ]


def _rerecord_command(
    datasets: Sequence[str],
    config: str | None,
    models: Sequence[str],
    depths: Sequence[str],
    judgings: Sequence[str],
    repeats: int,
    replay: str | None,
    out: str,
) -> str | None:
    """The ``guard eval --record`` that fills in what this replay missed (into the same --out, so only those calls are made)."""
    if replay is None:
        return None
    args = ["guard", "eval", *datasets, *(["--config", config] if config else [])]
    args += (
        [f"--model={model}" for model in models]
        + [f"--depth={depth}" for depth in depths]
        + [f"--judging={how}" for how in judgings]
    )
    args += [*(["--repeats", str(repeats)] if repeats > 1 else []), "--record", replay, "--out", out]
    return shlex.join(args)


def evaluate(datasets: Sequence[str], **options: object) -> EvalResult:
    """Blocking :func:`evaluate_async` (for the CLI and synchronous tests)."""
    return asyncio.run(evaluate_async(datasets, **options))  # type: ignore[arg-type]


def _rules_only(loaded: LoadedConfig) -> LoadedConfig:
    """``loaded`` without the built-in self-protection hook: eval scores the config's rules against labels.

    Self-protection refuses what names *this machine's* guard files (its secret, state and
    client settings), so a dataset case that happens to name ``/`` or ``~`` would be decided by
    where the eval runs, not by the rule or model under test.
    """

    loaded.specs = [spec for spec in loaded.specs if spec.id != HOOK_ID]
    return loaded
