"""``guard doctor``: check the config, the models, every installed hook command and PATH; say what to fix.

Exit 0 when nothing is broken (warnings allowed), 1 when guard would not guard
as configured.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "run"]

_LABELS = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("doctor", help="check config, models, installed hooks and PATH; say what to fix")
    p.add_argument("--config", help="guard.yaml or settings.json (default: $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml)")
    p.add_argument("--model-timeout", type=float, default=15.0, metavar="S", help="seconds each model gets to answer one tiny request (default 15)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from guard.doctor import diagnose

    broken = 0
    for finding in diagnose(args.config, project_dir=Path.cwd(), home=Path.home(), model_timeout=args.model_timeout):
        print(f"{_LABELS[finding.status]}  {finding.topic}: {finding.message}", flush=True)
        if finding.fix and finding.status != "ok":
            print(f"      fix: {finding.fix}", flush=True)
        broken += finding.status == "fail"
    if broken:
        print(f"\n{broken} problem{'s' if broken > 1 else ''}: guard is not guarding as configured", file=sys.stderr)
        return 1
    print("\nguard is ready")
    return 0
