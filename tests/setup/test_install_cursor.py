"""`guard install cursor`: Cursor's flat ``hooks.json`` (``"version": 1``, handlers straight under each event, ``failClosed``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.processes import run_guard
from test_install import REPO, _project, _write

from guard.core.errors import ConfigError
from guard.setup.install import default_command, install, installed_hooks

COMMAND = default_command("cursor")
BLOCKING = {"preToolUse", "beforeSubmitPrompt"}


def test_project_install_writes_a_flat_version_1_file_with_fail_closed_where_a_call_can_be_blocked(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    result = install("cursor", project_dir=project, home=tmp_path / "home")
    data = json.loads((project / ".cursor/hooks.json").read_text())
    assert result.path == project / ".cursor/hooks.json" and data["version"] == 1
    assert list(data["hooks"]) == ["preToolUse", "postToolUse", "beforeSubmitPrompt", "stop", "sessionStart"]
    for event, handlers in data["hooks"].items():
        # Cursor reads each handler directly: command and timeout in seconds, no matcher groups
        assert handlers == [{"command": COMMAND, "timeout": 30, **({"failClosed": True} if event in BLOCKING else {})}]


def test_user_scope_is_home_cursor_hooks_json(tmp_path: Path) -> None:
    result = install("cursor", scope="user", project_dir=_project(tmp_path), home=tmp_path / "home")
    assert result.path == tmp_path / "home/.cursor/hooks.json" and result.path.is_file()


def test_the_specific_before_events_can_be_chosen_and_fail_closed_too(tmp_path: Path) -> None:
    project = _project(tmp_path)
    install(
        "cursor", project_dir=project, home=tmp_path, events=["beforeShellExecution", "beforeReadFile", "afterFileEdit"]
    )
    hooks = json.loads((project / ".cursor/hooks.json").read_text())["hooks"]
    assert hooks["beforeShellExecution"][0]["failClosed"] is True and hooks["beforeReadFile"][0]["failClosed"] is True
    assert "failClosed" not in hooks["afterFileEdit"][0]
    with pytest.raises(ConfigError, match="cursor has no hook event"):
        install("cursor", project_dir=project, home=tmp_path, events=["PermissionRequest"])


def test_other_hooks_are_kept_a_second_install_is_byte_identical_and_uninstall_restores_the_file(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    path = project / ".cursor/hooks.json"
    original = _write(
        path,
        {
            "version": 1,
            "hooks": {
                "preToolUse": [{"command": "./audit.sh", "matcher": "Shell"}],
                "afterFileEdit": [{"command": "npx prettier --write"}],
            },
        },
    )
    install("cursor", project_dir=project, home=tmp_path)
    written = path.read_bytes()
    hooks = json.loads(written)["hooks"]
    assert (
        hooks["preToolUse"][0] == {"command": "./audit.sh", "matcher": "Shell"}
        and hooks["preToolUse"][1]["command"] == COMMAND
    )
    assert hooks["afterFileEdit"] == [{"command": "npx prettier --write"}]
    assert not install("cursor", project_dir=project, home=tmp_path).changed and path.read_bytes() == written
    assert install("cursor", project_dir=project, home=tmp_path, uninstall=True).changed
    assert path.read_bytes() == original


def test_installed_hooks_reads_the_flat_file_and_its_fail_closed(tmp_path: Path) -> None:
    project = _project(tmp_path)
    install("cursor", project_dir=project, home=tmp_path)
    found = {h.event: h.fail_closed for h in installed_hooks("cursor", "project", project_dir=project, home=tmp_path)}
    assert found == {
        "preToolUse": True,
        "postToolUse": False,
        "beforeSubmitPrompt": True,
        "stop": False,
        "sessionStart": False,
    }


def test_an_event_that_is_not_a_list_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    project = _project(tmp_path)
    path = project / ".cursor/hooks.json"
    original = _write(path, {"version": 1, "hooks": {"preToolUse": {"command": "x"}}})
    with pytest.raises(ConfigError, match="hooks.preToolUse"):
        install("cursor", project_dir=project, home=tmp_path)
    assert path.read_bytes() == original


@pytest.mark.slow
def test_the_installed_command_blocks_a_documented_shell_call_as_cursor_runs_it(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Shell\n      command: \"echo 'no pushes here' >&2; exit 2\"\n"
    )
    proc = run_guard(["install", "cursor"], project)
    assert proc.returncode == 0, proc.stderr
    trust_config(project / "guard.yaml")  # the user's guard trust (install had no terminal to show the config on)
    assert "unsandboxed" in proc.stdout and ".claude/settings.json" in proc.stdout  # the notes a Cursor user needs
    handler = json.loads((project / ".cursor/hooks.json").read_text())["hooks"]["preToolUse"][0]
    payload = {
        "conversation_id": "c1",
        "generation_id": "g1",
        "hook_event_name": "preToolUse",
        "workspace_roots": [str(project)],
        "tool_name": "Shell",
        "tool_input": {"command": "git push origin main"},
        "tool_use_id": "t1",
        "cwd": str(project),
    }
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ["HOME"], "PYTHONPATH": str(REPO)}
    ran = subprocess.run(
        ["/bin/sh", "-c", handler["command"]],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert out["permission"] == "deny" and "no pushes here" in out["agent_message"]


def test_doctor_checks_cursor_s_hooks_and_warns_about_a_fail_open_handler(isolated_home: Path) -> None:
    from test_doctor import guard, lines

    (isolated_home / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - command: 'true'\n")
    _write(
        isolated_home / ".cursor/hooks.json",
        {
            "version": 1,
            "hooks": {
                "preToolUse": [{"command": f"{COMMAND}", "timeout": 30}],
                "beforeSubmitPrompt": [
                    {
                        "command": "/gone/venv/bin/guard hook --format cursor --deadline 30",
                        "timeout": 30,
                        "failClosed": True,
                    }
                ],
            },
        },
    )
    proc = guard(["doctor"], isolated_home)
    warns, fails = lines(proc, "WARN"), lines(proc, "FAIL")
    assert any("cursor hook" in line and "(preToolUse)" in line and "failClosed" in line for line in warns), proc.stdout
    assert not any("(beforeSubmitPrompt)" in line and "failClosed" in line for line in warns), proc.stdout
    assert any("'/gone/venv/bin/guard' does not exist" in line and "(beforeSubmitPrompt)" in line for line in fails), (
        proc.stdout
    )
    assert any(line.startswith("WARN  cursor sandbox") or "cursor sandbox" in line for line in warns + fails), (
        proc.stdout
    )
