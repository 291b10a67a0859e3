"""A checkout ``guard install claude`` never reached (a clone, a git worktree) is told so as a session starts.

The shared ``.claude/settings.json`` is committed, so every checkout runs guard's launcher; this user's
``.claude/settings.local.json`` (``GUARD_HOOK`` and Claude Code's sandbox settings with this checkout's paths) is not.
A clone's launcher falls back to the ``guard`` on PATH with no sandbox; a new git worktree gets the main checkout's
local settings from Claude Code (2.1.332: its ``GUARD_HOOK`` and a sandbox naming the main checkout's files, so the
worktree's guard.yaml is writable). The rules are still enforced; the user is told, in the session's first message,
that this checkout is not set up and where to run ``guard install claude``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.git import git
from fixtures.processes import run_guard

REPO = Path(__file__).resolve().parents[2]
DENY_PUSH = "hooks:\n  PreToolUse:\n    - matcher: Bash\n      command: \"echo 'no pushes here' >&2; exit 2\"\n"
NOT_SET_UP = "guard install claude was not run for you in this checkout"


def _run_entry(checkout: Path, event: dict[str, object], **env: str) -> subprocess.CompletedProcess[str]:
    """The checkout's own launcher for ``event`` (from its committed settings), run as Claude Code runs it."""
    name = str(event["hook_event_name"])
    handler = json.loads((checkout / ".claude/settings.json").read_text())["hooks"][name][0]["hooks"][0]
    guard_on_path = os.path.dirname(shutil.which("guard") or sys.executable)
    environ = {
        "PATH": f"{guard_on_path}:/usr/bin:/bin",
        "HOME": os.environ["HOME"],
        "PYTHONPATH": str(REPO),  # the guard on PATH runs this tree
        "CLAUDE_PROJECT_DIR": str(checkout),
        **env,
    }
    return subprocess.run(
        ["/bin/sh", "-c", handler["command"]],
        input=json.dumps({"session_id": "s1", "cwd": str(checkout), **event}),
        capture_output=True,
        text=True,
        cwd=checkout,
        env=environ,
        timeout=60,
    )


@pytest.mark.slow
@pytest.mark.usefixtures("sandbox_tools")  # a plain guard install claude configures Claude Code's sandbox
def test_a_clone_or_worktree_of_an_installed_project_says_it_is_not_set_up_until_installed_there(
    tmp_path: Path,
) -> None:
    if shutil.which("guard") is None:
        pytest.skip("needs guard on PATH, as a user who installed it has (pip install -e '.[dev]')")
    main = tmp_path / "repo"
    main.mkdir()
    git(main, "init", "-q")
    (main / "guard.yaml").write_text(DENY_PUSH)
    installed = run_guard(["install", "claude", "--client", "guard"], main)
    assert installed.returncode == 0, installed.stderr
    trust_config(main / "guard.yaml")
    git(main, "add", "-A")  # .claude/.gitignore keeps the local settings (GUARD_HOOK, the sandbox) out
    git(main, "commit", "-qm", "guard")
    personal = json.loads((main / ".claude/settings.local.json").read_text())["env"]["GUARD_HOOK"]
    clone, worktree = tmp_path / "clone", tmp_path / "feature"
    git(tmp_path, "clone", "-q", str(main), str(clone))
    git(main, "worktree", "add", "-q", str(worktree))
    start = {"hook_event_name": "SessionStart", "source": "startup"}
    push = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git push"}}

    quiet = _run_entry(main, start, GUARD_HOOK=personal)  # where the user installed, nothing to say
    assert quiet.returncode == 0 and NOT_SET_UP not in quiet.stdout, quiet
    for checkout, given in ((clone, {}), (worktree, {"GUARD_HOOK": personal})):  # Claude Code hands a worktree main's
        assert not (checkout / ".claude/settings.local.json").exists()
        trust_config(checkout / "guard.yaml")  # the user reviewed and trusted the checkout's guard.yaml
        said = _run_entry(checkout, start, **given)
        assert said.returncode == 0, said.stderr
        message = json.loads(said.stdout)["systemMessage"]
        assert NOT_SET_UP in message and str(checkout) in message and "sandbox is not set up" in message, message
        denied = _run_entry(checkout, push, **given)  # the trusted rules still hold there
        assert json.loads(denied.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", denied.stderr

    assert run_guard(["install", "claude", "--client", "guard"], worktree).returncode == 0
    settled = _run_entry(worktree, start, GUARD_HOOK=personal)  # installed there: its own sandbox paths, no message
    assert settled.returncode == 0 and NOT_SET_UP not in settled.stdout, settled


@pytest.mark.slow
@pytest.mark.usefixtures("sandbox_tools")  # a plain guard install claude configures Claude Code's sandbox
def test_a_moved_project_is_told_its_sandbox_settings_name_the_old_folder(tmp_path: Path) -> None:
    """The local settings move with the folder, their paths do not: the sandbox protects files that are not there."""
    if shutil.which("guard") is None:
        pytest.skip("needs guard on PATH, as a user who installed it has (pip install -e '.[dev]')")
    old = tmp_path / "old"
    old.mkdir()
    (old / "guard.yaml").write_text(DENY_PUSH)
    assert run_guard(["install", "claude", "--client", "guard"], old).returncode == 0
    personal = json.loads((old / ".claude/settings.local.json").read_text())["env"]["GUARD_HOOK"]
    moved = old.rename(tmp_path / "moved")
    trust_config(moved / "guard.yaml")  # the user trusts it where it is now
    start = {"hook_event_name": "SessionStart", "source": "startup"}

    said = _run_entry(moved, start, GUARD_HOOK=personal)
    assert said.returncode == 0, said.stderr
    message = json.loads(said.stdout)["systemMessage"]
    assert f"do not protect {moved / 'guard.yaml'}" in message and "guard install claude in" in message, message

    assert run_guard(["install", "claude", "--client", "guard"], moved).returncode == 0
    settled = _run_entry(moved, start, GUARD_HOOK=personal)
    assert settled.returncode == 0 and "do not protect" not in settled.stdout, settled


@pytest.mark.parametrize(
    ("client", "settings", "content", "told"),
    [
        ("claude", ".claude/settings.local.json", b"\xff{}", NOT_SET_UP),  # not UTF-8
        (
            "claude",
            ".claude/settings.local.json",
            b'{"env": {"GUARD_HOOK": "guard hook"}, "sandbox": {"enabled": true, "filesystem": {"denyWrite": 5}}}',
            "do not protect",
        ),
        ("codex", ".codex/config.toml", b'default_permissions = "guard"\npermissions = "guard"\n', "does not protect"),
    ],
)
def test_settings_of_an_odd_shape_still_leave_the_session_start_message(
    client: str, settings: str, content: bytes, told: str, tmp_path: Path
) -> None:
    """The local settings of a checkout not set up are within the agent's reach: a file guard reads as the session
    starts that made the hook end with a traceback took the session's warnings with it (found by r48review)."""
    project = tmp_path / "project"
    (project / settings).parent.mkdir(parents=True)
    (project / settings).write_bytes(content)
    (project / "guard.yaml").write_text(DENY_PUSH)
    trust_config(project / "guard.yaml")
    start = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup", "cwd": str(project)}
    said = run_guard(["hook", "--format", client, "--project", str(project)], project, stdin=json.dumps(start))
    assert said.returncode == 0, said.stderr
    assert told in json.loads(said.stdout)["systemMessage"], said.stdout
