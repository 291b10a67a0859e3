"""The built-in self-protection rule: the guarded agent may not change guard's config, state, hook settings or secret."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.processes import modules, run_guard

from guard.config.loading import load_config
from guard.hooks.protect import judge
from guard.protection.targets import HOOK_ID

CONFIG = "hooks:\n  PreToolUse:\n    - id: no-fetch\n      matcher: WebFetch\n      command: 'exit 2'\n"
#: What the fast path never loads: the model stack and the config parser (a subset of fixtures.processes.HEAVY).
MODEL_STACK = ("pydantic", "asyncio", "litellm", "yaml")


def hook(project: Path, tool: str, tool_input: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(decision, reason, heavy modules loaded) from a real ``guard hook`` process."""
    event = {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "cwd": str(project),
        "tool_name": tool,
        "tool_input": tool_input,
    }
    proc = run_guard(["hook"], project, stdin=json.dumps(event), probe=True)
    assert proc.returncode == 0, proc.stderr
    loaded = [name for name in modules(proc) if name in MODEL_STACK]
    if not proc.stdout.strip():
        return "allow", "", loaded
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    return out["permissionDecision"], out.get("permissionDecisionReason", ""), loaded


pytestmark = pytest.mark.project(config=CONFIG)


@pytest.fixture
def project(project: Path) -> Path:
    hook(
        project, "Read", {"file_path": "README.md"}
    )  # compiles the config snapshot, as the first tool call of a session does
    return project


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tool", "tool_input", "names"),
    [
        ("Write", {"file_path": "guard.yaml", "content": "hooks: {}\n"}, "guard's config"),
        (
            "Edit",
            {"file_path": ".claude/settings.json", "old_string": "guard hook", "new_string": "true"},
            "hook settings",
        ),
        ("Bash", {"command": "echo > guard.yaml"}, "guard's config"),
    ],
)
def test_writes_to_guard_itself_are_denied_without_a_model(
    project: Path, tool: str, tool_input: dict[str, Any], names: str
) -> None:
    decision, reason, loaded = hook(project, tool, tool_input)
    assert decision == "deny" and "guard self-protection" in reason and names in reason and "protect: false" in reason
    assert loaded == []  # decided on the fast path: no pydantic, asyncio, yaml or model client


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Write", {"file_path": "notes.txt", "content": "hello"}),
        ("Bash", {"command": "echo hi > notes.txt && cat guard.yaml"}),
        ("Read", {"file_path": "guard.yaml"}),
    ],
)
def test_ordinary_calls_are_allowed_and_cost_nothing_extra(
    project: Path, tool: str, tool_input: dict[str, Any]
) -> None:
    decision, reason, loaded = hook(project, tool, tool_input)
    assert (decision, reason) == ("allow", "")
    assert "pydantic" not in loaded and "asyncio" not in loaded


def test_protect_false_turns_the_rule_off(project: Path) -> None:
    (project / "guard.yaml").write_text("protect: false\n" + CONFIG)
    trust_config(project / "guard.yaml")
    assert hook(project, "Write", {"file_path": "guard.yaml", "content": ""})[0] == "allow"


def test_a_deny_is_in_the_audit_log_under_the_rule_s_id(project: Path) -> None:
    from guard.audit import open_audit

    hook(project, "Write", {"file_path": "guard.yaml", "content": ""})
    [row] = open_audit(load_config().settings).tail(5)
    text = json.dumps(row, default=str)
    assert HOOK_ID in text and "deny" in text


def _decide(project: Path, tool: str, tool_input: dict[str, Any]) -> str | None:
    spec = load_config().specs[-1]
    assert spec.id == HOOK_ID
    return judge(
        spec, {"hook_event_name": "PreToolUse", "cwd": str(project), "tool_name": tool, "tool_input": tool_input}
    ).decision


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        "rm guard.yaml",
        "rm -rf .claude",
        "mv guard.yaml guard.yaml.bak",
        "sed -i 's/deny/allow/' guard.yaml",
        "cp /tmp/permissive.yaml guard.yaml",
        "cp /tmp/settings.json .claude/",
        "printf 'x' | tee .gemini/settings.json",
        "chmod 000 guard.yaml",
        "sh -c 'echo > .codex/hooks.json'",
        "ln -sf /tmp/empty guard.yaml",
        "rm -rf ~/.cache/guard",
        "echo x >> $HOME/.config/guard/secret",
        "cat ~/.config/guard/secret",
        "python3 -c \"open('guard.yaml', 'w').write('')\"",
        "rm *.yaml",
    ],
)
def test_bash_commands_that_change_guard_are_denied(project: Path, command: str) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{}\n")  # what guard install claude writes
    assert _decide(project, "Bash", {"command": command}) == "deny"


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "cat guard.yaml",
        "grep rule guard.yaml",
        "echo done > /tmp/out.txt",
        "rm -rf build dist",
        "cat guard.yaml > /tmp/backup.yaml",
        "ls .claude",
        "find . -name '*.yaml'",
        "pytest -q .",
    ],
)
def test_ordinary_bash_commands_are_allowed(project: Path, command: str) -> None:
    assert _decide(project, "Bash", {"command": command}) is None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("write_file", {"file_path": "{project}/guard.yaml", "content": ""}),  # Gemini, absolute
        (
            "MultiEdit",
            {"file_path": "x.py", "edits": [{"file_path": "guard.yaml", "old_string": "a", "new_string": "b"}]},
        ),
        (
            "apply_patch",
            {"input": "*** Begin Patch\n*** Update File: .codex/hooks.json\n@@\n-a\n+b\n*** End Patch\n"},
        ),  # Codex
        ("mcp__fs__write_file", {"path": "~/.claude/settings.json", "content": "{}"}),
        ("NotebookEdit", {"notebook_path": "guard.yaml", "new_source": ""}),
        ("Read", {"file_path": "~/.config/guard/secret"}),
    ],
)
def test_other_clients_file_tools_are_covered(project: Path, tool: str, tool_input: dict[str, Any]) -> None:
    tool_input = {k: v.replace("{project}", str(project)) if isinstance(v, str) else v for k, v in tool_input.items()}
    assert _decide(project, tool, tool_input) == "deny"


@pytest.mark.slow
def test_a_symlink_to_the_config_is_followed(project: Path) -> None:
    (project / "innocent.txt").symlink_to(project / "guard.yaml")
    assert _decide(project, "Write", {"file_path": "innocent.txt", "content": ""}) == "deny"


def test_a_configured_cache_inside_the_project_is_protected(project: Path) -> None:
    (project / "guard.yaml").write_text("cache: {url: 'sqlite:///.guard/cache.db'}\n" + CONFIG)
    trust_config(project / "guard.yaml")
    assert _decide(project, "Bash", {"command": "sqlite3 x; rm .guard/cache.db-wal"}) == "deny"
    assert _decide(project, "Write", {"file_path": ".guard/cache.db", "content": ""}) == "deny"


@pytest.mark.slow
def test_the_engine_path_and_guard_check_deny_too(project: Path) -> None:
    """With another hook that must run (a command hook on Write), the engine runs the rule beside it."""
    (project / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - id: log-writes\n      matcher: Write\n      command: 'exit 0'\n"
    )
    trust_config(project / "guard.yaml")
    proc = run_guard(
        ["check", "--tool", "Write", "--input", json.dumps({"file_path": "guard.yaml", "content": ""}), "--json"],
        project,
    )
    body = json.loads(proc.stdout)
    assert body["decision"] == "deny", proc.stderr
    assert {h["id"]: h["decision"] for h in body["hooks"]} == {HOOK_ID: "deny", "log-writes": None}


def test_a_hard_link_to_the_config_is_another_name_for_it(project: Path) -> None:
    os.link(project / "guard.yaml", project / "copy.yaml")
    assert _decide(project, "Edit", {"file_path": "copy.yaml", "old_string": "a", "new_string": "b"}) == "deny"
    assert _decide(project, "Bash", {"command": "echo > copy.yaml"}) == "deny"


def test_patch_text_inside_an_ordinary_file_is_not_a_patch(project: Path) -> None:
    doc = "How apply_patch headers look:\n*** Update File: .codex/hooks.json\n"
    assert _decide(project, "Write", {"file_path": "docs/patches.md", "content": doc}) is None
