"""The larger run, from the command line: ``python3 -m tests.protection.verifier --lines 200000``.

``--guard DIR`` verifies the guard in another checkout (read-only: it is only put first
on ``sys.path``). Minimal escapes are written as they are found to ``--escapes FILE``
(JSON lines, corpus format plus the original line), and with ``--corpus`` added to the
corpus CI replays.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .corpus import Entry
    from .verify import Escape

#: Lines per round: escapes found in a round are minimised and written out before the next one starts.
_CHUNK = 10_000


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 -m tests.protection.verifier", description=__doc__)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--guard", help="the checkout whose guard to verify (default: the one Python imports)")
    parser.add_argument("--escapes", type=Path, help="append each minimal escape to this JSON-lines file")
    parser.add_argument("--corpus", action="store_true", help="add the minimal escapes to the corpus CI replays")
    parser.add_argument(
        "--minimise",
        type=int,
        default=300,
        help="minimise at most this many escapes (those holding no minimal one yet)",
    )
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=1.0, help="seconds a line may run")
    parser.add_argument(
        "--against", help="how to name the guard verified in the records (default: its checkout's branch and commit)"
    )
    return parser.parse_args()


def _against(guard_file: str) -> str:
    tree = Path(guard_file).resolve().parents[1]
    head = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    commit = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return f"{head or tree} {commit}".strip()


def _record(path: Path | None, entry: Entry, escape: Escape) -> None:
    """Append a minimal escape to ``path`` at once (another worktree reads the file while the run goes on)."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    record = json.loads(entry.to_json()) | {"original": escape.line, "kind": escape.kind}
    with path.open("a") as file:
        file.write(json.dumps(record, ensure_ascii=False) + "\n")


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
    from .verify import Report, Verifier
    from .world import World

    problem = missing()
    if problem:
        sys.exit(problem)
    against = args.against or _against(guard.__file__)
    print(f"verifying {guard.__file__} ({against}): {args.lines} lines from seed {args.seed}", flush=True)
    base = Path(tempfile.mkdtemp(prefix="guard-verifier-"))
    try:
        world = World(base)
        world.plant()
        claims = GuardClaims(world)
        proves = lambda line: claims.proof(line, writes=False).proven  # noqa: E731
        programs = discover(proves, world.env()["PATH"])
        generator = Generator(programs, args.seed, proves, examples())
        minimal: dict[tuple[str, str], Entry] = {}
        tries = 0
        per_class: Counter[str] = Counter()
        total = Report()
        lines = generator.lines(args.lines)
        with Pool(world, args.workers, args.timeout) as pool:
            verifier = Verifier(claims, pool, world, allowed_binaries(programs, world.env()))
            while total.tried < args.lines:
                report = verifier.run(itertools.islice(lines, _CHUNK))
                if not report.tried:
                    break
                total.add(report)
                for escape in report.escapes:
                    klass = classify(escape.line, escape.effects)
                    per_class[klass] += 1
                    known = any(
                        line in escape.line and set(entry.effects) <= set(escape.effects)
                        for (line, _), entry in minimal.items()
                    )
                    if known or tries >= args.minimise:
                        continue  # an escape that holds a minimal one already found is that one again
                    tries += 1
                    small = verifier.minimise(escape)
                    entry = small.entry(against, world)
                    if (small.line, small.mode) not in minimal:
                        minimal[(small.line, small.mode)] = entry
                        _record(args.escapes, entry, escape)
                print(f"{total.summary()}; {len(minimal)} minimal so far", flush=True)
        print("tried by kind:", dict(total.tried_by_kind), "\nproven by kind:", dict(total.proven_by_kind))
        print("escapes by class (lines as generated):", dict(per_class))
        by_class: dict[str, list[Entry]] = defaultdict(list)
        for entry in minimal.values():
            by_class[entry.klass].append(entry)
        for klass, found in sorted(by_class.items()):
            print(f"== {klass}: {len(found)} minimal")
            for entry in found[:20]:
                print(f"    {entry.line!r}  [{', '.join(entry.effects)}]")
        if args.corpus:
            added = corpus.append(list(minimal.values()))
            print(f"{added} new lines in {corpus.CORPUS}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
