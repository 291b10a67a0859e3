"""``guard backtest``: replay logged decisions through a new config; 0 fine, 100 too many new denies or allows, 1 error."""

from __future__ import annotations

import argparse
import sys

from guard.backtest.session import backtest
from guard.cli.arguments import whole_number
from guard.config.search import find_config
from guard.core.errors import GuardError
from guard.eval.tables import rule_change_text

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "backtest",
        help="replay logged events through a new config and report what would flip (exit 0, 100 gate failed, 1 error)",
        description="Decide every replayable event of the audit log again through --config and compare with the recorded "
        "decisions (or --against OLD's); writes results.jsonl, metrics.json, report.md, report.html and junit.xml into --out. "
        "The replay writes no audit row, asks no guard serve and fires no fire_and_forget webhook.",
    )
    p.add_argument(
        "--config", metavar="NEW", help="the config to try (default: $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml)"
    )
    reference = p.add_mutually_exclusive_group()
    reference.add_argument(
        "--against", metavar="OLD", help="compare with OLD's decisions, replayed now, instead of the recorded ones"
    )
    reference.add_argument("--audit", action="store_true", help="compare with the recorded decisions (the default)")
    p.add_argument("--log", metavar="FILE", help="audit database (default: the live config's audit.path)")
    p.add_argument("--since", metavar="AGE", help="only events of the last AGE (30m, 12h, 7d)")
    p.add_argument("--session", metavar="ID", help="only events of one agent session")
    p.add_argument("--rule", metavar="ID", help="only events hook ID judged or would judge")
    p.add_argument("--sample", type=whole_number(1), metavar="N", help="a random sample of N events (seeded by --seed)")
    p.add_argument("--seed", type=int, default=0, help="sampling and bootstrap seed (default 0)")
    p.add_argument(
        "--concurrency", type=whole_number(1), default=8, metavar="N", help="events decided at once (default 8)"
    )
    p.add_argument("--out", default=".backtest-out", metavar="DIR", help="output folder (default .backtest-out)")
    p.add_argument(
        "--max-new-denies",
        type=whole_number(0),
        metavar="N",
        help="exit 100 when more than N events flip from allow to deny",
    )
    p.add_argument(
        "--max-new-allows",
        type=whole_number(0),
        metavar="N",
        help="exit 100 when more than N events flip from deny to allow",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    found = find_config(args.config)
    if found is None:
        raise GuardError("no config to try: name it with --config NEW")
    result = backtest(
        str(found),
        against=args.against,
        log=args.log,
        since=args.since,
        session=args.session,
        rule=args.rule,
        sample_size=args.sample,
        seed=args.seed,
        concurrency=args.concurrency,
        out=args.out,
        max_new_denies=args.max_new_denies,
        max_new_allows=args.max_new_allows,
    )
    summary = result.report.backtest
    assert summary is not None
    skipped = sum(summary.skipped.values())
    print(
        f"replayed {summary.events} event(s) from {summary.audit_log} through {summary.config} against {summary.reference}"
        + (
            f"; skipped {skipped} not replayable faithfully ({', '.join(f'{n} {why}' for why, n in summary.skipped.items())})"
            if skipped
            else ""
        )
    )
    print(
        f"allow → deny: {summary.new_denies}, deny → allow: {summary.new_allows} (McNemar p = {summary.mcnemar_p:.4f}); "
        f"cache: {summary.cache_hits} verdict(s) reused, {summary.cached_events} event(s) with no model call"
    )
    for change in summary.rules:
        print(
            f"  rule {change.rule}: {change.new_denies} allow → deny, {change.new_allows} deny → allow; {rule_change_text(change.old_text, change.new_text, change.old_source)}"
        )
    for flip in summary.flips[:20]:
        rules = f" [{', '.join(flip.rules)}]" if flip.rules else ""
        print(
            f"  #{flip.audit_id} {flip.direction}{rules} {flip.tool or '-'}: {flip.summary}\n    before {flip.before}: {flip.before_reason or '-'}\n    after  {flip.after}: {flip.after_reason or '-'}"
        )
    if len(summary.flips) > 20:
        print(f"  … {len(summary.flips) - 20} more in {result.out}/report.md")
    if result.report.stub:
        print(f"note: decisions from a stub model ({result.report.stub_reason})")
    for exceeded in summary.limits_exceeded:
        print(f"gate failed: {exceeded}", file=sys.stderr)
    for problem in result.problems:
        print(f"guard backtest: could not judge: {problem}", file=sys.stderr)
    print(f"outputs in {result.out}/ (report.md, report.html, metrics.json, results.jsonl, junit.xml)")
    return result.exit_code
