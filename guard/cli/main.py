"""``guard`` entry point: argparse, one sub-command group per module.

``guard hook`` runs on every tool call, so it is dispatched before any other
group module is imported; the rest are imported only to build ``--help``.
Every :class:`~guard.errors.GuardError` becomes a one-line message, never a
traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

__all__ = ["main"]

#: Command-group modules under guard.cli, each with register(subparsers) and a run(args) -> int.
_GROUPS: tuple[str, ...] = ("hook", "check", "eval", "backtest", "datasets", "serve", "cache", "log", "install")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="guard", description="Plain-English guardrails for AI agents, judged by an LLM.")
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
    parser = argparse.ArgumentParser(prog="guard")
    sub = parser.add_subparsers(dest="command")
    importlib.import_module(f"guard.cli.{name}").register(sub)
    return parser


class _BriefFormatter(logging.Formatter):
    """One line per warning; tracebacks only with GUARD_DEBUG=1."""

    def format(self, record: logging.LogRecord) -> str:
        if os.environ.get("GUARD_DEBUG") != "1":
            record.exc_info, record.exc_text = None, None
        return super().format(record)


def _setup_logging() -> None:
    logger = logging.getLogger("guard")
    if logger.handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(_BriefFormatter("guard: %(levelname)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if os.environ.get("GUARD_DEBUG") == "1" else logging.WARNING)
    logger.propagate = False


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    _setup_logging()
    from guard.errors import GuardError

    # the per-tool-call path: build only the hook parser
    parser = _fast_parser("hook") if args_list[:1] == ["hook"] else build_parser()
    args = parser.parse_args(args_list)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        code: int = args.func(args)
    except GuardError as exc:
        print(f"guard: {exc}", file=sys.stderr)
        return getattr(args, "error_exit_code", 1)
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
