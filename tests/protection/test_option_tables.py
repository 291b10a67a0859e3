"""Each getopt program's option table against the binary installed here: the prover reads options as the program does.

The tables in :mod:`guard.protection.reading_programs` are transcribed from the programs' sources. Here each
one is checked against the real program through glibc's own error messages, without running what an
option does: every short letter is or is not an option, and takes a value or not, as the table says
(``prog -X --unknown`` fails on ``--unknown`` unless X took it as its value; ``prog -X@`` fails on ``@``
unless X takes an attached value); every long option exists with the argument the table gives it
(``--name=x`` "doesn't allow an argument", a bare ``--name`` last "requires an argument"); and each
long option's shortest unique abbreviation resolves to it, while the prefix one shorter is ambiguous or
another option's, exactly as the model resolves it (``--comp`` is ``--compress-program`` to sort).
All probes run in one bash, in an empty folder, with standard input from /dev/null, under ``timeout``.
"""

from __future__ import annotations

import os
import shutil
import string
import subprocess
from pathlib import Path

import pytest

from guard.protection import file_changes
from guard.protection.argv_model import NO, OPTIONAL, REQUIRED, Table
from guard.protection.reading_programs import GETOPT_PROGRAMS, program

UNKNOWN = "--zzq-no-such-option"
pytestmark = pytest.mark.skipif(
    shutil.which("timeout") is None or os.uname().sysname != "Linux", reason="needs GNU/Linux"
)


def run_probes(probes: list[list[str]], cwd: Path) -> list[str]:
    """Each argv's error output (first 600 bytes), all in one bash run."""
    import shlex

    script = "".join(
        f"timeout 3 {shlex.join(argv)} </dev/null 2>&1 >/dev/null | head -c 600; printf '\\0'\n" for argv in probes
    )
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": str(cwd), "TMPDIR": str(cwd)}
    out = subprocess.run(["bash", "-c", script], capture_output=True, cwd=cwd, env=env, timeout=600, check=False).stdout
    return out.decode(errors="replace").split("\0")[:-1]


def _seen(text: str, out: str) -> bool:
    if (
        text == "@@NO-VALUE@@"
    ):  # -X@ with X taking no value: getopt refuses @, or the program stopped at -X before reading on
        return "invalid option -- '@'" in out or f"unrecognized option '{UNKNOWN}'" not in out
    return text in out


def model_resolves(table: Table, prefix: str) -> tuple[str, str | None]:
    """("exact"/"unique"/"ambiguous"/"unknown", full name) as the model resolves ``--prefix``."""
    from guard.protection.argv_model import _long

    found = _long(table, prefix)
    if isinstance(found, str):
        return ("ambiguous", None) if "ambiguous" in found else ("unknown", None)
    return "unique", found[0]


def shortest_unique(table: Table, name: str) -> str:
    for size in range(1, len(name) + 1):
        kind, full = model_resolves(table, name[:size])
        if kind == "unique" and full == name:
            return name[:size]
    return name


def table_of(name: str) -> Table:
    """The table the prover reads ``name`` with: a reading program's, or a file utility's (the project-writes lane's)."""
    if name in file_changes.PROGRAMS:
        return file_changes.table(name)
    prog = program(name)
    assert prog is not None and prog.table is not None
    return prog.table


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(GETOPT_PROGRAMS | file_changes.PROGRAMS))
def test_the_option_table_is_the_installed_program_s(name: str, tmp_path: Path) -> None:
    table = table_of(name)
    binary = shutil.which(name, path="/usr/bin:/bin")
    if binary is None:
        package = {"file": "file", "diff": "diffutils", "grep": "grep", "sed": "sed"}.get(name, "coreutils")
        pytest.skip(f"{name} is not installed (apt-get install {package})")
    letters = [
        c for c in string.ascii_letters + string.digits if not (c.isdigit() and name in ("seq", "head"))
    ]  # their -NUM is a number
    probes: list[list[str]] = []
    expect: list[tuple[str, str, bool]] = []  # (what, text that must (or must not) appear, must appear)
    for letter in letters:
        option = table.short.get(letter)
        if option is None:
            probes.append([binary, f"-{letter}", UNKNOWN])
            expect.append((f"-{letter} is not an option", f"invalid option -- '{letter}'", True))
        elif option.arg == REQUIRED:
            probes.append([binary, f"-{letter}"])
            expect.append((f"-{letter} needs a value", f"option requires an argument -- '{letter}'", True))
        elif option.arg == OPTIONAL:
            probes.append([binary, f"-{letter}@", UNKNOWN])
            expect.append((f"-{letter}@ is -{letter} with the value @", "invalid option -- '@'", False))
        else:
            probes.append(
                [binary, f"-{letter}@", UNKNOWN]
            )  # @ is read as the next letter: an error, unless -X stopped the program
            expect.append((f"-{letter}@ reads @ as a letter", "@@NO-VALUE@@", True))
    for full, option in table.long:
        probes.append([binary, f"--{full}=x", UNKNOWN])
        expect.append((f"--{full}=x", f"option '--{full}' doesn't allow an argument", option.arg == NO))
        probes.append([binary, f"--{full}"])
        expect.append((f"--{full} alone", f"option '--{full}' requires an argument", option.arg == REQUIRED))
        short = shortest_unique(table, full)
        if short != full or len(full) > 1:
            probes.append(
                [
                    binary,
                    f"--{short}" + ("=x" if option.arg == NO else ""),
                    *([UNKNOWN] if option.arg != REQUIRED else []),
                ]
            )
            message = (
                f"option '--{full}' doesn't allow an argument"
                if option.arg == NO
                else (
                    f"option '--{full}' requires an argument"
                    if option.arg == REQUIRED
                    else f"unrecognized option '{UNKNOWN}'"
                )
            )
            expect.append((f"--{short} is --{full}", message, True))
        if len(short) > 1:
            shorter = short[:-1]
            kind, other = model_resolves(table, shorter)
            probes.append([binary, f"--{shorter}", UNKNOWN])
            if kind == "ambiguous":
                expect.append((f"--{shorter} is ambiguous", f"option '--{shorter}' is ambiguous", True))
            elif kind == "unknown":
                expect.append((f"--{shorter} is no option", f"unrecognized option '--{shorter}'", True))
            else:
                expect.append((f"--{shorter} is --{other}, one option", f"option '--{shorter}' is ambiguous", False))
    outputs = run_probes(probes, tmp_path)
    wrong = [
        (what, argv[1:], out.strip()[:200])
        for (what, text, present), argv, out in zip(expect, probes, outputs, strict=True)
        if _seen(text, out) is not present
    ]
    assert wrong == []


def test_a_table_reads_as_getopt_long_reads() -> None:
    """The model's own reading of the spellings the issue found: abbreviations, clusters with attached values, permutation."""
    from guard.command_analysis.expansion import Field
    from guard.protection.argv_model import getopt_long

    sort = program("sort")
    sed = program("sed")
    assert sort is not None and sort.table is not None and sed is not None and sed.table is not None

    def read(table: Table, *words: str) -> list[tuple[str, str | None]]:
        parsed = getopt_long(table, [Field(w) for w in words])
        assert parsed.problem is None, parsed.problem
        return [(use.option.key, use.value) for use in parsed.uses] + [("operand", f.text) for f in parsed.operands]

    assert read(sort.table, "--comp=sh", "f") == [("compress-program", "sh"), ("operand", "f")]
    assert read(sort.table, "--out", "x", "f") == [("o", "x"), ("operand", "f")]
    assert read(sort.table, "f", "-ox") == [("o", "x"), ("operand", "f")]  # options after operands
    assert read(sed.table, "-ne'w x'", "f") == [("n", None), ("e", "'w x'"), ("operand", "f")]
    assert read(sed.table, "-nse", "1e id", "f") == [("n", None), ("s", None), ("e", "1e id"), ("operand", "f")]
    assert read(sed.table, "--expr=p", "--", "-f") == [("e", "p"), ("operand", "-f")]
    assert getopt_long(sort.table, [Field("--c")]).problem == "--c is ambiguous (--check, --compress-program …)"
    assert getopt_long(program("grep").table, [Field("--colo")]).problem is None  # type: ignore[union-attr]  # --color and --colour: one option
    assert OPTIONAL == 2


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed (apt-get install ripgrep)")
def test_rg_s_options_are_the_installed_ripgrep_s(tmp_path: Path) -> None:
    """ripgrep parses with clap, not getopt: each long option and letter exists and takes a value as the model says
    (``rg -e x --NAME`` last "requires a value" for one that does), and clap infers no abbreviation."""
    from guard.protection.own_parsers import _RG_LONG, _RG_SHORT

    binary = str(shutil.which("rg"))
    probes: list[list[str]] = []
    expect: list[tuple[str, bool | None]] = []  # (option, takes a value; None: not an option)
    for name, (_, valued, _) in _RG_LONG.items():
        probes.append([binary, "-e", "x", f"--{name}"])
        expect.append((f"--{name}", valued))
    for letter in string.ascii_letters + string.digits + ".":
        spec = _RG_SHORT.get(letter)
        probes.append([binary, "-e", "x", f"-{letter}"])
        expect.append((f"-{letter}", None if spec is None else spec[1]))
    for abbreviation in ("--colo", "--max-c", "--no-conf", "--pr"):
        probes.append([binary, "-e", "x", abbreviation])
        expect.append((abbreviation, None))
    #: Last on the line these take no value without a word (a default value; -e may repeat): the model refuses that
    #: spelling, and the probes below show each takes the next word, whatever it is.
    lenient = {"--engine", "--regexp", "-e"}
    wrong = []
    for (option, valued), out in zip(expect, run_probes(probes, tmp_path), strict=True):
        unknown = f"Found argument '{option}' which wasn't expected" in out
        needs = "requires a value but none was supplied" in out
        if (valued is None) != unknown or (valued is not None and valued != needs and option not in lenient):
            wrong.append((option, valued, out.strip()[:160]))
    (tmp_path / "lines").write_text("a --json b\n")
    engine, e, regexp = (
        subprocess.run([binary, *args], capture_output=True, text=True, cwd=tmp_path, check=False, timeout=30)
        for args in (["--engine", "nonsense", "-e", "x"], ["-e", "--json", "lines"], ["--regexp", "--json", "lines"])
    )
    assert "'nonsense' isn't a valid value" in engine.stderr
    assert e.stdout == regexp.stdout == "a --json b\n"  # the word after -e was the pattern, whatever it looked like
    assert wrong == []
