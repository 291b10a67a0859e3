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

from guard.testing.openai_stub import StubServer

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SMART = "models: {quick: openai/stub-quick}\nhooks:\n  PreToolUse:\n    - id: no-delete\n      depth: quick\n      rule: Deny deleting files.\n"


def guard(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(REPO), **env}
    return subprocess.run([sys.executable, "-m", "guard.cli.main", *args], capture_output=True, text=True, cwd=cwd, env=environ, timeout=180)


def lines(proc: subprocess.CompletedProcess[str], label: str) -> list[str]:
    return [line for line in proc.stdout.splitlines() if line.startswith(label)]


@pytest.fixture
def project(isolated_home: Path, sandbox_tools: None) -> Path:
    """guard installed as a plain ``guard install claude`` does (Claude Code's sandbox too), its config trusted."""
    (isolated_home / "guard.yaml").write_text(SMART)
    installed = guard(["install", "claude"], isolated_home)
    assert installed.returncode == 0, installed.stderr
    trust_config(isolated_home / "guard.yaml")  # the user's guard trust: install had no terminal to show it on
    return isolated_home


def test_doctor_passes_when_everything_works(project: Path, stub: StubServer) -> None:
    proc = guard(["doctor"], project, GUARD_API_BASE=stub.url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not lines(proc, "FAIL") and "guard is ready" in proc.stdout
    assert any(f"quick: openai/stub-quick (models.quick in guard.yaml; at {stub.url}) answers" in line for line in lines(proc, "ok"))
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
    (isolated_home / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - rule: Deny deleting files.\n      depth: quick\n")
    proc = guard(["doctor"], isolated_home)
    assert proc.returncode == 1
    assert any("no model for the quick tier" in line and "GUARD_MODEL_QUICK" in line for line in lines(proc, "FAIL"))
    # it said both "FAIL … no model for the quick tier" and "ok model: quick: no model configured (no smart hook needs one)"
    models = [line for line in proc.stdout.splitlines() if "model:" in line]
    assert not any(line.startswith("ok") and "quick" in line for line in models), models
    assert any(line.startswith("ok") and "thorough: no model configured (no smart hook needs one)" in line for line in models), models


def test_doctor_counts_the_hooks_the_user_wrote_and_shows_models_as_written(isolated_home: Path, stub: StubServer) -> None:
    (isolated_home / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - id: one\n      rule: Deny deleting files.\n      depth: quick\n")
    proc = guard(["doctor"], isolated_home, GUARD_API_BASE=stub.url, GUARD_MODEL_QUICK="stub")
    [config] = lines(proc, "ok    config")
    assert config == "ok    config: 1 hook from guard.yaml (and built in: guard.protect)"  # it said "2 hooks"
    assert any(f"quick: stub (GUARD_MODEL_QUICK; sent as openai/stub to {stub.url}) answers" in line for line in lines(proc, "ok")), proc.stdout


def test_doctor_reports_a_config_that_does_not_load(project: Path) -> None:
    (project / "guard.yaml").write_text(SMART + "modles: {}\n")
    proc = guard(["doctor"], project)
    assert proc.returncode == 1
    [fail] = lines(proc, "FAIL")
    assert fail.startswith("FAIL  config: does not load") and "guard.yaml" in fail and "modles" in fail


def test_doctor_reports_an_installed_hook_guard_is_missing_from(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - command: 'true'\n      timeout: 40\n")
    settings = {"hooks": {
        "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/gone/venv/bin/guard hook --format claude --deadline 30", "timeout": 30}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "guard hook --format claude"}]}],
    }}
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude/settings.json").write_text(json.dumps(settings))
    proc = guard(["doctor"], isolated_home, PATH="/usr/bin:/bin")
    assert proc.returncode == 1
    fails = lines(proc, "FAIL")
    assert any("'/gone/venv/bin/guard' does not exist" in line and "(PreToolUse)" in line for line in fails), fails
    assert any("'guard' does not exist" in line and "(Stop)" in line for line in fails), fails
    assert any("kills guard after 30 s, but the slowest hook with guard's margin needs 45 s" in line for line in fails), fails
    assert "guard install claude --timeout 45" in proc.stdout
    assert any(line.startswith("FAIL  PATH") for line in fails)


def test_doctor_warns_when_nothing_is_installed_and_there_is_no_config(isolated_home: Path) -> None:
    proc = guard(["doctor"], isolated_home)
    assert proc.returncode == 0, proc.stdout
    warns = lines(proc, "WARN")
    assert any("no guard.yaml here" in line for line in warns) and any("not installed in any client" in line for line in warns)
