"""The differential run in CI: thousands of generated lines, each proven one run in the sandbox; not one may escape.

The count and seed are in :mod:`.budget` (``GUARD_VERIFIER_LINES=200000`` for the larger run).
A failure lists the escapes, minimised, with the system calls that show them.
"""

from __future__ import annotations

import pytest

from . import budget
from .claims import GuardClaims
from .generator import Generator
from .gtfobins import examples
from .programs import allowed_binaries, discover
from .sandbox import Pool
from .verify import Verifier
from .world import World


@pytest.mark.slow
def test_no_generated_line_escapes_its_proof(world: World, pool: Pool) -> None:
    claims = GuardClaims(world)
    proves = lambda line: claims.proof(line, writes=False).proven  # noqa: E731
    programs = discover(proves, world.env()["PATH"])
    verifier = Verifier(claims, pool, world, allowed_binaries(programs, world.env()))
    report = verifier.run(Generator(programs, budget.seed(), proves, examples()).lines(budget.lines()))
    print(report.summary())
    assert (
        report.tried == budget.lines() and report.proven > budget.lines() // 10
    )  # a generator that proves nothing tests nothing
    shown = [verifier.minimise(escape, budget=60) for escape in report.escapes[:8]]
    assert report.escapes == [], report.summary() + "".join(
        f"\n  {e.line!r} ({e.mode}): {', '.join(e.effects)}; {e.findings[0].evidence[:200]}" for e in shown
    )
