"""Client settings below the project are protected by name: a later session started there reads them.

Claude Code (2.1.332) makes its worktrees in ``<project>/.claude/worktrees/<name>`` (EnterWorktree, ``claude
--worktree``, agent isolation), and a session started in one, or in any git worktree or nested project, reads that
folder's own ``.claude/settings.json``: with guard's hooks taken out of it, that session runs no hook at all (tried
with the real CLI: tests/e2e/test_claude_worktree.py). The agent, in the project, could rewrite it, since only the
client settings of the project, the folders above it and the event's folder were protected.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fixtures.processes import run_guard

from guard.config.loading import load_config
from guard.hooks.protect import judge
from guard.protection.targets import HOOK_ID

CONFIG = "hooks:\n  PreToolUse:\n    - id: no-fetch\n      matcher: WebFetch\n      command: 'exit 2'\n"
WORKTREE = ".claude/worktrees/x"
SETTINGS = f"{WORKTREE}/.claude/settings.json"

pytestmark = pytest.mark.project(
    config=CONFIG,
    files={SETTINGS: "{}\n", "sub/z/.claude/settings.local.json": "{}\n", "sub/z/.github/hooks/guard.json": "{}\n"},
)


def _event(project: Path, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "cwd": str(project),
        "tool_name": tool,
        "tool_input": tool_input,
    }


def _decide(project: Path, tool: str, tool_input: dict[str, Any]) -> str | None:
    spec = load_config().specs[-1]
    assert spec.id == HOOK_ID
    return judge(spec, _event(project, tool, tool_input)).decision


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Bash", {"command": f"echo '{{}}' > {SETTINGS}"}),
        ("Bash", {"command": "echo '{}' > .claude/worktrees/new/.claude/settings.local.json"}),  # made later, too
        ("Bash", {"command": f"truncate -s0 {SETTINGS}"}),
        ("Bash", {"command": f"mv {WORKTREE}/.claude /tmp/gone"}),  # the folder holding it
        ("Bash", {"command": "sed -i s/guard/true/ .claude/worktrees/*/.claude/settings.json"}),
        ("Bash", {"command": "cp evil.json sub/z/.claude/settings.local.json"}),
        ("Bash", {"command": "rm -r sub/z/.github/hooks"}),
        ("Bash", {"command": "echo x > deep/a/b/.codex/hooks.json"}),
        # a tree written into a worktree, or a sweep of one, reaches its settings (found by r49attack)
        ("Bash", {"command": f"tar xf /tmp/evil.tar -C {WORKTREE}"}),
        ("Bash", {"command": f"rsync -a /tmp/evil/ {WORKTREE}/"}),
        ("Bash", {"command": f"cp -r /tmp/evil/. {WORKTREE}/"}),
        ("Bash", {"command": "find . -name settings.json -delete"}),
        ("Write", {"file_path": SETTINGS, "content": "{}"}),
        ("Edit", {"file_path": "sub/z/.claude/settings.local.json", "old_string": "{", "new_string": "{ "}),
    ],
)
def test_a_write_to_client_settings_below_the_project_is_denied(
    project: Path, tool: str, tool_input: dict[str, Any]
) -> None:
    assert _decide(project, tool, tool_input) == "deny"


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Bash", {"command": f"cat {SETTINGS}"}),
        ("Bash", {"command": f"echo hi > {WORKTREE}/notes.txt && cat {WORKTREE}/.claude/settings.json"}),
        ("Bash", {"command": "rm -r sub/z/.github/workflows build/.cache"}),  # .github without hooks/, a dot folder
        ("Bash", {"command": "rm -rf src/*/tmp"}),  # a glob matches a dot name only when it starts with a dot
        ("Bash", {"command": "mkdir -p other/.claude && echo x > other/.claude/notes.md"}),
        ("Write", {"file_path": f"{WORKTREE}/src/app.py", "content": "print(1)"}),
    ],
)
def test_work_below_the_project_is_not_refused(project: Path, tool: str, tool_input: dict[str, Any]) -> None:
    assert _decide(project, tool, tool_input) is None


@pytest.mark.slow
@pytest.mark.parametrize("command", [f"printf '{{}}' > {SETTINGS}", f"tar xf /tmp/evil.tar -C {WORKTREE}"])
def test_a_guard_hook_process_refuses_a_worktree_s_settings_write_from_the_project(project: Path, command: str) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    event = _event(project, "Bash", {"command": command})
    proc = run_guard(["hook", "--format", "claude"], project, stdin=json.dumps(event))
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny", proc.stdout
    assert SETTINGS in out["permissionDecisionReason"] and "hook settings" in out["permissionDecisionReason"]


@pytest.mark.slow
@pytest.mark.parametrize("made", [64, 300], ids=["folders-sorting-first", "more-than-listed"])
def test_folders_the_agent_makes_beside_a_worktree_do_not_push_it_out_of_the_list(project: Path, made: int) -> None:
    """A cut-off at the first 64 names in sorted order let ``mkdir .claude/worktrees/a{000..063}`` (in-project writes
    no rule refuses) leave the real worktree ``x`` unlisted, and a tree written into it then reached its settings."""
    for at in range(made):
        (project / ".claude" / "worktrees" / f"a{at:03}").mkdir(parents=True)
    event = _event(project, "Bash", {"command": f"tar xf /tmp/evil.tar -C {WORKTREE}"})
    proc = run_guard(["hook", "--format", "claude"], project, stdin=json.dumps(event))
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "hook settings" in out["permissionDecisionReason"], proc.stdout
