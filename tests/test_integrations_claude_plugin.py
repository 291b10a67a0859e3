"""guard as a Claude Code plugin: ``guard install claude --plugin`` installs it through ``claude plugin``,
and the real Claude Code CLI then runs guard's hook from the plugin (no settings.json hook entry)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from e2e.agent_cli import CLAUDE
from integration_fixtures import POLICY, guard_yaml

import guard
from guard.install import PLUGIN_DIR, plugin_hooks
from guard.testing.anthropic_stub import AnthropicStub, final_text, tool_use

REPO = Path(__file__).resolve().parents[1]


def test_the_plugin_declares_the_hooks_guard_install_writes_and_the_marketplaces_name_it() -> None:
    declared = json.loads((PLUGIN_DIR / "hooks" / "hooks.json").read_text())["hooks"]
    assert declared == plugin_hooks()  # regenerate hooks/hooks.json from guard.install.plugin_hooks() when this fails
    assert declared["PreToolUse"][0]["hooks"][0]["command"].startswith("guard hook --format claude")
    name = json.loads((PLUGIN_DIR / ".claude-plugin" / "plugin.json").read_text())["name"]
    bundled = json.loads((PLUGIN_DIR / ".claude-plugin" / "marketplace.json").read_text())["plugins"]
    repository = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())["plugins"]
    assert [p["name"] for p in bundled] == [p["name"] for p in repository] == [name]
    assert (REPO / repository[0]["source"]).resolve() == PLUGIN_DIR.resolve()


def test_plugin_install_names_the_claude_commands_and_refuses_other_clients(isolated_home: Path) -> None:
    dry = subprocess.run([sys.executable, "-m", "guard.cli.main", "install", "claude", "--plugin", "--scope", "user", "--dry-run"],
                         capture_output=True, text=True, timeout=60, cwd=isolated_home)
    assert dry.stdout.splitlines() == [f"claude plugin marketplace add {PLUGIN_DIR}", "claude plugin install guard@guard --scope user"]
    other = subprocess.run([sys.executable, "-m", "guard.cli.main", "install", "gemini", "--plugin"], capture_output=True, text=True, timeout=60, cwd=isolated_home)
    assert other.returncode == 1 and "claude only" in other.stderr


@pytest.mark.claude
@pytest.mark.slow
def test_the_installed_plugin_denies_a_call_in_the_real_claude_code(tmp_path: Path) -> None:
    binary = CLAUDE.find()
    if binary is None:
        pytest.skip(f"claude CLI not found: {CLAUDE.install_hint}")
    home, project = tmp_path / "agent-home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "guard.yaml").write_text(guard_yaml("Bash"))
    trust_config(project / "guard.yaml")
    (project / "guard_test_policy.py").write_text(POLICY)
    env = {"PYTHONPATH": os.pathsep.join([str(project), str(Path(guard.__file__).resolve().parents[1])])}
    installed = subprocess.run([sys.executable, "-m", "guard.cli.main", "install", "claude", "--plugin", "--scope", "project"], cwd=project,
                               env={**CLAUDE.env("http://127.0.0.1:9", home, env), "GUARD_CLAUDE_BIN": str(binary)}, capture_output=True, text=True, timeout=240)
    assert installed.returncode == 0, installed.stderr
    assert "hooks" not in json.loads((project / ".claude" / "settings.json").read_text())  # the plugin carries the hooks
    victim, marker = project / "victim", project / "ran"
    victim.mkdir()

    command = f"touch {marker} && rm -rf {victim}"
    turns: list[Any] = [tool_use("Bash", {"command": command, "description": "run"}), final_text("ok")]
    with AnthropicStub(turns) as agent:
        run = CLAUDE.run(binary, "do the task", cwd=project, base_url=agent.base_url, home=home, env=env, timeout_s=300)
    assert run.returncode == 0, run.describe()

    assert not marker.exists() and victim.is_dir(), "the denied command ran"
    assert "deleting folders is not allowed in this project" in str(agent.agent_requests[1].tool_results())
