"""The CLI as a newcomer meets it: piped into ``head``, asked for ``--help``, given a typo."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.cli import GuardCli
from fixtures.processes import SOURCE_ROOT

from guard.cli.check import _EXIT
from guard.config.loading import load_config
from guard.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def closed_pipe_run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run guard with its stdout a pipe whose reader has already gone (``| head`` after one line, at worst)."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "guard.cli.main", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            timeout=120,
            env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
        )
    finally:
        os.close(write)
    return subprocess.CompletedProcess(done.args, done.returncode, "", done.stderr)


@pytest.mark.slow
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
        (
            "hooks:\n  PreToolUse:\n    - command: 'true'\n      failur_mode: fail_closed\n",
            "hooks.PreToolUse[0].failur_mode",
            "failure_mode",
        ),
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


def _help(guard_cli: GuardCli, args: list[str]) -> str:
    done = guard_cli([*args, "--help"])
    assert done.returncode == 0, done.stderr
    return done.stdout


def _commands(guard_cli: GuardCli) -> list[str]:
    listing = _help(guard_cli, []).split("COMMAND", 2)[-1]
    return re.findall(r"^    (\w+)\s", listing, re.MULTILINE)


def test_every_command_says_what_it_does_under_its_usage(guard_cli: GuardCli) -> None:
    """hook, serve, doctor and view had no description line in --help."""
    commands = _commands(guard_cli)
    assert {"hook", "serve", "doctor", "view", "services", "check", "log"} <= set(commands)
    for command in commands:
        blocks = _help(guard_cli, [command]).split("\n\n")
        described = next(b for b in blocks[1:] if b.strip())
        assert not described.startswith(("options:", "positional arguments:")), (
            f"guard {command} --help has no description"
        )


def test_every_option_has_help_text() -> None:
    """check --depth had none."""
    from guard.cli.main import build_parser

    def parsers(parser: argparse.ArgumentParser, name: str) -> list[tuple[str, argparse.ArgumentParser]]:
        found = [(name, parser)]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, child in action.choices.items():
                    found += parsers(child, f"{name} {sub}")
        return found

    bare = [
        f"{name} {'/'.join(a.option_strings) or a.dest}"
        for name, parser in parsers(build_parser(), "guard")
        for a in parser._actions
        if not a.help and not isinstance(a, argparse._HelpAction | argparse._SubParsersAction | argparse._VersionAction)
    ]
    assert bare == []


def test_install_help_lists_the_events_install_writes(isolated_home: Path, guard_cli: GuardCli) -> None:
    """install --help listed four default events; five are installed."""
    text = " ".join(_help(guard_cli, ["install"]).split())
    listed = re.search(r"default: ([\w, ]+) \(in each client", text)
    assert listed, text
    done = guard_cli(["install", "claude", "--no-sandbox"])
    assert done.returncode == 0, done.stderr
    written = json.loads((isolated_home / ".claude" / "settings.json").read_text())["hooks"]
    also = re.search(
        r"claude also (\w+)\)", text
    )  # Claude Code gets the events every client gets, and PermissionDenied
    assert also, text
    assert sorted([*listed.group(1).split(", "), also.group(1)]) == sorted(written)
