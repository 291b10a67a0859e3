"""``guard install copilot --policy`` with the real Copilot CLI: a machine-wide policy hook, enforced with no other hook.

Copilot reads policy hooks from ``/etc/github-copilot/policy.d/*.json`` (root-owned,
not group- or world-writable; its hooks reference), so this test needs root,
and it removes guard's file when it ends. Copilot's docs say ``disableAllHooks``
cannot switch a policy hook off; 1.0.102 in ``-p`` mode did not switch off a
user-level hook for ``disableAllHooks`` in ``~/.copilot/settings.json`` or
``.github/copilot/settings.json`` either (tried), so that immunity is not what
this test shows: it shows the policy file alone is loaded and its deny holds.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import trust_config

from guard.adapters.installers import COPILOT_POLICY_DIR
from guard.setup.install import guard_program

from .test_copilot_cli import POLICY, assert_a_delete_is_denied, copilot_bin  # noqa: F401 (fixture)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.copilot,
    pytest.mark.skipif(
        os.geteuid() != 0, reason="Copilot's policy hooks live in /etc/github-copilot/policy.d (root only)"
    ),
]


def guard_install(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*guard_program(), "install", "copilot", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(home)},
    )


@pytest.fixture
def policy_project(copilot_bin: Path, tmp_path: Path) -> Iterator[tuple[Path, Path, Path]]:  # noqa: F811
    home, project = tmp_path / "agent-home", tmp_path / "project"
    (home / ".copilot").mkdir(parents=True)  # no user-level hook, and the project has no .github/hooks
    project.mkdir()
    (project / "policy.py").write_text(POLICY)
    (project / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: bash\n      callable: policy:no_deletes\n"
    )
    trust_config(project / "guard.yaml")
    yield copilot_bin, home, project
    guard_install(project, home, "--policy", "--uninstall")


def test_a_policy_hook_alone_denies_a_shell_call(policy_project: tuple[Path, Path, Path]) -> None:
    binary, home, project = policy_project
    done = guard_install(project, home, "--policy")
    assert done.returncode == 0, done.stderr
    policy = COPILOT_POLICY_DIR / "guard.json"
    assert policy.stat().st_uid == 0 and policy.stat().st_mode & 0o022 == 0  # what Copilot requires of a policy file
    assert_a_delete_is_denied(binary, home, project)


def test_uninstalling_the_policy_hook_removes_guards_file(policy_project: tuple[Path, Path, Path]) -> None:
    _, home, project = policy_project
    assert guard_install(project, home, "--policy").returncode == 0
    done = guard_install(project, home, "--policy", "--uninstall")
    assert done.returncode == 0, done.stderr
    assert not (COPILOT_POLICY_DIR / "guard.json").exists()
