"""``guard import claude-auto-mode [SETTINGS]``: a Claude Code autoMode block as a guard.yaml policy.

Prints the YAML (or writes ``--out``); what did not carry over is said on stderr.
Exit 1 when the settings cannot be read or hold no usable autoMode block.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "run"]

_DEFAULT_SETTINGS = "~/.claude/settings.json"


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("import", help="turn another tool's rules into guard config")
    inner = p.add_subparsers(dest="import_command", metavar="SOURCE", required=True)
    auto = inner.add_parser("claude-auto-mode", help="a Claude Code autoMode block (hard_deny, soft_deny, allow, environment) as a guard policy")
    auto.add_argument("settings", nargs="?", default=_DEFAULT_SETTINGS, help=f"the settings.json holding autoMode (default {_DEFAULT_SETTINGS})")
    auto.add_argument("--id", default="claude-auto-mode", help="the policy's id (default claude-auto-mode)")
    auto.add_argument("--out", metavar="FILE", help="write the YAML here (default: stdout)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import yaml

    from guard.config.claude_auto_mode import policy_from_settings

    source = Path(args.settings).expanduser()
    policy, notes = policy_from_settings(source, args.id)
    header = f"# imported from {source} by guard import claude-auto-mode\n"
    text = header + yaml.safe_dump({"policies": [policy]}, sort_keys=False, allow_unicode=True, width=1000)
    for note in notes:
        print(f"guard: note: {note}", file=sys.stderr)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"guard: wrote policy {args.id!r} to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
