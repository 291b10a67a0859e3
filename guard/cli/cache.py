"""``guard cache stats|clear``: look at or empty the decision cache the config names."""

from __future__ import annotations

import argparse
import json
from typing import Any

from guard.cache import open_cache
from guard.cli.terminal import Table, console
from guard.config.loading import load_config
from guard.core.duration import format_duration

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--config", help="guard.yaml or settings.json (default: $GUARD_CONFIG, ./guard.yaml, ./.guard/guard.yaml)"
    )
    p: argparse.ArgumentParser = sub.add_parser(
        "cache",
        help="show or clear the decision cache",
        description="Show the figures of the decision cache the config names (entries, hits, misses, size, TTL), or empty it.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    stats = actions.add_parser("stats", parents=[common], help="entries, hits, misses and size of the cache")
    stats.add_argument("--json", action="store_true", help="print the figures as JSON")
    actions.add_parser("clear", parents=[common], help="remove every cached verdict and reset the counters")
    p.set_defaults(func=run)


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _print_stats(stats: dict[str, Any]) -> None:
    looked_up = stats["hits"] + stats["misses"]
    ratio = f"{stats['hits'] / looked_up:.1%}" if looked_up else "n/a"
    rows = [
        ("backend", stats["backend"]),
        ("location", stats["location"]),
        ("entries", stats["entries"]),
        ("hits", stats["hits"]),
        ("misses", stats["misses"]),
        ("tampered", stats.get("tampered", 0)),  # entries that failed their seal: deleted and judged again
        ("hit ratio", ratio),
        ("size", _size(stats["size_bytes"])),
        ("ttl", format_duration(stats["ttl_seconds"])),
    ]

    out = console()
    if out is None:
        for name, value in rows:
            print(f"{name:<10} {value}")
        return
    table = Table("", "")
    for name, value in rows:
        table.add(name, str(value), styles={0: "bold"})
    table.print(out)


def run(args: argparse.Namespace) -> int:
    settings = load_config(args.config).settings
    cache = open_cache(settings)
    if cache is None:
        print("the decision cache is off (cache.url: off)")
        return 0
    if args.action == "clear":
        removed = cache.clear()
        print(f"removed {removed} cached verdict{'s' if removed != 1 else ''} from {cache.stats()['location']}")
        return 0
    stats = cache.stats()
    if args.json:
        print(json.dumps(stats, indent=2))
    else:
        _print_stats(stats)
    return 0
