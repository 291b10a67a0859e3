"""Each program's real options, read from the installed program itself, never from the prover's tables.

The generator must try options the prover does not know, so it takes them from what
the program documents: its ``--help`` (``-h`` for xxd and git's subcommands, bash's
``help`` for a builtin) and, when installed, its manual page. An option's arity is
what the help shows next to it: ``--output=FILE`` takes a value, ``--color[=WHEN]``
may take one after ``=``, ``-c cols`` takes the next word. A wrong guess only shapes
a generated line differently; it never hides the option.
"""

from __future__ import annotations

import gzip
import re
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["NONE", "OPTIONAL", "REQUIRED", "Option", "options_of"]

#: An option's arity: a flag, a value it requires (``=V``, attached or the next word), a value only after ``=``.
NONE, REQUIRED, OPTIONAL = 0, 1, 2

_MAN = Path("/usr/share/man/man1")
#: The environment help is read in: the same text whatever the caller's locale, terminal width or git config.
_HELP_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LC_ALL": "C",
    "COLUMNS": "80",
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
}
_TOKEN = re.compile(r"(?<![\w\-\[])(--?[A-Za-z0-9?][\w\-]*)(\[=[^\]\s]*\]|=[^\s,/\]]+|[ \t]+(?![-\[(|])[^\s,|]+)?")
_ROFF = re.compile(r"\\f[BIRPC]|\\f\(..|\\[,/&]|\\\(..|\\\*.")
#: Words that follow an option in help text but are prose or separators, not its value.
_PROSE = frozenset({"or", "and", "-", "|", "...", ":"})


@dataclass(frozen=True, order=True)
class Option:
    """One option as its program documents it: ``-o``, ``--output``, ``-name`` (find), ``-ps`` (xxd)."""

    name: str
    arity: int


def _help_text(argv: list[str]) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, errors="replace", timeout=10, stdin=subprocess.DEVNULL, env=_HELP_ENV
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + "\n" + done.stderr


def _man_text(page: str) -> str:
    path = _MAN / f"{page}.1.gz"
    if not path.exists():
        return ""
    text = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
    return _ROFF.sub("", text.replace("\\-", "-").replace("\\ ", " "))


def _regions(text: str) -> list[str]:
    """The parts of help or manual text that spell options: an option line up to its description, or a usage synopsis."""
    regions = []
    for raw in text.splitlines():
        line = (
            raw.strip()
            .lstrip(".")
            .removeprefix("TP")
            .removeprefix("B ")
            .removeprefix("BR ")
            .removeprefix("IP ")
            .strip()
        )
        if line.startswith("-"):
            regions.append(re.split(r"\s{2,}|\t|:\s", line, maxsplit=1)[0])
        elif line.lower().startswith(("usage", "or:")) or "[-" in line:
            regions += re.findall(r"\[(-[^\]]*)\]", line)
    return regions


def parse(text: str) -> dict[str, int]:
    """Option name -> arity, from help or manual text. A short option spelled beside a long one shares its arity
    (coreutils: "mandatory arguments to long options are mandatory for short options too")."""
    found: dict[str, int] = {}
    for region in _regions(text):
        spelled: list[tuple[str, int]] = []
        for name, value in _TOKEN.findall(region):
            value = value.strip()
            if value in _PROSE or name in ("-", "--"):
                value = ""
            arity = OPTIONAL if value.startswith("[=") else REQUIRED if value else NONE
            spelled.append((name.rstrip("-"), arity))
        widest = max((arity for _, arity in spelled), default=NONE)
        for name, arity in spelled:
            if len(name) < 2 or name == "--":
                continue
            short_beside_long = len(name) == 2 and len(spelled) > 1
            arity = widest if short_beside_long and arity == NONE else arity
            found[name] = max(found.get(name, NONE), arity)
    return found


def _sources(program: tuple[str, ...]) -> list[str]:
    if program[0] == "git" and len(program) == 2:
        return [_help_text(["git", program[1], "-h"]), _man_text(f"git-{program[1]}")]
    name = program[0]
    texts = [_man_text(name)]
    if name in ("echo", "printf", "pwd", "true", "false", ":", "cd", "test", "[", "type"):
        texts.append(_help_text(["bash", "-c", f"help {'test' if name == '[' else name}"]))
    if name not in (":", "cd", "type"):
        texts.append(_help_text([name, "-h" if name in ("xxd", "hexdump", "hd") else "--help"]))
    if name in ("hexdump", "hd"):
        texts.append(_help_text([name, "--help"]))
    return texts


@cache
def options_of(program: tuple[str, ...]) -> tuple[Option, ...]:
    """The options ``program`` (``("sort",)``, ``("git", "log")``) documents on this machine, sorted."""
    found: dict[str, int] = {}
    for text in _sources(program):
        for name, arity in parse(text).items():
            found[name] = max(found.get(name, NONE), arity)
    found.pop("--help", None)
    found.pop("--version", None)
    return tuple(sorted(Option(name, arity) for name, arity in found.items()))
