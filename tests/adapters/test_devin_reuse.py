"""Devin runs guard's ``.claude/settings.json`` entry as well as its own: with both installed, each call is judged once.

The settings files are the real ones ``guard install claude`` and ``guard install devin``
write; each entry's command is run the way Devin runs it (``/bin/sh -c`` in the
project, ``DEVIN_PROJECT_DIR`` set, Devin's payload: tool ``exec``, no ``cwd``). Whether
Devin passes the ``env`` of ``.claude/settings.local.json`` to hooks is not documented, so
the ``.claude`` launcher is run without this user's ``GUARD_HOOK``: it runs the guard on
PATH, and with none it blocks the call saying what to install (never lets it through).
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
from fixtures.processes import SOURCE_ROOT as REPO
from fixtures.processes import run_guard

#: A PATH with the ``guard`` of the environment under test on it (the tree under test, through PYTHONPATH).
WITH_GUARD = os.pathsep.join([os.path.dirname(shutil.which("guard") or sys.executable), "/usr/bin", "/bin"])

CONFIG = "hooks:\n  PreToolUse:\n    - id: no-pushes\n      command: \"grep -q 'git push' && { echo 'no pushes here' >&2; exit 2; } || exit 0\"\n"
DEVIN_CALL = {
    "session_id": "d1",
    "hook_event_name": "PreToolUse",
    "tool_name": "exec",
    "tool_input": {"command": "git push origin main"},
}


def _project(isolated_home: Path, *clients: str) -> Path:
    project = isolated_home / "proj"
    project.mkdir()
    (project / "guard.yaml").write_text(CONFIG)
    trust_config(project / "guard.yaml")
    for client in clients:
        done = run_guard(["install", client, "--no-sandbox", "--events", "PreToolUse"], project)
        assert done.returncode == 0, done.stderr
    return project


def _entry(path: Path, bare: bool) -> str:
    hooks = json.loads(path.read_text())
    [group] = (hooks if bare else hooks["hooks"])["PreToolUse"]
    return str(group["hooks"][0]["command"])


def _as_devin(command: str, project: Path, path: str = WITH_GUARD) -> subprocess.CompletedProcess[str]:
    env = {"PATH": path, "HOME": os.environ["HOME"], "PYTHONPATH": str(REPO), "DEVIN_PROJECT_DIR": str(project)}
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(DEVIN_CALL),
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=60,
    )


def _audited(project: Path) -> int:
    log = run_guard(["log", "--json"], project)
    return sum(1 for line in log.stdout.splitlines() if "git push origin main" in line)


@pytest.mark.slow
def test_with_both_entries_devin_s_own_judges_and_the_claude_one_steps_aside(isolated_home: Path) -> None:
    project = _project(isolated_home, "claude", "devin")
    reused = _as_devin(_entry(project / ".claude/settings.json", bare=False), project)
    own = _as_devin(_entry(project / ".devin/hooks.v1.json", bare=True), project)

    assert reused.returncode == 0 and reused.stdout == "" and ".devin/hooks.v1.json" in reused.stderr
    assert json.loads(own.stdout)["decision"] == "block" and "no pushes here" in json.loads(own.stdout)["reason"]
    assert _audited(project) == 1, "the call was judged more than once"


@pytest.mark.slow
def test_with_only_the_claude_entry_it_still_guards_devin(isolated_home: Path) -> None:
    project = _project(isolated_home, "claude")
    reused = _as_devin(_entry(project / ".claude/settings.json", bare=False), project)
    out = json.loads(reused.stdout)["hookSpecificOutput"]  # Devin reads Claude Code's answer
    assert out["permissionDecision"] == "deny" and "no pushes here" in out["permissionDecisionReason"]
    without = _as_devin(_entry(project / ".claude/settings.json", bare=False), project, path="/usr/bin:/bin")
    assert without.returncode == 2 and "guard is not installed for you here" in without.stderr, without


@pytest.mark.slow
def test_under_claude_code_the_claude_entry_always_judges(isolated_home: Path) -> None:
    project = _project(isolated_home, "claude", "devin")
    personal = json.loads((project / ".claude/settings.local.json").read_text())["env"][
        "GUARD_HOOK"
    ]  # Claude Code passes it
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": os.environ["HOME"],
        "PYTHONPATH": str(REPO),
        "CLAUDE_PROJECT_DIR": str(project),
        "GUARD_HOOK": personal,
    }
    payload = {**DEVIN_CALL, "tool_name": "Bash", "cwd": str(project)}
    ran = subprocess.run(
        ["/bin/sh", "-c", _entry(project / ".claude/settings.json", bare=False)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=60,
    )
    assert json.loads(ran.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.parametrize(
    "args,env",
    [
        (["--format", "claude"], {"DEVIN_PROJECT_DIR": "{project}"}),  # the .claude entry, run by Devin
        (["--format", "claude", "--project", ""], {}),  # the shared launcher's, under a client that sets no folder
    ],
    ids=["devin", "no-project-folder"],
)
def test_an_event_nested_past_the_parser_s_depth_is_refused_not_a_crash(
    isolated_home: Path, args: list[str], env: dict[str, str]
) -> None:
    """An MCP tool's arguments are the agent's to shape: nested deeper than Python's JSON parser goes, they made
    ``guard hook`` crash (exit 1, which Devin, Gemini and Copilot read as "go ahead"; the shared launcher blocks on it,
    an entry written without it does not) before its failure policy could answer, in the two places that read the
    event before the gate does."""
    project = _project(isolated_home)
    deep = "[" * 5000 + "]" * 5000
    event = '{"session_id": "d1", "hook_event_name": "PreToolUse", "tool_name": "mcp__db__query", "tool_input": {"q": '
    done = run_guard(
        ["hook", *args],
        project,
        stdin=event + deep + "}}",
        env={name: value.replace("{project}", str(project)) for name, value in env.items()},
    )
    assert "Traceback" not in done.stderr, done.stderr[-800:]
    assert done.returncode == 2 and "nested deeper than 100 levels" in done.stderr, (done.returncode, done.stderr)
