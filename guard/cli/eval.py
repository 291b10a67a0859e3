"""``guard eval``: score verdicts on labeled datasets; 0 pass, 100 a quality gate failed, 3 re-record, 4 could not judge some cases, 1 error.

Everything heavy (pandas, matplotlib, vcrpy, LiteLLM) is imported inside ``run``.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from guard.cli.arguments import whole_number
from guard.config.pinning import trust_note
from guard.core.extras import require
from guard.core.settings import MODEL_ENV, from_env
from guard.eval.runner import DEFAULT_CONCURRENCY
from guard.eval.session import EXIT_GATE, EXIT_NOT_JUDGED, EXIT_UNRECORDED, evaluate
from guard.eval.tables import (
    failure_lines,
    fmt_estimate,
    not_judged_line,
    rerecord_line,
    result_line,
    route_lines,
    verdict_lines,
)

if TYPE_CHECKING:
    from guard.eval.schema import OperatingPoint, PrevalenceMetrics

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "eval",
        help="score verdicts against labeled datasets (exit 0 pass, 100 gate failed, 3 re-record, 4 could not judge some cases, 1 error)",
        description="Judge every case x model x depth x repeat through guard's engine and write "
        "results.jsonl, metrics.json, report.md, report.html and junit.xml into --out. "
        "Exit 0: every gate and limit holds; 100: a gate failed, or against --baseline a significant drop or more "
        "regressions / new denies / new allows than allowed; 3: --replay found no recording for some cases "
        "(a rule or case changed): re-record them, nothing was gated; 4: some cases could not be judged (a timeout, a provider error): "
        "they count in no figure and as no regression, nothing was gated, and the same command judges only them again; "
        "1: the run broke (bad dataset or config, unreachable or unauthorised model).",
    )
    p.add_argument("datasets", nargs="+", metavar="DATASET", help="labeled .jsonl files")
    p.add_argument("--config", metavar="P", help="guard.yaml whose hooks and models are evaluated")
    p.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="M",
        help="LiteLLM model id for both tiers (repeatable: compares models)",
    )
    p.add_argument(
        "--depth",
        action="append",
        default=[],
        metavar="D",
        help="quick | thorough | auto (repeatable; default: as configured)",
    )
    p.add_argument(
        "--judging",
        action="append",
        default=[],
        metavar="J",
        help="together (each case's rules in one model request with the config's other rules on the same call) | apart "
        "(each rule in a request of its own); repeatable, --judging together --judging apart compares them; default: as configured",
    )
    p.add_argument(
        "--repeats", type=int, default=1, metavar="N", help="judge each case N times (flip rate, majority vote)"
    )
    p.add_argument(
        "--concurrency", type=int, metavar="N", help="model calls in flight per model (default 8; halves on 429)"
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="judge in N processes sharing --concurrency, when one process's CPU is the bottleneck (default 1)",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--record", metavar="DIR", help="record the model's HTTP exchanges as cassettes in DIR")
    mode.add_argument(
        "--replay",
        metavar="DIR",
        help="answer from cassettes in DIR with the network blocked: no provider key or endpoint needed",
    )
    p.add_argument(
        "--out", default=".eval-out", metavar="DIR", help="output folder; rerunning resumes it (default .eval-out)"
    )
    p.add_argument(
        "--fail-under",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="exit 100 when METRIC is below VALUE for any model (repeatable), e.g. f1=0.9",
    )
    p.add_argument(
        "--baseline",
        metavar="FILE",
        help="previous metrics.json or results.jsonl: exit 100 on a significant drop or a --max-* limit",
    )
    p.add_argument(
        "--max-regressions",
        type=whole_number(0),
        metavar="N",
        help="with --baseline: exit 100 when more than N cases that were right are wrong now (default 0)",
    )
    p.add_argument(
        "--max-new-denies",
        type=whole_number(0),
        metavar="N",
        help="with --baseline: exit 100 when more than N cases the baseline let through are stopped now",
    )
    p.add_argument(
        "--max-new-allows",
        type=whole_number(0),
        metavar="N",
        help="with --baseline: exit 100 when more than N cases the baseline stopped are let through now",
    )
    p.add_argument(
        "--rank-by",
        default="f1",
        metavar="METRIC",
        help="metric models are ranked and tested on: f1 (default), accuracy, precision, recall, specificity, kappa",
    )
    p.add_argument(
        "--price",
        action="append",
        default=[],
        metavar="MODEL=IN/OUT",
        help="USD per million input/output tokens for MODEL (repeatable), e.g. openai/llama-3.1-8b=0.05/0.08; else the config's prices: block, else LiteLLM's price map",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument(
        "--prevalence",
        type=float,
        metavar="P",
        help="share of real calls that should be stopped (e.g. 0.02): adds precision, calls stopped and false denies per 1,000 calls at that base rate",
    )
    p.add_argument(
        "--suggest-thresholds",
        action="store_true",
        help="print the confidence_threshold that keeps each model within a 1%% and 0.1%% false-positive budget",
    )
    p.add_argument(
        "--routes",
        action="store_true",
        help="route coverage: rebuild each deny case's effect by other routes (Write for cat >, tee, sed -i, "
        "apply_patch, an MCP write, other clients' tools…) and report per rule the routes its matcher does not see and those judged differently; "
        "gate it with --fail-under route_coverage=VALUE",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar even on a terminal")
    p.set_defaults(func=run, on_interrupt=interrupted)


def _split(values: list[str]) -> list[str]:
    """``--depth quick,thorough`` and ``--depth quick --depth thorough`` mean the same."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _base_rate_line(at: PrevalenceMetrics) -> str:
    return (
        f"at prevalence {at.prevalence:g}: precision {fmt_estimate(at.precision)}, "
        f"calls stopped per 1,000 {fmt_estimate(at.alerts_per_1k)}, false denies per 1,000 {fmt_estimate(at.false_denies_per_1k)}"
    )


def _threshold_line(point: OperatingPoint) -> str:
    """The confidence_threshold a team can set for one false-positive budget, from the measured P(deny) threshold.

    A quick-tier deny at or above ``confidence_threshold`` decides; one below it goes
    to the thorough tier. A P(deny) threshold under 0.5 would mean stopping calls the
    model allowed, which no confidence_threshold does.
    """
    budget = f"FPR ≤ {point.target_fpr:g}"
    if point.recall.value is None:
        return f"{budget}: no threshold (the dataset needs both positive and negative cases)"
    reached = f"recall {fmt_estimate(point.recall)} at FPR {point.fpr:.4f} on {point.negatives} negatives"
    if point.negatives * point.target_fpr < 1:
        reached += f" (fewer than {1 / point.target_fpr:.0f} negatives: the budget is finer than one case)"
    if point.threshold is None:
        return f"{budget}: even the surest deny exceeds the budget; recall 0"
    if point.threshold < 0.5:
        return f"{budget}: needs stopping calls the model allowed (P(deny) ≥ {point.threshold:.3f}); no confidence_threshold reaches it; {reached}"
    return f"{budget}: confidence_threshold: {point.threshold:g}  ({reached})"


def _model_overrides() -> str:
    """``GUARD_MODEL_QUICK=stub`` and the like, as set: what a five-minute-guide shell still exports."""
    return ", ".join(f"{name}={value}" for name in MODEL_ENV.values() if (value := from_env(name)))


def interrupted(args: argparse.Namespace) -> int:
    """Ctrl-C: the rows judged so far stay in results.jsonl, and the same command picks up from them."""
    try:
        with open(f"{args.out}/results.jsonl", "rb") as fh:
            kept = sum(1 for line in fh if line.strip())
    except OSError:
        kept = 0
    print(
        f"guard eval: interrupted; {kept} judged row(s) are kept in {args.out}/results.jsonl: "
        "run the same command again to judge only the rest",
        file=sys.stderr,
    )
    return 130


def run(args: argparse.Namespace) -> int:
    require("eval", "guard eval")  # before judging a single case

    note = trust_note(args.config)  # the eval reads the disk; guard hook enforces the trusted copy
    if note:
        print(f"guard eval: note: {note}", file=sys.stderr)
    result = evaluate(
        args.datasets,
        config=args.config,
        models=args.model,
        depths=_split(args.depth),
        judgings=_split(args.judging),
        repeats=args.repeats,
        concurrency=args.concurrency or DEFAULT_CONCURRENCY,
        workers=args.workers,
        record=args.record,
        replay=args.replay,
        out=args.out,
        fail_under=args.fail_under,
        baseline=args.baseline,
        progress=False if args.no_progress else None,
        seed=args.seed,
        prevalence=args.prevalence,
        prices=args.price,
        rank_by=args.rank_by,
        max_regressions=args.max_regressions,
        max_new_denies=args.max_new_denies,
        max_new_allows=args.max_new_allows,
        routes=args.routes,
    )
    report = result.report
    print(f"judged {result.judged} row(s), reused {result.reused} from {result.out}/results.jsonl")
    if result.backoffs:
        print(f"rate limited: concurrency halved {result.backoffs} time(s) and recovered as calls succeeded")
    left_out = f" judged ({report.unrecorded_cases} without a recording left out)" if report.unrecorded else ""
    for variant in report.variants:
        f1, acc = variant.metrics["f1"], variant.metrics["accuracy"]
        shown = "–" if f1.value is None else f"{f1.value:.3f}"
        unjudged = f", could not judge {variant.not_judged}" if variant.not_judged else ""
        print(
            f"{variant.name}: {variant.cases} cases{left_out}, accuracy {acc.value or 0:.3f}, F1 {shown}, errors {variant.errors}{unjudged}"
        )
        if variant.at_prevalence is not None:
            print("  " + _base_rate_line(variant.at_prevalence))
        if args.suggest_thresholds:
            for point in variant.operating_points:
                print("  " + _threshold_line(point))
    if report.stub:
        print(f"note: figures from a stub model ({report.stub_reason})")
    for line in verdict_lines(report):
        print(line)
    for line in route_lines(report):
        print(line)
    if (outcome := result_line(report)) is not None:
        print(outcome)
    if result.exit_code == EXIT_UNRECORDED:
        print(f"guard eval: {rerecord_line(report)}", file=sys.stderr)
        if (overrides := _model_overrides()) and not args.model:
            print(
                f"guard eval: note: {overrides} in the environment replace the config's models, and a recording is "
                "found by the model it was asked for: unset them to replay what was recorded with the config's models "
                "(re-recording would replace those answers with this model's)",
                file=sys.stderr,
            )
    elif result.exit_code == EXIT_NOT_JUDGED:
        print(f"guard eval: {not_judged_line(report)}", file=sys.stderr)
    elif result.exit_code == EXIT_GATE:
        for line in failure_lines(report):
            print(line, file=sys.stderr)
    for problem in result.problems:
        print(f"guard eval: {problem}", file=sys.stderr)
    print(f"outputs in {result.out}/ (report.md, report.html, metrics.json, results.jsonl, junit.xml)")
    return result.exit_code
