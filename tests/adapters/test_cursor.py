"""Cursor as a client: payloads written out from Cursor's hooks documentation, through a real ``guard hook --format cursor``.

No Cursor CLI can be installed from the registries this project uses, so these
payloads are the documented ones (https://cursor.com/docs/agent/hooks): common
fields ``conversation_id``, ``generation_id``, ``workspace_roots``,
``hook_event_name``, then each event's own. The answers asserted are the ones
the same documentation says block: ``permission: "deny"`` on the permission
events, ``continue: false`` on ``beforeSubmitPrompt``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fixtures.processes import run_guard

POLICY = """
import guard

def no_deletes(event):
    if "rm -rf" in str(event.tool_input.get("command", "")):
        return guard.deny("deleting folders is not allowed in this project")

def no_env_files(event):
    if str(event.tool_input.get("file_path", "")).endswith(".env"):
        return guard.deny("secrets stay out of the model's context")

def no_drop(event):
    if "DROP TABLE" in str(event.tool_input.get("query", "")):
        return guard.deny("no schema changes through MCP")

def ask_pushes(event):
    if "git push" in str(event.tool_input.get("command", "")):
        return guard.ask("pushing needs a person")

def quiet_installs(event):
    command = event.tool_input.get("command", "")
    if command.startswith("npm install") and "--silent" not in command:
        return guard.rewrite({**event.tool_input, "command": command + " --silent"})

def no_secrets_in_prompts(event):
    if "BEGIN PRIVATE KEY" in event.prompt:
        return guard.deny("the prompt holds a private key")
"""

CONFIG = """hooks:
  PreToolUse:
    - id: no-deletes
      matcher: Shell
      callable: policy:no_deletes
      failure_mode: fail_closed
    - id: no-env-files
      matcher: Read
      callable: policy:no_env_files
    - id: no-drop
      matcher: "MCP:*"
      callable: policy:no_drop
      failure_mode: fail_closed
    - id: ask-pushes
      matcher: "Shell|Read"
      callable: policy:ask_pushes
    - id: quiet-installs
      matcher: Shell
      callable: policy:quiet_installs
  UserPromptSubmit:
    - id: no-secrets-in-prompts
      callable: policy:no_secrets_in_prompts
"""


def documented(event: str, **fields: Any) -> dict[str, Any]:
    """A payload as Cursor's hooks documentation lays it out: its common fields, then the event's."""
    return {
        "conversation_id": "conv-123",
        "generation_id": "gen-456",
        "model": "claude-4-sonnet",
        "hook_event_name": event,
        "cursor_version": "2.1.46",
        "workspace_roots": ["/path/to/project"],
        "user_email": "user@example.com",
        **fields,
    }


pytestmark = pytest.mark.project(files={"policy.py": POLICY}, config=CONFIG)


def cursor_hook(project: Path, payload: dict[str, Any] | str) -> tuple[int, dict[str, Any], str]:
    """``guard hook --format cursor`` as Cursor runs it: (exit code, parsed stdout, stderr). Every answer must be JSON."""
    proc = run_guard(
        ["hook", "--format", "cursor"], project, stdin=payload if isinstance(payload, str) else json.dumps(payload)
    )
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else {}, proc.stderr


def test_a_documented_before_shell_execution_payload_is_denied_the_way_cursor_blocks(project: Path) -> None:
    code, out, _ = cursor_hook(
        project, documented("beforeShellExecution", command="rm -rf build", cwd="/path/to/project")
    )
    assert code == 0 and out["permission"] == "deny"
    # the agent is told why, and so is the user (Cursor shows user_message in its UI)
    assert "deleting folders is not allowed in this project" in out["agent_message"]
    assert "deleting folders is not allowed in this project" in out["user_message"]


def test_a_documented_pre_tool_use_shell_payload_is_denied_by_the_same_rule(project: Path) -> None:
    payload = documented(
        "preToolUse",
        tool_name="Shell",
        tool_input={"command": "rm -rf build"},
        tool_use_id="tool_1",
        cwd="/path/to/project",
    )
    code, out, _ = cursor_hook(project, payload)
    assert code == 0 and out["permission"] == "deny"
    assert "deleting folders is not allowed in this project" in out["agent_message"]


def test_an_allowed_command_answers_valid_json_without_granting_permission(project: Path) -> None:
    # "permission": "allow" would skip Cursor's own approval; {} is "no objection", and valid JSON for failClosed
    proc = run_guard(
        ["hook", "--format", "cursor"],
        project,
        stdin=json.dumps(documented("beforeShellExecution", command="ls", cwd="")),
    )
    assert proc.returncode == 0 and json.loads(proc.stdout) == {}


def test_ask_reaches_cursor_as_ask(project: Path) -> None:
    _, out, _ = cursor_hook(project, documented("beforeShellExecution", command="git push origin main", cwd="/p"))
    assert out["permission"] == "ask" and "pushing needs a person" in out["user_message"]


def test_before_read_file_is_denied_with_permission_alone(project: Path) -> None:
    payload = documented("beforeReadFile", file_path="/path/to/project/.env", content="API_KEY=...", attachments=[])
    _, out, _ = cursor_hook(project, payload)
    assert out == {"permission": "deny"}  # beforeReadFile reads no messages


def test_before_mcp_execution_judges_the_decoded_tool_input(project: Path) -> None:
    payload = documented(
        "beforeMCPExecution",
        tool_name="database_query",
        tool_input='{"query": "DROP TABLE users"}',
        url="http://localhost:3000",
    )
    _, out, _ = cursor_hook(project, payload)
    assert out["permission"] == "deny" and "no schema changes through MCP" in out["agent_message"]


def test_unreadable_mcp_input_under_a_fail_closed_rule_is_denied(project: Path) -> None:
    _, out, _ = cursor_hook(
        project, documented("beforeMCPExecution", tool_name="database_query", tool_input="{not json")
    )
    assert out["permission"] == "deny" and "no-drop" in out["agent_message"]


def test_a_rewrite_on_pre_tool_use_is_the_whole_updated_input(project: Path) -> None:
    payload = documented("preToolUse", tool_name="Shell", tool_input={"command": "npm install express", "timeout": 30})
    _, out, _ = cursor_hook(project, payload)
    assert out == {"permission": "allow", "updated_input": {"command": "npm install express --silent", "timeout": 30}}


@pytest.mark.slow
def test_before_submit_prompt_is_blocked_with_continue_false(project: Path) -> None:
    payload = documented("beforeSubmitPrompt", prompt="here: -----BEGIN PRIVATE KEY-----", attachments=[])
    _, out, _ = cursor_hook(project, payload)
    assert out["continue"] is False and "the prompt holds a private key" in out["user_message"]
    _, out, _ = cursor_hook(project, documented("beforeSubmitPrompt", prompt="fix the bug", attachments=[]))
    assert out == {"continue": True}


def test_writing_cursor_hooks_json_is_denied_by_self_protection(project: Path) -> None:
    payload = documented(
        "beforeShellExecution",
        command=f"echo '{{}}' > {project}/.cursor/hooks.json",
        cwd=str(project),
        workspace_roots=[str(project)],
    )
    _, out, _ = cursor_hook(project, payload)
    assert out["permission"] == "deny" and "self-protection" in out["agent_message"]


@pytest.mark.slow
def test_the_audit_row_names_cursor_and_the_rule(project: Path) -> None:
    cursor_hook(project, documented("beforeShellExecution", command="rm -rf build", cwd="/path/to/project"))
    proc = run_guard(["log", "--json"], project)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert any(row.get("client") == "cursor" and "no-deletes" in json.dumps(row) for row in rows), (
        proc.stdout + proc.stderr
    )
