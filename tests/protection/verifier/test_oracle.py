"""The verifier against known answers: a broken prover's escapes are caught with their evidence, good lines run clean.

If the sandbox, the trace or the oracle stopped seeing an effect, the first tests
fail; if they saw effects that are not there, the second ones do.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .fakes import BrokenClaims
from .generator import CHANGERS
from .oracle import DELETES, ENVIRONMENT, NETWORK, RUNS, SECRET, WRITES
from .programs import KNOWN, allowed_binaries
from .sandbox import Pool
from .trace import calls
from .verify import Verifier
from .world import World


def verifier(world: World, pool: Pool, proven: dict[str, tuple[str, ...] | None] | None = None) -> Verifier:
    return Verifier(BrokenClaims(proven), pool, world, allowed_binaries(KNOWN, world.env()))


@pytest.mark.parametrize(
    ("line", "effect"),
    [
        ("rm a.txt", DELETES),
        ("mv a.txt moved.txt", DELETES),
        ("sort -o pwned a.txt", WRITES),
        ("sed -n '1w pwned' a.txt", WRITES),
        ("sort {-o,pwned} a.txt", WRITES),
        ("chmod +x a.txt", WRITES),
        ("mkdir made", WRITES),
        ("echo x > /etc/verifier-pwned", WRITES),  # refused by the read-only file system, an attempt all the same
        ("python3 -c 'print(1)'", RUNS),
        ("find . -name a.txt -exec sh -c true \\;", RUNS),
        ("printf -v PATH %s .; cat a.txt", RUNS),
        ("exec 3<>/dev/tcp/127.0.0.1/9", NETWORK),
        ("file -f names", SECRET),
        ("echo $OPENAI_API_KEY", ENVIRONMENT),
    ],
)
def test_a_broken_prover_s_escape_is_caught_with_its_evidence(world: World, pool: Pool, line: str, effect: str) -> None:
    escape = verifier(world, pool).check(line)
    assert escape is not None and effect in escape.effects, escape
    evidence = " ".join(f.evidence for f in escape.findings if f.effect == effect)
    assert evidence, escape  # a system call (or the output) shows it


def test_a_write_beyond_the_proof_s_targets_is_an_escape(world: World, pool: Pool) -> None:
    broken = verifier(
        world, pool, {"echo hi > out.txt; echo hi > other.txt": ("out.txt",), "echo hi > out.txt": ("out.txt",)}
    )
    escape = broken.check("echo hi > out.txt; echo hi > other.txt")
    assert escape is not None and escape.mode == "write" and escape.effects == [WRITES]
    assert all("other.txt" in f.evidence for f in escape.findings)
    assert broken.check("echo hi > out.txt") is None


def test_the_file_utilities_changes_are_held_to_exactly_what_they_are_proven_to_change(
    world: World, pool: Pool
) -> None:
    """sed -i's temporary file beside the file it edits, mv's refused first try onto the destination folder and the folders
    mkdir -p makes from inside each other are accepted only as part of the files and folders the proof names."""
    exact = {
        "sed -i s/alpha/omega/ a.txt": ("a.txt",),
        "mv a.txt src": ("a.txt", "src/a.txt"),
        "mkdir -p made/sub": (),
        "rm b.txt": ("b.txt",),
    }
    good = verifier_made(world, pool, exact, {"mkdir -p made/sub": ("made", "made/sub")})
    assert [(line, good.check(line)) for line in exact] == [(line, None) for line in exact]
    short = {
        "sed -i s/alpha/omega/ a.txt": ("b.txt",),
        "mv a.txt src": ("a.txt",),
        "mkdir -p made/sub": (),
        "rm b.txt": ("a.txt",),
    }
    broken = verifier_made(world, pool, short, {"mkdir -p made/sub": ("made",)})
    for line in short:
        escape = broken.check(line)
        assert escape is not None and escape.mode == "write", line


def verifier_made(
    world: World, pool: Pool, proven: dict[str, tuple[str, ...] | None], made: dict[str, tuple[str, ...]]
) -> Verifier:
    return Verifier(BrokenClaims(proven, made), pool, world, allowed_binaries(KNOWN + CHANGERS, world.env()))


@pytest.mark.parametrize(
    "line",
    [
        "cat a.txt",
        "ls -la src",
        "grep -rn alpha .",
        "sort a.txt | uniq -c",
        "echo x | tac",
        "git log --oneline",
        "git status",
        "git diff",
        "git show HEAD --stat",
        "git grep alpha",
        "find . -name '*.txt'",
        "wc -l a.txt b.txt",
        "head -c 5 a.gz | od -c",
        "stat a.txt",
        "du -sh .",
        "df .",
        "id; whoami; uname -a",
        "date +%s",
        "jq .k data.json",
        "cat <<'EOF'\n" + "x\n" * 30_000 + "EOF",
        "cat a.txt > /dev/null 2>&1",
        "ls /nonexistent 2>/dev/null; true",
        "cat ~/.config/guard/not-there 2>/dev/null; true",
    ],
)
def test_a_line_that_only_reads_runs_clean(world: World, pool: Pool, line: str) -> None:
    assert verifier(world, pool).check(line) is None


def test_a_line_that_writes_only_its_targets_runs_clean(world: World, pool: Pool) -> None:
    lines = {
        "echo hi > out.txt": ("out.txt",),
        "cat a.txt >> notes.md": ("notes.md",),
        "sort a.txt > src/sorted.txt": ("src/sorted.txt",),
    }
    broken = verifier(world, pool, dict(lines))
    assert [broken.check(line) for line in lines] == [None, None, None]


def test_each_line_starts_from_the_planted_world(world: World, pool: Pool) -> None:
    pool.run("rm -rf a.txt src .git; chmod 000 .; echo x > /tmp/left-behind")
    after = pool.run("cat a.txt; ls src; git log --oneline | wc -l; ls /tmp")
    assert after.stdout.split("\n")[:7] == ["alpha", "beta", "gamma", "changed", "main.py", "util.py", "1"]
    assert "left-behind" not in after.stdout


def test_the_sandbox_keeps_the_machine_and_the_network_out_of_reach(world: World, pool: Pool, tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    run = pool.run(
        f"echo x > /etc/verifier-probe; echo x > {probe}; touch written-in-the-sandbox; exec 3<>/dev/tcp/1.1.1.1/80"
    )
    assert not Path("/etc/verifier-probe").exists() and not probe.exists()
    assert not (
        world.project / "written-in-the-sandbox"
    ).exists()  # the worker's copy, never the tree guard proves against
    assert "Network is unreachable" in run.stderr and run.rc != 0


def test_a_call_interrupted_by_another_process_s_is_joined_back() -> None:
    log = (
        '12    openat(AT_FDCWD</w/project>, "out.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666 <unfinished ...>\n'
        '13    execve("/usr/bin/cat", ["cat"], 0x1 /* 3 vars */) = 0\n'
        "12    <... openat resumed>) = 3</w/project/out.txt>\n"
        '13    unlinkat(AT_FDCWD</w/project/src>, "../gone", 0) = -1 ENOENT (No such file or directory)\n'
    )
    found = list(calls(log, "/w/project"))
    assert [(c.name, c.paths) for c in found] == [
        ("execve", ("/usr/bin/cat",)),
        ("openat", ("/w/project/out.txt",)),
        ("unlinkat", ("/w/project/gone",)),
    ]
    assert found[1].opened == "/w/project/out.txt" and found[2].error == "ENOENT"
