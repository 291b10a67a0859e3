"""``guard services``: the background ``guard serve`` processes your hooks started, and ``--stop`` / ``--stop-all`` for them.

A session's start (and ``server.url: auto``) launches one warm service per config
and environment; each leaves after 30 idle minutes. This lists them with their
config, memory and age, and stops one (by pid) or all of them now. Only a process
that is still the ``guard serve`` its sealed state file names is ever signalled.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from guard.cli.arguments import whole_number
from guard.cli.terminal import Table, console
from guard.core.errors import GuardError
from guard.server.autostart import services, stop

if TYPE_CHECKING:
    from guard.server.autostart import Service

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "services",
        help="list or stop the background guard serve processes hooks started",
        description="List the warm guard serve processes that guard hook started in the background "
        "(one per config and environment; each exits after 30 idle minutes), or stop them now.",
    )
    stop = p.add_mutually_exclusive_group()
    stop.add_argument(
        "--stop", type=whole_number(1), metavar="PID", help="stop the service with this pid (from the list)"
    )
    stop.add_argument("--stop-all", action="store_true", help="stop every one of them")
    p.set_defaults(func=run)


def _memory(pid: int) -> str:
    """Resident memory, from /proc (Linux); "?" elsewhere."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return f"{int(line.split()[1]) // 1024} MB"
    except (OSError, ValueError, IndexError):
        pass
    return "?"


def _config(command: tuple[str, ...]) -> str:
    if "--config" in command[:-1]:
        return command[command.index("--config") + 1]
    return "(no config: the built-in rules)" if command else "?"


def _age(started: float) -> str:
    seconds = max(time.time() - started, 0)
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def _list(found: list[Service]) -> int:
    if not found:
        print("no background guard serve is running")
        return 0
    table = Table("PID", "URL", "CONFIG", "MEMORY", "UP", right=("PID", "MEMORY", "UP"))
    for service in found:
        table.add(
            str(service.pid),
            service.url or "(starting)",
            _config(service.command),
            _memory(service.pid),
            _age(service.started),
        )
    table.print(console())
    return 0


def run(args: argparse.Namespace) -> int:
    found = services()
    if not (args.stop or args.stop_all):
        return _list(found)
    chosen = found if args.stop_all else [s for s in found if s.pid == args.stop]
    if args.stop and not chosen:
        raise GuardError(f"no background guard serve has pid {args.stop} (guard services lists them)")
    failed = 0
    for service in chosen:
        if stop(service):
            print(f"stopped guard serve {service.pid} ({service.url or 'starting'})")
        else:
            failed += 1
            print(f"guard services: {service.pid} did not stop within 10 s", file=sys.stderr)
    if args.stop_all and not chosen:
        print("no background guard serve is running")
    return 1 if failed else 0
