"""``guard <command>`` imports the one command group that registers it; ``guard --help`` imports none.

So a group's imports can sit at the top of its module without slowing every other command's start. The table in
guard.cli.main names each command's group and summary; it is checked here against what the groups register, so
``guard --help`` cannot drift from them.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

import pytest
from fixtures.processes import guard_modules, run_guard

from guard.cli.main import COMMANDS

GROUPS = {f"guard.cli.{command.group}" for command in COMMANDS.values()}


def test_the_command_table_is_what_the_groups_register() -> None:
    registered = {}
    for group in {command.group for command in COMMANDS.values()}:
        sub = argparse.ArgumentParser(prog="guard").add_subparsers()
        importlib.import_module(f"guard.cli.{group}").register(sub)
        summaries = {action.dest: action.help for action in sub._choices_actions}
        assert set(summaries) == set(sub.choices), f"guard.cli.{group} registers a command without a summary"
        registered |= {name: (group, summary) for name, summary in summaries.items()}
    assert registered == {name: (command.group, command.summary) for name, command in COMMANDS.items()}


@pytest.mark.parametrize(
    ("argv", "group"),
    [
        (["check", "--tool", "Bash", "--input", "{}", "--config", "missing.yaml"], "guard.cli.check"),
        (["approvals", "--help"], "guard.cli.approvals"),
        (["--help"], None),
        ([], None),
        (["chek"], None),
    ],
)
def test_a_command_imports_its_group_only(tmp_path: Path, argv: list[str], group: str | None) -> None:
    done = run_guard(argv, tmp_path, probe=True)
    assert done.returncode in (0, 2, 3), done.stderr
    assert GROUPS & set(guard_modules(done)) == ({group} if group else set()), done.stderr


def test_a_misspelt_command_lists_every_command(tmp_path: Path) -> None:
    done = run_guard(["chek"], tmp_path)
    assert done.returncode == 2
    assert "invalid choice: 'chek'" in done.stderr
    assert all(f"'{name}'" in done.stderr for name in COMMANDS), done.stderr


def test_help_lists_every_command_with_its_summary(tmp_path: Path) -> None:
    done = run_guard(["--help"], tmp_path)
    assert done.returncode == 0, done.stderr
    flat = " ".join(done.stdout.split())
    assert all(f"{name} {' '.join(command.summary.split())}" in flat for name, command in COMMANDS.items()), flat
