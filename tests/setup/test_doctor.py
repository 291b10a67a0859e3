"""``guard doctor`` as a user runs it: each way guard silently stops guarding is a FAIL with a fix, and exit 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.cache import free_port
from fixtures.processes import run_guard

from guard.testing.openai_stub import StubServer

REPO = Path(__file__).resolve().parents[2]
SMART = "models: {quick: openai/stub-quick}\nhooks:\n  PreToolUse:\n    - id: no-delete\n      depth: quick\n      rule: Deny deleting files.\n"
pytestmark = [pytest.mark.slow, pytest.mark.project(config=SMART, trusted=False)]


def guard(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(REPO), **env}
    return run_guard(args, cwd, env=environ, inherit_env=False, timeout=180)


def lines(proc: subprocess.CompletedProcess[str], label: str) -> list[str]:
    return [line for line in proc.stdout.splitlines() if line.startswith(label)]


@pytest.fixture
def project(project: Path, sandbox_tools: None) -> Path:
    """guard installed as a plain ``guard install claude`` does (Claude Code's sandbox too), its config trusted."""
    installed = guard(["install", "claude"], project)
    assert installed.returncode == 0, installed.stderr
    trust_config(project / "guard.yaml")  # the user's guard trust: install had no terminal to show it on
    return project


def test_doctor_passes_when_everything_works(project: Path, stub: StubServer) -> None:
    proc = guard(["doctor"], project, GUARD_API_BASE=stub.url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not lines(proc, "FAIL") and "guard is ready" in proc.stdout
    assert any(
        f"quick: openai/stub-quick (models.quick in guard.yaml; at {stub.url}) answers" in line
        for line in lines(proc, "ok")
    )
    assert stub.calls == 1  # one tiny request, not a judgement per hook
    assert any("claude hook" in line and "runs (guard " in line for line in lines(proc, "ok"))


def test_doctor_reports_an_unreachable_model(project: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}/v1"
    proc = guard(["doctor", "--model-timeout", "5"], project, GUARD_API_BASE=down)
    assert proc.returncode == 1
    [fail] = lines(proc, "FAIL")
    assert "openai/stub-quick" in fail and down in fail and "does not answer" in fail
    assert "fix: check the model id" in proc.stdout and "Traceback" not in proc.stderr


def test_doctor_reports_a_smart_hook_without_a_model(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - rule: Deny deleting files.\n      depth: quick\n"
    )
    proc = guard(["doctor"], isolated_home)
    assert proc.returncode == 1
    assert any("no model for the quick tier" in line and "GUARD_MODEL_QUICK" in line for line in lines(proc, "FAIL"))
    # it said both "FAIL … no model for the quick tier" and "ok model: quick: no model configured (no smart hook needs one)"
    models = [line for line in proc.stdout.splitlines() if "model:" in line]
    assert not any(line.startswith("ok") and "quick" in line for line in models), models
    assert any(
        line.startswith("ok") and "thorough: no model configured (no smart hook needs one)" in line for line in models
    ), models


def test_doctor_counts_the_hooks_the_user_wrote_and_shows_models_as_written(
    isolated_home: Path, stub: StubServer
) -> None:
    (isolated_home / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - id: one\n      rule: Deny deleting files.\n      depth: quick\n"
    )
    proc = guard(["doctor"], isolated_home, GUARD_API_BASE=stub.url, GUARD_MODEL_QUICK="stub")
    [config] = lines(proc, "ok    config")
    assert config == "ok    config: 1 hook from guard.yaml (and built in: guard.protect)"  # it said "2 hooks"
    assert any(
        f"quick: stub (GUARD_MODEL_QUICK; sent as openai/stub to {stub.url}) answers" in line
        for line in lines(proc, "ok")
    ), proc.stdout


def test_doctor_reports_a_config_that_does_not_load(project: Path) -> None:
    (project / "guard.yaml").write_text(SMART + "modles: {}\n")
    proc = guard(["doctor"], project)
    assert proc.returncode == 1
    [fail] = lines(proc, "FAIL")
    assert fail.startswith("FAIL  config: does not load") and "guard.yaml" in fail and "modles" in fail


def test_doctor_reports_an_installed_hook_guard_is_missing_from(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - command: 'true'\n      timeout: 40\n")
    settings = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "*",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/gone/venv/bin/guard hook --format claude --deadline 30",
                            "timeout": 30,
                        }
                    ],
                }
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "guard hook --format claude"}]}],
        }
    }
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude/settings.json").write_text(json.dumps(settings))
    proc = guard(["doctor"], isolated_home, PATH="/usr/bin:/bin")
    assert proc.returncode == 1
    fails = lines(proc, "FAIL")
    assert any("'/gone/venv/bin/guard' does not exist" in line and "(PreToolUse)" in line for line in fails), fails
    assert any("'guard' does not exist" in line and "(Stop)" in line for line in fails), fails
    assert any(
        "kills guard after 30 s, but the slowest hook with guard's margin needs 45 s" in line for line in fails
    ), fails
    assert "guard install claude --timeout 45" in proc.stdout
    assert any(line.startswith("FAIL  PATH") for line in fails)


def test_doctor_warns_about_a_hook_whose_python_reads_what_the_agent_can_write(isolated_home: Path) -> None:
    """A hook an older guard install wrote (``python -P``, or the ``guard`` script) runs a Python that reads PYTHONPATH
    and the user's site-packages; the one guard install writes now does not."""
    (isolated_home / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - command: 'true'\n")
    trust_config(isolated_home / "guard.yaml")
    old, new = (
        f"{sys.executable} {flag} -m guard.cli.main hook --format claude --deadline 30" for flag in ("-P", "-I")
    )
    for event, command in (("PreToolUse", old), ("Stop", new)):
        settings_file = isolated_home / ".claude/settings.json"
        settings_file.parent.mkdir(exist_ok=True)
        settings = json.loads(settings_file.read_text()) if settings_file.exists() else {"hooks": {}}
        settings["hooks"][event] = [{"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": 30}]}]
        settings_file.write_text(json.dumps(settings))
    proc = guard(["doctor"], isolated_home)
    warned = [line for line in lines(proc, "WARN") if "reads PYTHONPATH and your user site-packages" in line]
    assert len(warned) == 1 and "(PreToolUse)" in warned[0], proc.stdout
    assert "it writes `python -I`" in proc.stdout


def test_doctor_warns_when_nothing_is_installed_and_there_is_no_config(isolated_home: Path) -> None:
    proc = guard(["doctor"], isolated_home)
    assert proc.returncode == 0, proc.stdout
    warns = lines(proc, "WARN")
    assert any("no guard.yaml here" in line for line in warns) and any(
        "not installed in any client" in line for line in warns
    )


def test_doctor_on_a_teammates_clone_says_guard_is_not_installed_for_them_and_what_to_run(
    isolated_home: Path, tmp_path: Path
) -> None:
    """The clone has what the team committed (guard.yaml, .claude/settings.json), not the installer's local settings."""
    (isolated_home / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - command: 'true'\n")
    assert guard(["install", "claude", "--no-sandbox"], isolated_home).returncode == 0
    clone = tmp_path / "clone"
    (clone / ".claude").mkdir(parents=True)
    for name in ("guard.yaml", ".claude/settings.json", ".claude/.gitignore"):
        (clone / name).write_bytes((isolated_home / name).read_bytes())
    assert str(isolated_home) not in (clone / ".claude/settings.json").read_text()  # nobody's paths in what is shared

    proc = guard(["doctor", "--model-timeout", "1"], clone, PATH="/usr/bin:/bin")  # no guard on the teammate's PATH
    assert proc.returncode == 1
    assert any("guard is not installed for you here" in line for line in lines(proc, "FAIL")), proc.stdout
    assert "fix: pip install plainguard, then guard install claude in this project" in proc.stdout, proc.stdout
    assert any(line.startswith("FAIL  trust") for line in lines(proc, "FAIL")), (
        proc.stdout
    )  # never trusted on this machine


@pytest.mark.parametrize(("version", "status"), [("2.1.290", "FAIL"), ("2.1.332", "ok")])
def test_doctor_says_what_each_client_does_when_guards_program_fails_and_flags_a_claude_code_too_old_for_on_failure(
    isolated_home: Path, version: str, status: str
) -> None:
    (isolated_home / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - command: 'true'\n")
    for client in ("claude", "codex"):
        assert guard(["install", client, "--no-sandbox"], isolated_home).returncode == 0
    claude = isolated_home / "claude"
    claude.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    claude.chmod(0o755)
    proc = guard(["doctor", "--model-timeout", "1"], isolated_home, GUARD_CLAUDE_BIN=str(claude))
    told = [line for line in proc.stdout.splitlines() if "when guard fails" in line]
    assert any(line.startswith(status) and "claude when guard fails" in line and version in line for line in told), told
    assert any(
        line.startswith("WARN") and "codex when guard fails" in line and "lets the call run" in line for line in told
    ), told


def test_doctor_warns_that_claude_worktrees_run_unguarded_until_the_shared_settings_are_committed(
    isolated_home: Path,
) -> None:
    """``claude --worktree`` on a project whose .claude/settings.json is not in git: the worktree has no settings, and
    the real Claude Code (2.1.332) ran no hook there (tests/e2e/test_claude_worktree.py)."""
    (isolated_home / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - command: 'true'\n")
    assert guard(["install", "claude", "--no-sandbox"], isolated_home).returncode == 0
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@x"]
    subprocess.run([*git, "init", "-q"], cwd=isolated_home, check=True)
    subprocess.run([*git, "add", "guard.yaml", ".claude/settings.json"], cwd=isolated_home, check=True)
    subprocess.run([*git, "commit", "-qm", "rules", "--", "guard.yaml"], cwd=isolated_home, check=True)
    said = "is not in the last commit: a git worktree of this project"  # staged is not enough: worktrees start at HEAD

    proc = guard(["doctor", "--model-timeout", "1"], isolated_home)
    assert any(said in line for line in lines(proc, "WARN")), proc.stdout
    assert "fix: commit .claude/settings.json" in proc.stdout, proc.stdout

    subprocess.run([*git, "commit", "-qm", "guard's hooks"], cwd=isolated_home, check=True)
    assert said not in guard(["doctor", "--model-timeout", "1"], isolated_home).stdout
