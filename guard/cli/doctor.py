"""``guard doctor``: check the config, the models, every installed hook command and PATH; say what to fix.

Exit 0 when nothing is broken (warnings allowed), 1 when guard would not guard
as configured.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from guard.cli.terminal import STATUS_STYLES, console, say
from guard.setup.doctor import diagnose

__all__ = ["register", "run"]

_LABELS = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "doctor",
        help="check config, models, installed hooks and PATH; say what to fix",
        description="Check that guard would judge the next tool call here: the config loads, every model a smart hook "
        "uses has a provider and a key and answers, each installed client hook starts this guard with time to answer, "
        "and which guard PATH finds. Exit 0 when nothing is broken (warnings allowed), 1 otherwise.",
    )
    p.add_argument(
        "--config", help="guard.yaml or settings.json (default: $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml)"
    )
    p.add_argument(
        "--model-timeout",
        type=float,
        default=15.0,
        metavar="S",
        help="seconds each model gets to answer one tiny request (default 15)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out = console()
    broken = 0
    for finding in diagnose(args.config, project_dir=Path.cwd(), home=Path.home(), model_timeout=args.model_timeout):
        say(
            out,
            (_LABELS[finding.status], STATUS_STYLES[finding.status]),
            (f"  {finding.topic}: {finding.message}", None),
        )
        if finding.fix and finding.status != "ok":
            say(out, ("      fix: ", "bold"), (finding.fix, None))
        broken += finding.status == "fail"
    if broken:
        print(f"\n{broken} problem{'s' if broken > 1 else ''}: guard is not guarding as configured", file=sys.stderr)
        return 1
    print("\nguard is ready")
    return 0
