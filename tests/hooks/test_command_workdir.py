"""A relative hook command runs beside the config that declared it, whatever the event's cwd says.

The event's ``cwd`` is written by whoever sends the event; if guard ran relative
commands there, a payload naming another folder would run that folder's
``hooks/check.sh``. Each test plants such a script and sends a ``guard hook``
process an event pointing at it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import trust_config
from fixtures.processes import run_guard

GOOD = '#!/bin/sh\necho good >> "$(dirname "$0")/../ran.txt"\necho "$CLAUDE_PROJECT_DIR" > "$(dirname "$0")/../project_dir.txt"\nexit 0\n'
EVIL = '#!/bin/sh\necho pwned >> "$(dirname "$0")/../ran.txt"\necho \'evil script ran\' >&2\nexit 2\n'


def plant(folder: Path, script: str, body: str) -> None:
    path = folder / script
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)


def guard_hook(args: list[str], event: dict[str, object], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return run_guard(["hook", *args], cwd, stdin=json.dumps(event), env={"CLAUDE_PROJECT_DIR": None, **env})


def bash_event(cwd: Path) -> dict[str, object]:
    return {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "cwd": str(cwd),
    }


def test_guard_yaml_command_runs_beside_guard_yaml_not_in_the_events_cwd(tmp_path: Path) -> None:
    project, attacker, started_in = tmp_path / "project", tmp_path / "attacker", tmp_path / "somewhere"
    started_in.mkdir()
    plant(project, "hooks/check.sh", GOOD)
    plant(attacker, "hooks/check.sh", EVIL)
    (project / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - id: check\n      command: sh hooks/check.sh\n")
    trust_config(project / "guard.yaml")

    # the process starts in a third folder: neither it nor the event's cwd decides where the script is
    proc = guard_hook(["--config", str(project / "guard.yaml")], bash_event(attacker), started_in)

    assert proc.returncode == 0, proc.stderr
    assert not (attacker / "ran.txt").exists(), "the event's cwd chose which script ran"
    assert (project / "ran.txt").read_text() == "good\n"
    assert "evil script ran" not in proc.stderr and "deny" not in proc.stdout
    assert (project / "project_dir.txt").read_text().strip() == str(project.resolve())


def test_settings_json_command_runs_from_the_project_root(tmp_path: Path) -> None:
    project, attacker = tmp_path / "project", tmp_path / "attacker"
    plant(project, ".claude/hooks/check.sh", GOOD)
    plant(attacker, ".claude/hooks/check.sh", EVIL)
    handler = {"type": "command", "command": "sh .claude/hooks/check.sh"}
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    trust_config(project / ".claude" / "settings.json")

    proc = guard_hook(["--config", str(project / ".claude" / "settings.json")], bash_event(attacker), attacker)

    assert proc.returncode == 0, proc.stderr
    assert not (attacker / ".claude" / "ran.txt").exists()
    assert (project / ".claude" / "ran.txt").read_text() == "good\n"
    assert (project / ".claude" / "project_dir.txt").read_text().strip() == str(project.resolve())


def test_the_clients_own_claude_project_dir_is_kept(tmp_path: Path) -> None:
    project = tmp_path / "project"
    plant(project, "hooks/check.sh", GOOD)
    (project / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - command: sh hooks/check.sh\n")
    trust_config(project / "guard.yaml")

    proc = guard_hook([], bash_event(tmp_path), project, CLAUDE_PROJECT_DIR="/set/by/the/client")

    assert proc.returncode == 0, proc.stderr
    assert (project / "project_dir.txt").read_text().strip() == "/set/by/the/client"
