"""``guard log``: the latest decisions from the audit log, for a person or as JSON."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("log", help="show the latest decisions from the audit log")
    p.add_argument("--limit", "-n", type=_positive, default=20, metavar="N", help="how many decisions (default 20)")
    p.add_argument("--json", action="store_true", help="print the rows as a JSON array")
    p.add_argument("--config", help="guard.yaml or settings.json (default: $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml)")
    p.set_defaults(func=run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def _ms(value: float | None) -> str:
    return f"{value:.0f} ms" if value is not None else "-"


def _hook_line(hook: dict[str, Any]) -> str:
    bits = [hook["id"], hook["type"], hook.get("decision") or "abstain"]
    bits += [str(hook[k]) for k in ("tier", "model") if hook.get(k)]
    bits.append("cached" if hook.get("cached") else _ms(hook.get("latency_ms")))
    if hook.get("cost_usd") is not None:
        bits.append(f"${hook['cost_usd']:.6f}")
    if hook.get("error"):
        bits.append(f"error: {hook['error']}")
    return "    " + "  ".join(bits)


def _print_row(row: dict[str, Any]) -> None:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row["time"]))
    cost = f"${row['cost_usd']:.6f}" if row["cost_usd"] is not None else "-"
    head = [when, f"{row['decision']:<5}", row["event"] or "-", row["tool"] or "-", _ms(row["latency_ms"]), cost]
    print("  ".join(head) + (f"  {row['reason']}" if row["reason"] else ""))
    for hook in row["hooks"]:
        print(_hook_line(hook))


def run(args: argparse.Namespace) -> int:
    from guard.audit import AuditLog
    from guard.config import load_config

    settings = load_config(args.config).settings
    if settings.audit_path is None:
        print("the audit log is off (audit.enabled: false)")
        return 0
    rows = AuditLog(settings.path(settings.audit_path), redact=settings.audit_redact).tail(args.limit)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print(f"no decisions logged yet in {settings.path(settings.audit_path)}")
    for row in rows:
        _print_row(row)
    return 0
