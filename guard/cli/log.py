"""``guard log``: the latest decisions from the audit log, newest first, for a person or as JSON Lines; ``guard log label`` marks one right or wrong; ``guard log verify`` checks its sealed chain.

``guard log | head -1`` is the newest decision and ``guard log --json | head -1`` its
JSON object: one object per line, so a reader can stop at any line.

A labeled row is a regression case in waiting: ``guard datasets from-audit`` writes
every labeled row as a dataset case.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guard.audit import LABELS, AuditLog
from guard.audit import chain as audit_chain
from guard.audit import recovery as audit_recovery
from guard.audit.postgres import AuditStore
from guard.audit.shipping import ship, states
from guard.cli.arguments import whole_number
from guard.cli.terminal import DECISION_STYLES, Table, console
from guard.config.loading import load_config
from guard.core.decision import ABSTAIN
from guard.core.errors import GuardError

if TYPE_CHECKING:
    from rich.console import Console

    from guard.core.settings import Settings

__all__ = ["register", "run"]

_CONFIG_HELP = "guard.yaml or settings.json (default: $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml)"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "log",
        help="show the latest decisions from the audit log, newest first",
        description="The latest decisions from the audit log, newest first: time, verdict, event, tool, latency, cost, "
        "reason, and every hook's verdict beneath. `guard log label ID VERDICT` stores what a decision should have been; "
        "`guard log verify` checks the log's sealed chain.",
        usage="guard log [-h] [-n N] [--json] [--reverse] [--config CONFIG] [--audit URL] [label ID VERDICT | verify | ship]",
    )
    p.add_argument(
        "--limit", "-n", type=whole_number(1), default=20, metavar="N", help="how many decisions (default 20)"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per decision, one per line (JSON Lines)")
    p.add_argument("--reverse", action="store_true", help="oldest of them first")
    p.add_argument("--config", help=_CONFIG_HELP)
    p.add_argument(
        "--audit",
        metavar="URL",
        help="read the team's audit store (postgresql://…) instead: every machine's and user's decisions",
    )
    inner = p.add_subparsers(
        dest="log_command", metavar="{label,verify,ship}", title="to label a decision, check the log or ship it"
    )
    label = inner.add_parser(
        "label",
        help="store the verdict a decision should have had (it becomes a dataset case)",
        description="Store the verdict decision ID should have had; guard datasets from-audit turns labeled rows into dataset cases.",
    )
    label.add_argument("id", type=whole_number(1), metavar="ID", help="the decision's number (#ID in guard log)")
    label.add_argument("label", choices=LABELS, help="what guard should have decided")
    label.add_argument("--config", default=argparse.SUPPRESS, help=_CONFIG_HELP)
    verify = inner.add_parser(
        "verify", help="check the log's sealed chain: exit 0 intact, 1 rows deleted, edited, moved or cut off"
    )
    verify.add_argument("--config", default=argparse.SUPPRESS, help=_CONFIG_HELP)
    verify.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print the report as JSON")
    verify.add_argument(
        "--audit",
        metavar="URL",
        default=argparse.SUPPRESS,
        help="check the team's audit store instead: exit 1 when rows are missing from a log, or a log was replaced",
    )
    ship = inner.add_parser(
        "ship",
        help="send the rows the team's audit store (audit.url, audit.otlp) has not received, now",
        description="Send the rows waiting in the local log to the audit store and the collector the config names, "
        "then say what still waits. Exit 0 when nothing waits, 1 when a target could not take them.",
    )
    ship.add_argument("--config", default=argparse.SUPPRESS, help=_CONFIG_HELP)
    p.set_defaults(func=run)


def _ms(value: float | None) -> str:
    return f"{value:.0f} ms" if value is not None else "-"


def _hook_line(hook: dict[str, Any]) -> str:
    bits = [hook["id"], hook["type"], hook.get("decision") or ABSTAIN]
    bits += [str(hook[k]) for k in ("tier", "model") if hook.get(k)]
    bits.append("cached" if hook.get("cached") else _ms(hook.get("latency_ms")))
    if hook.get("cost_usd") is not None:
        bits.append(f"${hook['cost_usd']:.6f}")
    if hook.get("error"):
        bits.append(f"error: {hook['error']}")
    return "    " + "  ".join(bits)


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def _print_row(row: dict[str, Any]) -> None:
    when = _when(row["time"])
    cost = f"${row['cost_usd']:.6f}" if row["cost_usd"] is not None else "-"
    head = [
        f"#{row['id']}",
        when,
        f"{row['decision']:<5}",
        row["event"] or "-",
        row["tool"] or "-",
        _ms(row["latency_ms"]),
        cost,
    ]
    label = f"  [labeled {row['label']}]" if row.get("label") else ""
    print("  ".join(head) + (f"  {row['reason']}" if row["reason"] else "") + label)
    for hook in row["hooks"]:
        print(_hook_line(hook))


def _print_table(out: Console, rows: list[dict[str, Any]]) -> None:
    """The same rows as a table, verdicts in colour, each hook on a line of its own under the reason."""
    table = Table(
        "#", "time", "decision", "event", "tool", "latency", "cost", "reason and hooks", right=("#", "latency", "cost")
    )
    for row in rows:
        hooks = "\n".join(_hook_line(hook).strip() for hook in row["hooks"])
        reason = (row["reason"] or "") + (f" [labeled {row['label']}]" if row.get("label") else "")
        cost = f"${row['cost_usd']:.6f}" if row["cost_usd"] is not None else "-"
        table.add(
            str(row["id"]),
            _when(row["time"]),
            row["decision"],
            row["event"] or "-",
            row["tool"] or "-",
            _ms(row["latency_ms"]),
            cost,
            "\n".join(filter(None, [reason, hooks])),
            styles={2: DECISION_STYLES.get(row["decision"], "")},
        )
    table.print(out)


def _label(log: AuditLog, args: argparse.Namespace) -> int:
    if not log.set_label(args.id, args.label):
        raise GuardError(f"no decision #{args.id} in {log.path} (guard log shows the numbers)")
    print(f"decision #{args.id} labeled {args.label}")
    return 0


def _verify(log: AuditLog, args: argparse.Namespace) -> int:
    """Check the chain; name the first problem (and list the others), and any writes that failed or logs set aside."""
    if not log.path.exists():
        gone = audit_chain.missing_log(log.path)
        if gone is None:
            print(f"no audit log yet at {log.path}: nothing to verify")
            return 0
        if args.json:
            print(
                json.dumps(
                    {
                        "path": str(log.path),
                        "intact": False,
                        "chained": 0,
                        "unchained": 0,
                        "problems": [gone],
                        "failed_writes": audit_recovery.failures(log.path),
                        "set_aside": [],
                    },
                    indent=2,
                )
            )
        else:
            print(f"{log.path}: BROKEN: {gone}")
        return 1
    report = log.verify()
    failed = audit_recovery.failures(log.path)
    aside = [str(p) for p in audit_recovery.set_aside_files(log.path)]
    if args.json:
        print(
            json.dumps(
                {
                    "path": str(log.path),
                    "intact": report.intact,
                    "chained": report.chained,
                    "unchained": report.unchained,
                    "problems": report.problems,
                    "failed_writes": failed,
                    "set_aside": aside,
                },
                indent=2,
            )
        )
        return 0 if report.intact else 1
    older = f", {report.unchained} written before the chain existed (unchained)" if report.unchained else ""
    if report.intact:
        print(f"{log.path}: intact ({report.chained} sealed rows{older})")
    else:
        print(f"{log.path}: BROKEN at {report.problems[0]}")
        for problem in report.problems[1:]:
            print(f"  also: {problem}")
        print(f"  ({report.chained} sealed rows checked{older})")
    if failed:
        last = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(failed[-1]["time"]))
        print(
            f"note: {len(failed)} audit write{'s' if len(failed) > 1 else ''} failed (last at {last}: {failed[-1]['error']}): those decisions are not in the log"
        )
    for path in aside:
        print(f"note: an unreadable log was set aside as {path}")
    return 0 if report.intact else 1


def _ship(settings: Settings, path: Path) -> int:
    """Ship now, then say what waits per target (exit 1 while a target could not take its rows)."""
    if not (settings.audit_url or settings.audit_otlp):
        print("no audit store configured (audit.url, audit.otlp): nothing to ship")
        return 0
    results = ship(path, settings, force=True)
    if results.get("") == "busy":
        print("another shipper is sending this log's rows now")
    for state in states(path, settings):
        print(state.describe())
    return 1 if any(state.waiting for state in states(path, settings)) else 0


def _central(args: argparse.Namespace) -> int:
    """``--audit URL``: every machine's rows, newest first; ``verify --audit URL``: the store's gaps."""
    store = AuditStore(args.audit)
    try:
        gaps = store.gaps()
        if args.log_command == "verify":
            if getattr(args, "json", False):
                print(json.dumps({"intact": not gaps, "problems": gaps}, indent=2))
            else:
                print("intact: every log's rows arrived in one unbroken run" if not gaps else f"NOT WHOLE: {gaps[0]}")
                for gap in gaps[1:]:
                    print(f"  also: {gap}")
            return 1 if gaps else 0
        rows = store.latest(args.limit)
    finally:
        store.close()
    if args.reverse:
        rows.reverse()
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False, default=str))
        return 0
    if not rows:
        print("no decisions in the audit store yet")
    for row in rows:
        who = f"{row['os_user']}@{row['machine']}"
        head = [
            f"{who} #{row['row_id']}",
            _when(row["time"]),
            f"{row['decision']:<5}",
            row["event"] or "-",
            row["tool"] or "-",
            _ms(row["latency_ms"]),
        ]
        print("  ".join(head) + (f"  {row['reason']}" if row["reason"] else ""))
    if gaps:
        print(
            f"note: the store is not whole ({len(gaps)} problem(s), first: {gaps[0]}); guard log verify --audit URL lists them",
            file=sys.stderr,
        )
    return 0


def run(args: argparse.Namespace) -> int:
    if getattr(args, "audit", None):
        if args.log_command == "label":
            raise GuardError("a decision is labeled in its own machine's log (guard log label), not in the audit store")
        if args.log_command == "ship":
            raise GuardError(
                "guard log ship sends this machine's rows to the store the config names: leave out --audit"
            )
        return _central(args)
    settings = load_config(args.config).settings
    if settings.audit_path is None:
        if args.log_command in ("label", "verify", "ship"):
            raise GuardError(f"the audit log is off (audit.enabled: false): there is nothing to {args.log_command}")
        print("the audit log is off (audit.enabled: false)")
        return 0
    path = settings.path(settings.audit_path)
    if args.log_command == "ship":
        return _ship(settings, path)
    log = AuditLog(path, redact=settings.audit_redact)
    if args.log_command == "label":
        return _label(log, args)
    if args.log_command == "verify":
        return _verify(log, args)
    rows = log.tail(args.limit)  # oldest first
    if not args.reverse:
        rows.reverse()
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return 0
    if not rows:
        print(f"no decisions logged yet in {settings.path(settings.audit_path)}")
        return 0

    out = console()
    if out is not None:
        _print_table(out, rows)
        return 0
    for row in rows:
        _print_row(row)
    return 0
