"""The CLI as a newcomer meets it: piped into ``head``, asked for ``--help``, given a typo."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from guard.cli.check import _EXIT
from guard.config import load_config
from guard.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def closed_pipe_run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run guard with its stdout a pipe whose reader has already gone (``| head`` after one line, at worst)."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "guard.cli.main", *args], stdout=write, stderr=subprocess.PIPE, text=True, cwd=cwd, timeout=120)
    finally:
        os.close(write)
    return subprocess.CompletedProcess(done.args, done.returncode, "", done.stderr)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["log", "--json"], 0),  # nothing logged: JSON Lines print no line, so nothing meets the closed pipe
        (["log"], 141),  # 141: the shell's code for a writer whose reader left (SIGPIPE)
        (["check", "--tool", "Bash", "--input", '{"command": "ls"}', "--json"], 141),
        (["datasets", "check", str(ROOT / "evals" / "shell-subset.jsonl")], 141),
        (["check", "--help"], 0),  # argparse drops a failed help write itself
    ],
    ids=lambda value: " ".join(value[:2]) if isinstance(value, list) else str(value),
)
def test_a_reader_that_stops_early_gets_no_traceback(args: list[str], code: int, isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - id: ok\n      command: 'exit 0'\n")
    done = closed_pipe_run(args, isolated_home)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == code


def test_check_help_lists_the_exit_codes_it_uses(capsys: pytest.CaptureFixture[str]) -> None:
    from guard.cli.main import main

    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    listed = dict((word, int(code)) for code, word in re.findall(r"(\d) (allow|deny|ask|error)", text))
    assert listed == {**_EXIT, "error": 3}


@pytest.mark.parametrize(
    ("yaml", "where", "meant"),
    [
        ("modles:\n  quick: openai/x\n", "modles", "models"),
        ("models:\n  quik: openai/x\n", "models.quik", "quick"),
        ("cache:\n  tll: 1h\n", "cache.tll", "ttl"),
        ("hooks:\n  PreToolUse:\n    - command: 'true'\n      failur_mode: fail_closed\n", "hooks.PreToolUse[0].failur_mode", "failure_mode"),
        ("hooks:\n  PreToolUse:\n    - rule: Deny rm\n      mather: Bash\n", "hooks.PreToolUse[0].mather", "matcher"),
    ],
)
def test_a_mistyped_key_says_which_key_was_meant(yaml: str, where: str, meant: str, isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(yaml)
    with pytest.raises(ConfigError) as error:
        load_config("guard.yaml")
    assert f"{where}: unknown key (did you mean {meant!r}?)" in str(error.value)


def test_an_unknown_key_like_no_other_lists_the_keys(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text("server:\n  zzz: 1\n")
    with pytest.raises(ConfigError, match=r"server\.zzz: unknown key \(expected one of: url, token\)"):
        load_config("guard.yaml")
