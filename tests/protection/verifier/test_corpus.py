"""Every escape the verifier found, replayed against the guard under test: it must now be refused, or run clean."""

from __future__ import annotations

import pytest

from .claims import GuardClaims
from .corpus import CORPUS, Entry, load
from .programs import KNOWN, allowed_binaries
from .sandbox import Pool
from .verify import Verifier
from .world import World

ENTRIES = load(CORPUS)


def test_the_corpus_is_well_formed() -> None:
    assert len({(e.line, e.mode) for e in ENTRIES}) == len(ENTRIES)
    assert all(e.mode in ("read", "write") and e.klass and e.effects and e.evidence and e.found for e in ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{n}-{e.klass.replace(' ', '-')}" for n, e in enumerate(ENTRIES)])
def test_a_corpus_line_is_refused_or_runs_clean(world: World, pool: Pool, entry: Entry) -> None:
    verifier = Verifier(GuardClaims(world), pool, world, allowed_binaries(KNOWN, world.env()))
    escape = verifier.check(entry.line)
    assert escape is None, (
        f"still proven ({escape.mode}: {escape.reason}) and it {', '.join(escape.effects)}: {[f.evidence for f in escape.findings][:3]}"
    )
