"""The sed script checker against GNU sed itself: a script it calls print-only compiles under ``sed --sandbox``.

``--sandbox`` makes GNU sed refuse, when it compiles a script, every ``e``, ``r`` and ``w`` command and the
``s///e`` and ``s///w`` flags (``R`` and ``W`` too): the reading GNU sed makes of a script is the one that
matters, so each script here, and a few thousand random ones, go through the real sed: a script the checker
proves must compile in the sandbox, and one the sandbox refuses must not be proven.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from guard.protection.sed_script import script_problem

SED = shutil.which("sed", path="/usr/bin:/bin")
pytestmark = pytest.mark.skipif(SED is None, reason="GNU sed is not installed (apt-get install sed)")
SANDBOX = "e/r/w commands disabled in sandbox mode"

PRINTING = [
    "1,20p",
    "/foo/,/bar/p",
    "$p",
    "/x/{p;q}",
    "s|a[/]|b|gp",
    "y/abc/xyz/",
    "1~2p",
    "0,/re/p",
    ":a;N;ba",
    "/w/p",
    "\\cwcp",
    "s/x/y/2g",
    "l 5",
    "=",
    "/[[:alpha:]w]/ p",
    "1,/x/!d",
    "s/a/\\/w/",
    "s/a/b/ # w x",
    "10q",
    "/e/!{p}",
    "s/[]/]/x/",
    "n;n;p",
    "$!N;P;D",
    "s/a/b/I",
    "/r/Ip",
    "s,w,e,g",
    "#n\np",
    "F",
    "z;p",
    "h;g;G;H;x",
    "s/x/&\\n/",
    "1b end; p; :end",
    "T;p",
    "1a foo",
    "/x/i\\\n    bar\\\n    baz",
    "2c\\text; w /tmp/x",
    "a\\",
    "$a end # w x",
    "5i\\\n\\\n    def f(self):\\\n        return 1",
]
WRITING = [
    "w /tmp/x",
    "1a foo\nw /tmp/x",
    "i\\\nfoo\nw /tmp/x",
    "c\\\nfoo\\\nbar\ne id",
    "1w out",
    "s/a/b/w out",
    "1e id",
    "e id",
    "s/.*/id/e",
    "r /etc/passwd",
    "R f",
    "W out",
    "$!{w x\n}",
    "p;w x",
    "s/[/]/x/e",
    "s/a/b/gw x",
    "/x/ w out",
    "1!w x",
    "s/a/b/;e",
    "{p};w x",
    "y/a/b/;w x",
    "s/a/w/ w x",
    "\\,x,w out",
]


def sandboxed(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SED), "--sandbox", "-n", "-e", script, "/dev/null"],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"},
        check=False,
        timeout=10,
    )


@pytest.mark.parametrize("script", PRINTING)
def test_a_print_only_script_is_proven_and_compiles_in_the_sandbox(script: str, tmp_path: Path) -> None:
    assert script_problem(script) is None
    assert sandboxed(script, tmp_path).returncode == 0


@pytest.mark.parametrize("script", WRITING)
def test_a_script_that_writes_runs_or_reads_is_refused_as_sed_refuses_it(script: str, tmp_path: Path) -> None:
    assert script_problem(script) is not None
    assert SANDBOX in sandboxed(script, tmp_path).stderr


def test_random_scripts_agree_with_sed(tmp_path: Path) -> None:
    """Scripts of the pieces where a checker and sed could part ways: brackets, escapes, delimiters, ends of commands."""
    rnd = random.Random(35)
    pieces = [
        "s",
        "/",
        "|",
        ",",
        "[",
        "]",
        "\\",
        "w",
        "e",
        "r",
        "p",
        ";",
        "{",
        "}",
        "#",
        "\n",
        " ",
        "!",
        "1",
        "$",
        "x",
        "a",
        "i",
        "c",
        "y",
        "g",
        "I",
        ":",
        "b",
        "q",
        "~",
        "[/]",
        "\\/",
        "s/a/b/",
        "[[:alpha:]]",
        "n",
    ]
    scripts = sorted({"".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 9))) for _ in range(4000)})
    proven = [script for script in scripts if script_problem(script) is None]
    assert (
        len(proven) > 300 and sum("w" in script or "e" in script for script in proven) > 50
    )  # the letters, as text sed does not run
    assert [script for script in proven if SANDBOX in sandboxed(script, tmp_path).stderr] == []
