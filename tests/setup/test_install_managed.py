"""`guard install claude --policy`: Claude Code's managed settings, for an admin: guard's hook with allowManagedHooksOnly (docs/team.md)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from fixtures.processes import run_guard
from test_install import _project

from guard.adapters import installers
from guard.adapters.installers import settings_path
from guard.setup import install as install_module
from guard.setup.install import default_command, install, installed_hooks


def test_the_policy_scope_is_claudes_managed_settings_file(tmp_path: Path) -> None:
    expected = (
        "/Library/Application Support/ClaudeCode/managed-settings.json"
        if os.uname().sysname == "Darwin"
        else "/etc/claude-code/managed-settings.json"
    )
    assert str(settings_path("claude", "policy", project_dir=tmp_path, home=tmp_path)) == expected


def test_managed_settings_carry_guards_hook_and_allow_managed_hooks_only_and_keep_the_admins_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    managed = tmp_path / "etc-claude-code" / "managed-settings.json"
    managed.parent.mkdir()
    managed.write_text(json.dumps({"permissions": {"deny": ["WebFetch"]}}))
    monkeypatch.setattr(installers, "CLAUDE", dataclasses.replace(installers.CLAUDE, policy_file=managed))
    result = install_module.install("claude", scope="policy", project_dir=tmp_path, home=tmp_path)
    data = json.loads(managed.read_text())
    assert result.changed and data["allowManagedHooksOnly"] is True and data["permissions"] == {"deny": ["WebFetch"]}
    pre = data["hooks"]["PreToolUse"][0]["hooks"][0]
    assert pre["command"] == default_command("claude") and pre["type"] == "command"
    assert [h.event for h in installed_hooks("claude", "policy", project_dir=tmp_path, home=tmp_path)][:1] == [
        "PreToolUse"
    ], "guard doctor finds it"
    assert not install("claude", scope="policy", project_dir=tmp_path, home=tmp_path).changed, (
        "installing twice changes nothing"
    )
    data["allowManagedHooksOnly"] = False
    managed.write_text(json.dumps(data))
    assert install("claude", scope="policy", project_dir=tmp_path, home=tmp_path).changed, "the key is put back"
    assert json.loads(managed.read_text())["allowManagedHooksOnly"] is True
    install("claude", scope="policy", project_dir=tmp_path, home=tmp_path, uninstall=True)
    assert json.loads(managed.read_text()) == {"permissions": {"deny": ["WebFetch"]}}, (
        "uninstalling takes out what guard wrote, nothing else"
    )


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="a policy install needs root (guard install refuses it otherwise)")
def test_the_cli_writes_managed_settings_without_touching_the_sandbox(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "guard.yaml").write_text("hooks: {}\n")
    done = run_guard(["install", "claude", "--policy", "--dry-run"], project)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["allowManagedHooksOnly"] is True and "PreToolUse" in data["hooks"]
    assert "sandbox" not in data and "would be" not in done.stderr, (
        "a machine-wide file gets no one user's sandbox paths"
    )
