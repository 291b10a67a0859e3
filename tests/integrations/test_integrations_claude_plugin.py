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
from fixtures.integration import POLICY, guard_yaml
from fixtures.processes import run_guard

import guard
from guard.setup.install import PLUGIN_DIR, plugin_hooks
from guard.testing.anthropic_stub import AnthropicStub, final_text, tool_use

REPO = Path(__file__).resolve().parents[2]


def test_the_plugin_declares_the_hooks_guard_install_writes_and_the_marketplaces_name_it() -> None:
    declared = json.loads((PLUGIN_DIR / "hooks" / "hooks.json").read_text())["hooks"]
    assert (
        declared == plugin_hooks()
    )  # regenerate hooks/hooks.json from guard.setup.install.plugin_hooks() when this fails
    assert declared["PreToolUse"][0]["hooks"][0]["command"].endswith(
        '/hooks/run-guard.sh" hook --format claude --deadline 600'
    )
    assert (PLUGIN_DIR / "hooks" / "run-guard.sh").is_file()
    name = json.loads((PLUGIN_DIR / ".claude-plugin" / "plugin.json").read_text())["name"]
    bundled = json.loads((PLUGIN_DIR / ".claude-plugin" / "marketplace.json").read_text())["plugins"]
    repository = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())["plugins"]
    assert [p["name"] for p in bundled] == [p["name"] for p in repository] == [name]
    assert (REPO / repository[0]["source"]).resolve() == PLUGIN_DIR.resolve()


def test_plugin_install_names_the_claude_commands_and_refuses_other_clients(isolated_home: Path) -> None:
    dry = run_guard(["install", "claude", "--plugin", "--scope", "user", "--dry-run"], isolated_home)
    assert dry.stdout.splitlines() == [
        f"claude plugin marketplace add {PLUGIN_DIR}",
        "claude plugin install guard@guard --scope user",
    ]
    other = run_guard(["install", "gemini", "--plugin"], isolated_home)
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
    (project / "guard_test_policy.py").write_text(POLICY)  # before the trust, which pins the module guard runs
    trust_config(project / "guard.yaml")
    env = {"PYTHONPATH": os.pathsep.join([str(project), str(Path(guard.__file__).resolve().parents[1])])}
    installed = run_guard(
        ["install", "claude", "--plugin", "--scope", "project"],
        project,
        env={**CLAUDE.env("http://127.0.0.1:9", home, env), "GUARD_CLAUDE_BIN": str(binary)},
        inherit_env=False,
        timeout=240,
    )
    assert installed.returncode == 0, installed.stderr
    assert "hooks" not in json.loads(
        (project / ".claude" / "settings.json").read_text()
    )  # the plugin carries the hooks
    victim, marker = project / "victim", project / "ran"
    victim.mkdir()

    command = f"touch {marker} && rm -rf {victim}"
    turns: list[Any] = [tool_use("Bash", {"command": command, "description": "run"}), final_text("ok")]
    with AnthropicStub(turns) as agent:
        run = CLAUDE.run(binary, "do the task", cwd=project, base_url=agent.base_url, home=home, env=env, timeout_s=300)
    assert run.returncode == 0, run.describe()

    assert not marker.exists() and victim.is_dir(), "the denied command ran"
    assert "deleting folders is not allowed in this project" in str(agent.agent_requests[1].tool_results())


def plugin_hook(event: dict[str, Any], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The plugin's hook command as Claude Code runs it: ``${CLAUDE_PLUGIN_ROOT}`` expanded, through ``sh -c``."""
    command = plugin_hooks()["PreToolUse"][0]["hooks"][0]["command"]
    return subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        env={**env, "CLAUDE_PLUGIN_ROOT": str(PLUGIN_DIR)},
    )


def no_guard_env(home: Path) -> dict[str, str]:
    """A client's environment where no guard can be found: PATH has only the system tools, HOME has no ~/.local/bin."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(home)}


@pytest.mark.parametrize("event", ["PreToolUse", "UserPromptSubmit"])
def test_the_plugin_hook_blocks_with_a_message_when_it_finds_no_guard(event: str, tmp_path: Path) -> None:
    done = plugin_hook(
        {"hook_event_name": event, "tool_name": "Bash", "tool_input": {"command": "rm -rf /srv"}},
        no_guard_env(tmp_path),
        tmp_path,
    )
    assert done.returncode == 2 and "cannot find the guard program" in done.stderr and "GUARD_BIN" in done.stderr


def test_the_plugin_hook_warns_without_blocking_a_stop_when_it_finds_no_guard(tmp_path: Path) -> None:
    done = plugin_hook({"hook_event_name": "Stop", "stop_hook_active": False}, no_guard_env(tmp_path), tmp_path)
    assert done.returncode == 0 and "cannot find the guard program" in json.loads(done.stdout)["systemMessage"]


def test_the_plugin_hook_runs_the_guard_guard_bin_names(isolated_home: Path) -> None:
    from guard.setup.install import guard_script

    (isolated_home / "guard.yaml").write_text(guard_yaml("'@shell'"))
    (isolated_home / "guard_test_policy.py").write_text(POLICY)  # before the trust, which pins the module guard runs
    trust_config(isolated_home / "guard.yaml")
    env = {
        **no_guard_env(isolated_home.parent / "home"),
        "GUARD_BIN": guard_script() or "",  # the plugin runs a guard executable: the console script
        "PYTHONPATH": os.pathsep.join([str(isolated_home), str(Path(guard.__file__).resolve().parents[1])]),
        **{k: v for k, v in os.environ.items() if k.startswith("XDG_")},
    }
    done = plugin_hook(
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "rm -rf /srv"},
            "session_id": "s",
            "cwd": str(isolated_home),
        },
        env,
        isolated_home,
    )
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", done.stdout + done.stderr


def test_doctor_fails_when_an_enabled_plugin_cannot_reach_guard(isolated_home: Path) -> None:
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"guard@guard": True}}))
    home = isolated_home.parent / "home"
    env = {**os.environ, **no_guard_env(home), "PYTHONPATH": str(Path(guard.__file__).resolve().parents[1])}
    env.pop("GUARD_BIN", None)
    done = run_guard(["doctor", "--model-timeout", "1"], isolated_home, env=env, inherit_env=False)
    assert done.returncode == 1 and "guard is ready" not in done.stdout
    assert "claude plugin (project)" in done.stdout and "its hook finds no guard" in done.stdout, done.stdout

    done = run_guard(
        ["doctor", "--model-timeout", "1"], isolated_home, env={**env, "GUARD_BIN": sys.executable}, inherit_env=False
    )
    assert f"its hook runs {sys.executable}" in done.stdout, done.stdout
