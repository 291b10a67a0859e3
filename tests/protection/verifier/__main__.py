"""The larger run, from the command line: ``python3 -m tests.protection.verifier --lines 200000``.

``--guard DIR`` verifies the guard in another checkout (read-only: it is only put first
on ``sys.path``). Minimal escapes are written as they are found to ``--escapes FILE``
(JSON lines, corpus format plus the original line), and with ``--corpus`` added to the
corpus CI replays.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 -m tests.protection.verifier", description=__doc__)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--guard", help="the checkout whose guard to verify (default: the one Python imports)")
    parser.add_argument("--escapes", type=Path, help="append each minimal escape to this JSON-lines file")
    parser.add_argument("--corpus", action="store_true", help="add the minimal escapes to the corpus CI replays")
    parser.add_argument("--minimise", type=int, default=300, help="minimise at most this many escapes (one per kind of escape)")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=1.0, help="seconds a line may run")
    return parser.parse_args()


def _against(guard_file: str) -> str:
    tree = Path(guard_file).resolve().parents[1]
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return f"{head or tree} {commit}".strip()


def main() -> None:
    args = _arguments()
    if args.guard:
        sys.path.insert(0, str(Path(args.guard).resolve()))
    import guard

    from . import corpus
    from .claims import GuardClaims
    from .classes import classify
    from .generator import Generator
    from .gtfobins import examples
    from .programs import allowed_binaries, discover
    from .sandbox import Pool, missing
    from .verify import Verifier
    from .world import World

    problem = missing()
    if problem:
        sys.exit(problem)
    against = _against(guard.__file__)
    print(f"verifying {guard.__file__} ({against}): {args.lines} lines from seed {args.seed}", flush=True)
    base = Path(tempfile.mkdtemp(prefix="guard-verifier-"))
    try:
        world = World(base)
        world.plant()
        claims = GuardClaims(world)
        proves = lambda line: claims.proof(line, writes=False).proven  # noqa: E731
        programs = discover(proves, world.env()["PATH"])
        generator = Generator(programs, args.seed, proves, examples())
        with Pool(world, args.workers, args.timeout) as pool:
            verifier = Verifier(claims, pool, world, allowed_binaries(programs, world.env()))
            report = verifier.run(generator.lines(args.lines))
            print(report.summary(), flush=True)
            print("tried by kind:", dict(report.tried_by_kind), "\nproven by kind:", dict(report.proven_by_kind), flush=True)
            groups: dict[tuple[str, str, str], list[int]] = defaultdict(list)
            for number, escape in enumerate(report.escapes):
                groups[(escape.effects[0], escape.line.split()[0] if escape.line.split() else "", escape.kind)].append(number)
            print(f"{len(groups)} kinds of escape; minimising up to {args.minimise}", flush=True)
            minimal: dict[tuple[str, str], tuple[object, str]] = {}
            started = time.monotonic()
            for numbers in list(groups.values())[: args.minimise]:
                original = report.escapes[numbers[0]]
                small = verifier.minimise(original)
                if (small.line, small.mode) in minimal:
                    continue
                entry = small.entry(against)
                minimal[(small.line, small.mode)] = (entry, original.line)
                if args.escapes:
                    args.escapes.parent.mkdir(parents=True, exist_ok=True)
                    with args.escapes.open("a") as file:
                        record = json.loads(entry.to_json()) | {"original": original.line, "kind": original.kind, "similar": len(numbers)}
                        file.write(json.dumps(record, ensure_ascii=False) + "\n")
            print(f"{len(minimal)} minimal escapes in {time.monotonic() - started:.0f} s", flush=True)
        by_class: dict[str, list[str]] = defaultdict(list)
        for entry, _ in minimal.values():
            by_class[entry.klass].append(f"{entry.line!r}  [{', '.join(entry.effects)}]")  # type: ignore[attr-defined]
        per_class: dict[str, int] = defaultdict(int)
        for escape in report.escapes:
            per_class[classify(escape.line, escape.effects)] += 1
        print("escapes by class (unminimised lines):", dict(per_class))
        for klass, examples_found in sorted(by_class.items()):
            print(f"== {klass}: {len(examples_found)} minimal")
            for example in examples_found[:15]:
                print("   ", example)
        if args.corpus:
            added = corpus.append([entry for entry, _ in minimal.values()])  # type: ignore[misc]
            print(f"{added} new lines in {corpus.CORPUS}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
