"""`guard install copilot`: guard's own ``guard.json`` in Copilot CLI's hooks folders, and ``--policy`` (machine-wide)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fixtures.processes import run_guard
from test_install import _project

from guard.adapters.installers import settings_path
from guard.setup.install import default_command, install

HANDLER = {"type": "command", "bash": default_command("copilot"), "timeoutSec": 30}


def test_project_install_writes_guards_own_file_with_copilots_handler_fields(tmp_path: Path) -> None:
    project = _project(tmp_path)
    result = install("copilot", project_dir=project, home=tmp_path)
    assert result.path == project / ".github/hooks/guard.json"
    # only preToolUse: Copilot honours no other answer, and an event it sends without its name reads as preToolUse
    assert json.loads(result.path.read_text()) == {"version": 1, "hooks": {"preToolUse": [HANDLER]}}


def test_user_scope_follows_copilot_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert (
        settings_path("copilot", "user", project_dir=tmp_path, home=tmp_path / "home")
        == tmp_path / "home/.copilot/hooks/guard.json"
    )
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot-home"))
    assert (
        settings_path("copilot", "user", project_dir=tmp_path, home=tmp_path)
        == tmp_path / "copilot-home/hooks/guard.json"
    )
    assert settings_path("copilot", "policy", project_dir=tmp_path, home=tmp_path) == Path(
        "/etc/github-copilot/policy.d/guard.json"
    )


def test_uninstall_removes_guards_file_and_a_second_install_changes_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path)
    path = install("copilot", project_dir=project, home=tmp_path).path
    written = path.read_bytes()
    assert not install("copilot", project_dir=project, home=tmp_path).changed and path.read_bytes() == written
    assert install("copilot", project_dir=project, home=tmp_path, uninstall=True).changed
    assert not path.exists()  # Copilot reads every *.json there: an empty guard.json would be noise


@pytest.mark.slow
def test_policy_is_refused_for_other_clients_and_without_root(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "guard.yaml").write_text("hooks: {}\n")
    proc = run_guard(["install", "gemini", "--policy", "--no-sandbox"], project)
    assert proc.returncode == 1 and "--policy is for copilot and claude" in proc.stderr
    if os.geteuid() != 0:
        proc = run_guard(["install", "copilot", "--policy"], project)
        assert proc.returncode == 1 and "sudo" in proc.stderr
    proc = run_guard(["install", "copilot", "--policy", "--dry-run"], project)
    if os.geteuid() == 0:
        assert proc.returncode == 0 and json.loads(proc.stdout)["hooks"]["preToolUse"][0]["bash"].endswith(
            "--format copilot --deadline 30"
        )


def test_a_hook_copilot_starts_outside_the_project_finds_the_config_by_the_events_cwd(
    isolated_home: Path, tmp_path: Path
) -> None:

    from conftest import trust_config

    project = _project(tmp_path)
    (project / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: bash\n      command: \"echo 'no pushes here' >&2; exit 2\"\n"
    )
    trust_config(project / "guard.yaml")
    elsewhere = tmp_path / "elsewhere"  # Copilot CLI 1.0.102 ran user-level hooks in /tmp
    elsewhere.mkdir()
    event = {"timestamp": 1, "cwd": str(project), "toolName": "bash", "toolArgs": json.dumps({"command": "git push"})}
    ran = run_guard(["hook", "--format", "copilot"], elsewhere, stdin=json.dumps(event))
    assert json.loads(ran.stdout)["permissionDecision"] == "deny", ran.stderr
