"""``guard`` entry point: argparse, one sub-command group per module.

``guard hook`` runs on every tool call, so it is dispatched before argparse is imported; any
``guard <command>`` imports the one group module that registers that command, and ``--help``
lists the commands from a table without importing any.

Every :class:`~guard.core.errors.GuardError` becomes a one-line message, never a
traceback; nor does a reader that closes the pipe early (``guard log | head``).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from guard.core.settings import DEBUG_ENV, from_env

if TYPE_CHECKING:
    import argparse

__all__ = ["main"]


class Command(NamedTuple):
    """One ``guard`` command: the guard.cli module that registers it and the line ``guard --help`` shows for it."""

    group: str
    summary: str


#: Every command, in ``guard --help``'s order. A group module has register(subparsers), which adds its commands with
#: the same summaries (tests/cli/test_cli_dispatch.py holds the two together), and a run(args) -> int. The table lets
#: ``guard``, ``guard --help`` and a misspelt command answer without importing any group, and ``guard <command>``
#: import only the group that registers it.
COMMANDS: dict[str, Command] = {
    "hook": Command("hook", "judge one hook event from stdin (for settings.json)"),
    "check": Command("check", "judge one tool call and explain the decision"),
    "eval": Command(
        "eval",
        "score verdicts against labeled datasets (exit 0 pass, 100 gate failed, 3 re-record, 4 could not judge some "
        "cases, 1 error)",
    ),
    "backtest": Command(
        "backtest",
        "replay logged events through a new config and report what would flip (exit 0, 100 gate failed, 1 error)",
    ),
    "datasets": Command("datasets", "validate labeled datasets, import published ones"),
    "serve": Command("serve", "run the HTTP service (POST /v1/hooks, /healthz, /metrics)"),
    "services": Command("services", "list or stop the background guard serve processes hooks started"),
    "cache": Command("cache", "show or clear the decision cache"),
    "log": Command("log", "show the latest decisions from the audit log, newest first"),
    "init": Command(
        "init", "write a starter guard.yaml whose rules cover shell, file writes and edits, and MCP in every client"
    ),
    "install": Command("install", "write guard's hook entry into an agent client's settings"),
    "trust": Command("trust", "review the config here and let guard hook enforce it"),
    "doctor": Command("doctor", "check config, models, installed hooks and PATH; say what to fix"),
    "import": Command("importing", "turn another tool's rules into guard config"),
    "export": Command("importing", "turn guard config into another tool's rules"),
    "view": Command("view", "browse decisions, rules and eval runs in a local web page"),
    "policy": Command("policy", "sign the org policy: keygen, sign, verify"),
    "approve": Command("approvals", "approve a call that waits for approval (on_ask: approval)"),
    "deny": Command("approvals", "deny a call that waits for approval (on_ask: approval)"),
    "approvals": Command("approvals", "list the calls waiting for approval"),
}


def _parser(fill: Callable[[Any], object]) -> argparse.ArgumentParser:
    """guard's top-level parser; ``fill`` adds the commands to its sub-parsers."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="guard", description="Plain-English guardrails for AI agents, judged by an LLM."
    )
    parser.add_argument("--version", action="version", version="guard 0.1.0")
    fill(parser.add_subparsers(dest="command", metavar="COMMAND"))
    return parser


def _group_parser(group: str) -> argparse.ArgumentParser:
    """The parser of the commands of one group (``guard <command> …`` imports no other group)."""
    return _parser(importlib.import_module(f"guard.cli.{group}").register)


def _listing_parser() -> argparse.ArgumentParser:
    """Every command by name and summary only: ``guard``, ``guard --help`` and a misspelt command."""

    def fill(sub: Any) -> None:
        for name, command in COMMANDS.items():
            sub.add_parser(name, help=command.summary, add_help=False)

    return _parser(fill)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command, each group imported (for checks that walk all of guard's options)."""

    def fill(sub: Any) -> None:
        for group in dict.fromkeys(command.group for command in COMMANDS.values()):
            importlib.import_module(f"guard.cli.{group}").register(sub)

    return _parser(fill)


def _setup_logging() -> None:
    """guard's records as one ``guard: LEVEL: message`` line each on stderr; tracebacks only with GUARD_DEBUG=1."""
    import logging

    class BriefFormatter(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            if from_env(DEBUG_ENV) != "1":
                record.exc_info, record.exc_text = None, None
            return super().format(record)

    logger = logging.getLogger("guard")
    if logger.handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(BriefFormatter("guard: %(levelname)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if from_env(DEBUG_ENV) == "1" else logging.WARNING)
    logger.propagate = False


def main(argv: Sequence[str] | None = None) -> int:
    """The ``guard`` command; ``argv`` None means this is the process's entry (the console script, ``python -m``)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            code = _dispatch(args_list)
        finally:  # a closed pipe surfaces here (or while printing), never at interpreter exit
            sys.stdout.flush()
    except BrokenPipeError:
        return _reader_went_away()
    if argv is None and args_list[:1] == ["hook"]:
        from guard.cli.hook import exit_past_hung_threads

        return exit_past_hung_threads(code)  # a hook's hung thread must not hold the answered process open
    return code


def _dispatch(args_list: list[str]) -> int:
    if args_list[:1] == ["hook"]:  # the per-tool-call path: no argparse for plain arguments, logging only to log
        from guard.cli.hook import parse_plain
        from guard.core.logs import set_up_before_use

        with set_up_before_use(_setup_logging):
            return _run(parse_plain(args_list[1:]) or _group_parser("hook").parse_args(args_list))
    _setup_logging()
    command = args_list[0] if args_list else ""
    if command not in COMMANDS:  # --help, --version and a misspelt command exit here
        listing = _listing_parser()
        known, unknown = listing.parse_known_args(args_list)
        command = known.command
        if command is None:
            if unknown:
                listing.error(f"unrecognized arguments: {' '.join(unknown)}")
            listing.print_help()
            return 0
    # a command after an unknown option (guard --x check …) is found above; its group parses the line, as before
    return _run(_group_parser(COMMANDS[command].group).parse_args(args_list))


def _run(args: Any) -> int:
    from guard.core.errors import GuardError

    try:
        code: int = args.func(args)
    except GuardError as exc:
        print(f"guard: {exc}", file=sys.stderr)
        return getattr(args, "error_exit_code", 1)
    except KeyboardInterrupt:  # a command may say what the interruption left behind (guard eval: the rows kept)
        on_interrupt = getattr(args, "on_interrupt", None)
        return on_interrupt(args) if on_interrupt else 130
    return code


def _reader_went_away() -> int:
    """``guard log --json | head``: the reader stopped reading, which is not an error worth a traceback.

    stdout is pointed at /dev/null so the interpreter's final flush cannot raise again;
    the exit code is the shell's for a process killed by SIGPIPE.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
