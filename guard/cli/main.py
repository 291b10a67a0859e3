"""``guard`` entry point: argparse, one sub-command group per module.

``guard hook`` runs on every tool call, so it is dispatched before any other
group module is imported; the rest are imported only to build ``--help``.
Every :class:`~guard.core.errors.GuardError` becomes a one-line message, never a
traceback; nor does a reader that closes the pipe early (``guard log | head``).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from guard.core.settings import DEBUG_ENV, from_env

if TYPE_CHECKING:
    import argparse

__all__ = ["main"]

#: Command-group modules under guard.cli, each with register(subparsers) and a run(args) -> int.
_GROUPS: tuple[str, ...] = (
    "hook",
    "check",
    "eval",
    "backtest",
    "datasets",
    "serve",
    "services",
    "cache",
    "log",
    "init",
    "install",
    "trust",
    "doctor",
    "importing",
    "view",
    "policy",
    "approvals",
)


def build_parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="guard", description="Plain-English guardrails for AI agents, judged by an LLM."
    )
    parser.add_argument("--version", action="version", version="guard 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _GROUPS:
        try:
            module = importlib.import_module(f"guard.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"guard.cli.{name}":
                raise
            continue
        module.register(sub)
    return parser


def _fast_parser(name: str) -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(prog="guard")
    sub = parser.add_subparsers(dest="command")
    importlib.import_module(f"guard.cli.{name}").register(sub)
    return parser


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
            return _run(parse_plain(args_list[1:]) or _fast_parser("hook").parse_args(args_list))
    _setup_logging()
    # guard serve is started by guard hook as a session starts (server.url: auto): it builds its own parser alone
    parser = _fast_parser("serve") if args_list[:1] == ["serve"] else build_parser()
    args = parser.parse_args(args_list)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return _run(args)


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
