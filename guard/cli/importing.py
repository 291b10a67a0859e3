"""``guard import claude-auto-mode [SETTINGS]`` and ``guard export claude-auto-mode [CONFIG]``: autoMode blocks and guard policies.

import prints a guard.yaml policy (or writes ``--out``); export prints the
``{"autoMode": …}`` JSON to merge into a Claude Code settings file. What did not
carry over is said on stderr. Exit 1 when the input cannot be read or holds
nothing to convert.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from guard.config.claude_auto_mode import policy_from_settings, settings_from_policy

__all__ = ["register", "run", "run_export"]

_DEFAULT_SETTINGS = "~/.claude/settings.json"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "import",
        help="turn another tool's rules into guard config",
        description="Print another tool's rules as a guard.yaml policy (or write --out); what does not carry over is said on stderr.",
    )
    inner = p.add_subparsers(dest="import_command", metavar="SOURCE", required=True)
    auto = inner.add_parser(
        "claude-auto-mode",
        help="a Claude Code autoMode block (hard_deny, soft_deny, allow, environment) as a guard policy",
    )
    auto.add_argument(
        "settings",
        nargs="?",
        default=_DEFAULT_SETTINGS,
        help=f"the settings.json holding autoMode (default {_DEFAULT_SETTINGS})",
    )
    auto.add_argument("--id", default="claude-auto-mode", help="the policy's id (default claude-auto-mode)")
    auto.add_argument("--out", metavar="FILE", help="write the YAML here (default: stdout)")
    p.set_defaults(func=run)

    e: argparse.ArgumentParser = sub.add_parser(
        "export",
        help="turn guard config into another tool's rules",
        description="Print a guard policy as another tool's rules, to merge into its settings; what does not carry over is said on stderr.",
    )
    inner = e.add_subparsers(dest="export_command", metavar="TARGET", required=True)
    back = inner.add_parser("claude-auto-mode", help="a guard policy as a Claude Code autoMode block (JSON)")
    back.add_argument(
        "config", nargs="?", default="guard.yaml", help="the guard.yaml holding the policy (default guard.yaml)"
    )
    back.add_argument("--id", help="which policy, when the config has several")
    e.set_defaults(func=run_export)


def _notes(notes: list[str]) -> None:
    for note in notes:
        print(f"guard: note: {note}", file=sys.stderr)


def run_export(args: argparse.Namespace) -> int:
    block, notes = settings_from_policy(Path(args.config), args.id)
    _notes(notes)
    print(json.dumps(block, indent=2, ensure_ascii=False))
    return 0


def run(args: argparse.Namespace) -> int:
    # yaml only for guard import (guard export writes JSON)
    import yaml

    source = Path(args.settings).expanduser()
    policy, notes = policy_from_settings(source, args.id)
    header = f"# imported from {source} by guard import claude-auto-mode\n"
    text = header + yaml.safe_dump({"policies": [policy]}, sort_keys=False, allow_unicode=True, width=1000)
    _notes(notes)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"guard: wrote policy {args.id!r} to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
