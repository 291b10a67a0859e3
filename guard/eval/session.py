"""One eval run end to end: load, judge (resuming), score, compare, gate, write the outputs.

Used by ``guard eval`` and by the pytest fixture. Exit codes follow promptfoo's
split, because a CI job must tell "the judge got worse" from "the run broke":
0 = every gate holds, 100 = a quality gate failed or the baseline comparison found
a significant drop, 1 = the run could not judge (bad dataset or config, unreachable
model, missing recording; raised as GuardError before judging, or reported here).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from guard.core.errors import GuardError
from guard.core.settings import Settings
from guard.eval.base_rate import parse_prevalence
from guard.eval.compare import baseline_pairs, load_baseline
from guard.eval.gates import GATE_METRICS, Gate, parse_gate
from guard.eval.runner import DEFAULT_CONCURRENCY, EngineJudge, ResultsFile, Variant, WorkItem, plan, read_rows, run_in_workers, run_schedule
from guard.eval.schema import MetricsReport, ResultRow

__all__ = ["DEPTHS", "EXIT_ERROR", "EXIT_GATE", "EXIT_OK", "STUB_MODEL_PREFIX", "EvalResult", "evaluate", "evaluate_async", "stub_reason", "warm_up"]

EXIT_OK, EXIT_ERROR, EXIT_GATE = 0, 1, 100
DEPTHS = ("quick", "thorough", "auto")
#: A model whose name (after the provider prefix) starts with this is a test double.
STUB_MODEL_PREFIX = "stub"


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
        """Assert each metric is at least its minimum for every (model, depth); e.g. ``f1=0.9``."""
        failures = list(self.problems if self.exit_code == EXIT_ERROR else [])
        for name, minimum in minimums.items():
            if name not in GATE_METRICS:
                raise ValueError(f"unknown metric {name!r}; choose from {', '.join(GATE_METRICS)}")
            for variant in self.report.variants:
                est = variant.metrics[name]
                if est.value is None or est.value < minimum:
                    interval = f" [{est.low:.3f}, {est.high:.3f}]" if est.low is not None and est.high is not None else ""
                    shown = "undefined" if est.value is None else f"{est.value:.3f}{interval}"
                    failures.append(f"{variant.name}: {name} = {shown} < {minimum}")
        if failures:
            raise AssertionError("guard eval: " + "; ".join(failures) + f" (report: {self.out / 'report.md'})")
        return self


def _model_label(settings: Settings) -> str:
    quick, thorough = settings.model_for("quick"), settings.model_for("thorough")
    if quick and thorough and quick != thorough:
        return f"{quick}+{thorough}"
    return quick or thorough or "unconfigured"


def build_variants(settings: Settings, models: Sequence[str], depths: Sequence[str]) -> list[Variant]:
    """Every (model, depth) pair; caching and the audit log are off for all of them."""
    for asked in depths:
        if asked not in DEPTHS:
            raise GuardError(f"--depth {asked!r}: choose quick, thorough or auto")
    base = settings.replace(cache_url="off", audit_path=None)
    variants = []
    model_choices: list[str | None] = [*dict.fromkeys(models)] or [None]
    depth_choices: list[str | None] = [*dict.fromkeys(depths)] or [None]
    for model in model_choices:
        for depth in depth_choices:
            pinned = base.replace(models={"quick": model, "thorough": model}) if model else base
            variants.append(Variant(model or _model_label(base), depth or "config", pinned, pinned_model=model, pinned_depth=depth))
    return variants


def stub_reason(variants: Sequence[Variant]) -> str | None:
    """Why these figures come from a test double (loopback endpoint or a stub model), if they do."""
    for variant in variants:
        base = variant.settings.effective_api_base()
        host = urlparse(base).hostname if base else None
        if host:
            try:
                loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
            except ValueError:
                loopback = False
            if loopback:
                return f"api_base {base} is a loopback address: a stub or local server"
        for model in (variant.pinned_model, variant.settings.model_for("quick"), variant.settings.model_for("thorough")):
            if model and model.split("/", 1)[-1].startswith(STUB_MODEL_PREFIX):
                return f"model {model} is a stub"
    return None


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
    from guard.judge.model import response_mode

    response_mode(model or "openai/unset")


def _warm_up(items: Sequence[WorkItem]) -> None:
    smart = next((item for item in items if any(spec.kind == "smart" for spec in item.case.specs)), None)
    if smart is not None:
        warm_up(smart.variant.pinned_model or smart.variant.settings.model_for("quick"))


async def evaluate_async(
    datasets: Sequence[str],
    *,
    config: str | None = None,
    models: Sequence[str] = (),
    depths: Sequence[str] = (),
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
) -> EvalResult:
    """Run an eval and write its outputs into ``out``; see the module docstring for exit codes.

    ``prevalence`` (the share of real calls that should be stopped) adds precision,
    alert volume and false denies per 1,000 calls at that base rate.
    """
    from guard.config import load_config
    from guard.eval.cases import load_datasets
    from guard.eval.outputs import build_report, write_outputs
    from guard.eval.recording import recording

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
    if prevalence is not None:
        try:
            parse_prevalence(prevalence)
        except ValueError as exc:
            raise GuardError(f"--prevalence: {exc}") from None
    loaded = load_config(config)
    infos, cases = load_datasets(datasets, loaded.specs)
    variants = build_variants(loaded.settings, models, depths)
    base = (baseline, load_baseline(baseline)) if baseline else None
    if base:
        baseline_pairs(variants, base[1], base[0])  # fails now, not after paying for the run
    results_path = Path(out) / "results.jsonl"

    with ExitStack() as stack:
        stack.enter_context(_engine_log_quiet())
        existing = read_rows(results_path)
        mode, directory = ("record", record) if record else ("replay", replay) if replay else (None, None)
        recorder = stack.enter_context(recording(mode, directory, [i.name for i in infos], resume=bool(existing))) if mode and directory else None
        judge = EngineJudge(variants, recorder)
        items = [WorkItem(v, c, r, judge.fingerprint(v, c)) for r in range(repeats) for c in cases for v in variants]
        kept, todo = plan(items, existing)
        _warm_up(todo)
        sink = ResultsFile(results_path, kept)
        stack.callback(sink.close)
        if workers > 1:
            outcome = await run_in_workers(todo, variants, sink, workers=workers, concurrency=concurrency, progress=progress)
        else:
            outcome = await run_schedule(todo, judge, sink, concurrency=concurrency, progress=progress)

    order = {item.key: index for index, item in enumerate(items)}
    rows = sorted([*kept, *outcome.rows], key=lambda row: order[row.key])
    report = build_report(
        rows, infos, variants, config=str(loaded.sources[0]) if loaded.sources else config, repeats=repeats,
        replayed=bool(replay), stub=stub_reason(variants), gates=gates, baseline=base, seed=seed, prevalence=prevalence,
    )
    write_outputs(Path(out), report)
    problems = [f"run stopped: {outcome.aborted}"] if outcome.aborted else []
    if outcome.aborted:
        code = EXIT_ERROR
    elif any(not g.passed for g in report.gates) or any(b.significant_drop for b in report.baseline):
        code = EXIT_GATE
    else:
        code = EXIT_OK
    return EvalResult(report=report, rows=rows, out=Path(out), exit_code=code, problems=problems, judged=len(outcome.rows), reused=len(kept), backoffs=outcome.rate_limit_backoffs)


def evaluate(datasets: Sequence[str], **options: object) -> EvalResult:
    """Blocking :func:`evaluate_async` (for the CLI and synchronous tests)."""
    return asyncio.run(evaluate_async(datasets, **options))  # type: ignore[arg-type]
