"""``guard install CLIENT``: put ``guard hook`` into an agent client's settings (or take it out)."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys

from guard.errors import GuardError

__all__ = ["register", "run"]

_CLIENT_NOTES = {
    "codex": "Codex runs a new or changed hook only after you trust it: start `codex` and accept "
             "'Hooks need review' (or use /hooks). Project hooks (.codex/hooks.json) also need a trusted project.",
    "gemini": "Older Gemini CLI releases run hooks only with `\"tools\": {\"enableHooks\": true}` in settings.json.",
    "devin": "Devin also runs the hooks in .claude/settings.json; install guard for one of the two per project.",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    from guard.install import CLIENTS, DEFAULT_TIMEOUT_S

    parser = subparsers.add_parser(
        "install",
        help="write guard's hook entry into an agent client's settings",
        description="Add `guard hook` as a command hook in the settings file of Claude Code, Devin, Codex or "
                    "Gemini CLI. Existing hooks and keys are kept; running it twice changes nothing.",
    )
    parser.add_argument("client", choices=sorted(CLIENTS), help="the agent client to hook into")
    parser.add_argument("--scope", choices=("project", "user"), default="project",
                        help="project: the settings in the current directory (default); user: your home directory")
    parser.add_argument("--uninstall", action="store_true", help="remove guard's entry (and nothing else)")
    parser.add_argument("--events", nargs="+", metavar="EVENT",
                        help="events to hook (any spelling guard accepts, e.g. PreToolUse or pre_tool_use); "
                             "default: pre-tool, post-tool, prompt submit and stop")
    parser.add_argument("--command", help="the hook command (default: guard hook --format CLIENT)")
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help=f"the client's timeout for the hook (default {DEFAULT_TIMEOUT_S})")
    parser.add_argument("--dry-run", action="store_true", help="print the resulting file instead of writing it")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from guard.install import default_command, install

    if not 1 <= args.timeout <= 600:
        print("guard install: error: --timeout must be between 1 and 600 seconds", file=sys.stderr)
        return 1
    command = args.command or default_command(args.client)
    try:
        result = install(args.client, scope=args.scope, events=args.events, command=command,
                         timeout_s=args.timeout, uninstall=args.uninstall, dry_run=args.dry_run)
    except GuardError as exc:
        print(f"guard install: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"guard install: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if args.dry_run:
        sys.stdout.write(result.text if result.changed else "(nothing would change)\n")
        return 0
    if not result.changed:
        state = "not installed in" if args.uninstall else "already installed in"
        print(f"guard is {state} {result.path} (nothing changed)")
        return 0
    verb = "removed guard from" if args.uninstall else "installed guard in"
    print(f"{verb} {result.path} for {', '.join(result.events)}")
    if not args.uninstall:
        _warn_if_not_runnable(command, args.client)
        note = _CLIENT_NOTES.get(args.client)
        if note:
            print(f"note: {note}")
    return 0


def _warn_if_not_runnable(command: str, client: str) -> None:
    """A hook the client cannot start fails open, silently; say so now rather than never."""
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return
    if shutil.which(program) is None:
        print(f"warning: {program!r} is not on PATH here; the client could not run the hook and every call "
              f"would pass unchecked. Pass the full path, e.g. "
              f"--command '{os.path.abspath(sys.argv[0])} hook --format {client}'", file=sys.stderr)
