"""The generator: deterministic from its seed, and trying what the prover's tables do not know."""

from __future__ import annotations

import pytest

from .classes import BUILTINS, EXPANSION, INPUTS, REDIRECTIONS, SPELLING, classify
from .generator import CHANGERS, KINDS, Generator
from .gtfobins import examples
from .programs import KNOWN, discover
from .real_options import NONE, OPTIONAL, REQUIRED, Option, options_of


def test_a_seed_gives_the_same_lines_and_another_seed_others() -> None:
    first = [line.text for line in Generator(KNOWN, 7).lines(800)]
    assert first == [line.text for line in Generator(KNOWN, 7).lines(800)]
    assert len(set(first)) == 800
    assert len(set(first) & {line.text for line in Generator(KNOWN, 8).lines(800)}) < 200


def test_options_come_from_the_programs_themselves() -> None:
    sort = set(options_of(("sort",)))
    assert {
        Option("--output", REQUIRED),
        Option("-o", REQUIRED),
        Option("--compress-program", REQUIRED),
        Option("--files0-from", REQUIRED),
    } <= sort
    assert Option("--in-place", OPTIONAL) in options_of(("sed",)) and Option("-n", NONE) in options_of(("sed",))
    assert {"-fprintf", "-delete", "-exec"} <= {o.name for o in options_of(("find",))}
    assert {"--output", "--ext-diff", "--textconv"} <= {o.name for o in options_of(("git", "log"))}
    assert Option("-v", REQUIRED) in options_of(("printf",))  # bash's help for a builtin


def test_lines_try_options_and_spellings_the_prover_does_not_allow() -> None:
    text = "\n".join(line.text for line in Generator(KNOWN, 35).lines(20_000))
    for spelled in (
        "--compress-program=",
        "--files0-from",
        "--expression=",
        "-fprintf",
        "--output=",
        "{-",
        "${IFS}",
        "[-]",
        "printf -v PATH",
        "/dev/tcp/",
        "<>",
        "--compress-prog",
        "--ext-diff",
    ):
        assert spelled in text, spelled


def test_every_strategy_and_every_gtfobins_example_is_tried() -> None:
    codes = examples()
    lines = list(Generator(KNOWN, 35, gtfobins=codes).lines(len(codes) + 3_000))
    assert {line.kind for line in lines} == set(KINDS) | ({"gtfobins"} if codes else set())
    assert [line.text for line in lines[: len(codes)]] == codes


def test_the_allowlist_is_found_by_asking_the_prover() -> None:
    found = discover(lambda line: line.split()[0] in ("tee", "git") or line == "git am", "/usr/bin:/bin")
    assert ("tee",) in found and ("git", "am") in found and set(KNOWN) | set(CHANGERS) <= set(found)
    assert ("chmod",) not in found


@pytest.mark.parametrize(
    ("line", "effects", "klass"),
    [
        ("sort {-o,pwned} a.txt", ["writes"], EXPANSION),
        ("wc *", ["reads the secret"], EXPANSION),
        ("printf -v PATH %s .; cat a.txt", ["runs a program"], BUILTINS),
        ("cat < /dev/tcp/127.0.0.1/9", ["network"], REDIRECTIONS),
        ("file -f names", ["reads the secret"], INPUTS),
        ("sed -n --expression='1w pwned' p", ["writes"], SPELLING),
    ],
)
def test_an_escape_is_named_by_its_class(line: str, effects: list[str], klass: str) -> None:
    assert classify(line, effects) == klass
