"""``guard init``: write the starter guard.yaml here, and its labeled cases (docs/init.md), never over a config that exists.

The starter's rules name canonical actions (``@shell|@write|@edit|@mcp``), so they
see every route to an effect in every client. Run by a person at a terminal, it
also trusts what it wrote when nothing was trusted here before; under an agent
client it is refused, and without a terminal it writes but leaves trusting to
``guard trust``: the agent guard watches must not be able to choose the config.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from guard.cli.trust import adopt_config
from guard.cli.user_consent import has_terminal, refusal
from guard.config.search import find_config
from guard.config.starter import CASES_FILE, STARTER, write_starter, write_starter_cases

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "init",
        help="write a starter guard.yaml whose rules cover shell, file writes and edits, and MCP in every client",
        description="Write ./guard.yaml with rules on the canonical actions @shell, @write, @edit, @fetch and @mcp "
        "(docs/actions.md), so a rule holds whichever tool, and whichever client, the agent uses. "
        "Never replaces an existing config. At a terminal it trusts the file when nothing was trusted here before.",
    )
    p.add_argument("--print", action="store_true", dest="print_only", help="print the starter to stdout; write nothing")
    p.set_defaults(func=run)


def write_starter_files(folder: Path, who: str) -> Path:
    """The starter guard.yaml and its labeled calls in ``folder``, each said (``guard init``, and ``guard install`` where
    there is no config); the config's path. OSError when the config cannot be written; an existing cases file is kept."""
    path = write_starter(folder / "guard.yaml")
    print(f"wrote {path}: rules on @shell, @write, @edit, @fetch and @mcp, for every client (docs/init.md)")
    try:
        cases = write_starter_cases(folder / CASES_FILE)
        print(f"wrote {cases}: 12 labeled calls for its rules; guard eval {CASES_FILE} scores them")
    except FileExistsError:
        print(f"kept {CASES_FILE}: it exists", file=sys.stderr)
    except OSError as exc:
        print(f"{who}: warning: {exc.filename or CASES_FILE}: {exc.strerror or exc}", file=sys.stderr)
    return path


def run(args: argparse.Namespace) -> int:
    if args.print_only:
        sys.stdout.write(STARTER)
        return 0
    refused = refusal("guard init")
    if refused:
        print(f"guard init: error: {refused}", file=sys.stderr)
        return 1
    found = find_config()
    if found is not None:
        print(
            f"guard init: error: {found} exists; guard init never replaces a config (edit it, then run guard trust)",
            file=sys.stderr,
        )
        return 1
    try:
        write_starter_files(Path.cwd(), "guard init")
    except OSError as exc:
        print(f"guard init: error: {exc.filename or 'guard.yaml'}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if has_terminal():
        adopt_config()
    else:
        print("not trusted yet (no terminal to confirm on): run guard trust in a terminal of your own", file=sys.stderr)
    print(
        "next: set your model keys (OPENAI_API_KEY, ANTHROPIC_API_KEY), then guard install claude (or codex, gemini, devin) "
        "and guard doctor"
    )
    return 0
