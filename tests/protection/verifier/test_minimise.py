"""Minimisation: an escape shrinks to the fewest, simplest words that still escape the same way."""

from __future__ import annotations

from .fakes import BrokenClaims
from .minimise import ddmin, tokens
from .oracle import RUNS, WRITES
from .programs import KNOWN, allowed_binaries
from .sandbox import Pool
from .verify import Verifier
from .world import World


def test_words_operators_and_quotes_stay_whole() -> None:
    assert tokens('cat \'a b\' "c\\"d" 2>&1 >x <<EOF\nhi\nEOF') == [
        "cat",
        "'a b'",
        '"c\\"d"',
        "2>&1",
        ">",
        "x",
        "<<",
        "EOF",
        "\n",
        "hi",
        "\n",
        "EOF",
    ]


def test_a_cluster_and_an_ifs_joined_word_are_made_simpler() -> None:
    def escapes(line: str) -> bool:
        words = line.split()
        return len(words) > 1 and words[0] == "file" and words[1].startswith("-") and "p" in words[1]

    assert ddmin("file a.txt${IFS}-hp x", escapes) == "file -p"


def test_a_run_escape_shrinks_to_its_cause(world: World, pool: Pool) -> None:
    verifier = Verifier(BrokenClaims(), pool, world, allowed_binaries(KNOWN, world.env()))
    escape = verifier.check("cat a.txt; sort -o pwned a.txt; ls -la | head -3")
    assert escape is not None and escape.effects == [WRITES]
    assert verifier.minimise(escape).line in (
        "sort -o pwned",
        "sort -o a.txt",
    )  # sort writing its -o file, and nothing else
    escape = verifier.check("echo start && python3 -c 'print(1)' | cat")
    assert escape is not None and verifier.minimise(escape).line == "python3" and RUNS in escape.effects
