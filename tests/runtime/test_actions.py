"""Canonical actions in ``matcher:``: one guard.yaml guards the same effect in every client, through ``guard hook``.

Each client names its tools differently (Claude Code ``Bash``, Copilot ``bash``,
Gemini ``run_shell_command``, Devin ``exec``); a matcher naming a canonical action
(``@shell``, ``@write``, ``@mcp:server``) covers them all, and a matcher that can
match no tool of any client is reported instead of silently never running.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fixtures.processes import SOURCE_ROOT, run_guard

#: A command hook that denies whatever reaches it: what is under test is which calls reach it.
DENY_ALL = 'echo "caught by {id}" >&2; exit 2'


def config(*hooks: tuple[str, str]) -> str:
    lines = ["hooks:", "  PreToolUse:"]
    for hook_id, matcher in hooks:
        lines += [
            f"    - id: {hook_id}",
            f'      matcher: "{matcher}"',
            f"      command: '{DENY_ALL.format(id=hook_id)}'",
        ]
    return "\n".join(lines) + "\n"


def payload(client: str, tool: str, tool_input: dict[str, Any], cwd: Path) -> dict[str, Any]:
    """The PreToolUse event as ``client`` sends it."""
    if client == "copilot":
        return {"timestamp": 1, "cwd": str(cwd), "toolName": tool, "toolArgs": json.dumps(tool_input)}
    event = "BeforeTool" if client == "gemini" else "PreToolUse"
    return {"session_id": "s1", "hook_event_name": event, "cwd": str(cwd), "tool_name": tool, "tool_input": tool_input}


def denied_by(client: str, proc: subprocess.CompletedProcess[str]) -> str | None:
    """The deny reason in ``client``'s own output format, or None when the call is let through."""
    assert proc.returncode == 0, proc.stderr
    if not proc.stdout.strip():
        return None
    out = json.loads(proc.stdout)
    if client in ("claude", "codex"):
        specific = out.get("hookSpecificOutput", {})
        return specific.get("permissionDecisionReason") if specific.get("permissionDecision") == "deny" else None
    if client == "copilot":
        return out.get("permissionDecisionReason") if out.get("permissionDecision") == "deny" else None
    verdict = "block" if client == "devin" else "deny"
    return out.get("reason") if out.get("decision") == verdict else None


def hook(client: str, tool: str, tool_input: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    event = json.dumps(payload(client, tool, tool_input, cwd))
    return run_guard(["hook", "--format", client], cwd, stdin=event)


SHELL = [("claude", "Bash"), ("codex", "Bash"), ("devin", "exec"), ("gemini", "run_shell_command"), ("copilot", "bash")]
WRITES = [
    ("claude", "Write", {"file_path": "a.txt", "content": ""}),
    ("gemini", "write_file", {"file_path": "a.txt", "content": ""}),
    ("copilot", "create", {"path": "a.txt", "file_text": ""}),
    ("devin", "write", {"file_path": "a.txt", "content": ""}),
    ("codex", "apply_patch", {"command": "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch"}),
]
READS = [("claude", "Read"), ("gemini", "read_file"), ("copilot", "view"), ("devin", "read")]


@pytest.mark.slow
@pytest.mark.parametrize(("client", "tool"), SHELL, ids=[c for c, _ in SHELL])
def test_at_shell_reaches_every_clients_shell_tool(client: str, tool: str, write_config: Any) -> None:
    project = write_config(config(("no-shell", "@shell"))).parent
    assert "caught by no-shell" in (denied_by(client, hook(client, tool, {"command": "rm -rf data"}, project)) or "")


@pytest.mark.slow
@pytest.mark.parametrize(("client", "tool", "tool_input"), WRITES, ids=[c for c, _, _ in WRITES])
def test_at_write_reaches_every_clients_file_write(
    client: str, tool: str, tool_input: dict[str, Any], write_config: Any
) -> None:
    project = write_config(config(("no-writes", "@write|@edit"))).parent
    assert "caught by no-writes" in (denied_by(client, hook(client, tool, tool_input, project)) or "")


@pytest.mark.slow
@pytest.mark.parametrize(("client", "tool"), READS, ids=[c for c, _ in READS])
def test_a_read_is_not_caught_by_shell_or_write_actions(client: str, tool: str, write_config: Any) -> None:
    project = write_config(config(("no-shell", "@shell"), ("no-writes", "@write|@edit"))).parent
    assert denied_by(client, hook(client, tool, {"file_path": "README.md"}, project)) is None


@pytest.mark.slow
def test_a_claude_code_tool_name_also_matches_copilots_lower_case_spelling(write_config: Any) -> None:
    project = write_config(config(("no-bash", "Bash"))).parent
    assert "caught by no-bash" in (
        denied_by("copilot", hook("copilot", "bash", {"command": "rm -rf data"}, project)) or ""
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("client", "tool"),
    [("claude", "mcp__github__delete_repo"), ("gemini", "mcp_github_delete_repo"), ("copilot", "github-delete_repo")],
    ids=["claude", "gemini", "copilot"],
)
def test_at_mcp_names_a_server_and_a_tool_in_each_clients_naming(client: str, tool: str, write_config: Any) -> None:
    project = write_config(config(("github-deletes", "@mcp:github:delete_repo"), ("other-server", "@mcp:slack"))).parent
    assert "caught by github-deletes" in (denied_by(client, hook(client, tool, {"name": "guard"}, project)) or "")


#: The reference MCP filesystem server's writing tools (@modelcontextprotocol/server-filesystem), under two server names.
MCP_WRITES = [
    ("claude", "mcp__filesystem__write_file", {"path": "/home/u/.bashrc", "content": ""}),
    (
        "claude",
        "mcp__fs__edit_file",
        {"path": "/etc/hosts", "edits": [{"oldText": "127.0.0.1 localhost", "newText": ""}]},
    ),
    ("codex", "mcp__filesystem__move_file", {"source": "data.db", "destination": "/tmp/data.db"}),
    ("claude", "mcp__filesystem__create_directory", {"path": "/etc/cron.d/x"}),
    ("gemini", "mcp_filesystem_write_file", {"path": "/home/u/.bashrc", "content": ""}),
]


@pytest.mark.slow
@pytest.mark.parametrize(("client", "tool", "tool_input"), MCP_WRITES, ids=[t for _, t, _ in MCP_WRITES])
def test_an_mcp_filesystem_servers_writes_meet_the_rule_about_writes(
    client: str, tool: str, tool_input: dict[str, Any], write_config: Any
) -> None:
    """The README guide's rule named @shell|@write|@edit: an MCP server's write_file outside the project ran no rule at all."""
    project = write_config(config(("no-destructive", "@shell|@write|@edit"))).parent
    assert "caught by no-destructive" in (denied_by(client, hook(client, tool, tool_input, project)) or "")


@pytest.mark.slow
def test_an_mcp_tool_guard_cannot_classify_meets_a_rule_on_mcp_and_a_read_stays_out_of_the_write_rule(
    write_config: Any,
) -> None:
    project = write_config(config(("no-writes", "@write|@edit"), ("every-mcp-tool", "@mcp"))).parent
    reason = denied_by("claude", hook("claude", "mcp__acme__deploy", {"target": "prod"}, project)) or ""
    assert "caught by every-mcp-tool" in reason
    reason = (
        denied_by("claude", hook("claude", "mcp__filesystem__read_text_file", {"path": "README.md"}, project)) or ""
    )
    assert (
        "caught by every-mcp-tool" in reason and "caught by no-writes" not in reason
    )  # judged as an MCP call, not as a write


def test_a_misspelt_action_is_a_config_error_that_blocks_and_says_what_was_meant(write_config: Any) -> None:
    project = write_config(config(("no-shell", "@shel"))).parent
    reason = denied_by("claude", hook("claude", "Bash", {"command": "ls"}, project))
    assert reason is not None and "did you mean @shell?" in reason


@pytest.mark.slow
def test_guard_check_and_doctor_name_a_matcher_no_client_has(write_config: Any) -> None:
    project = write_config(config(("no-shell", "Bsh"))).parent
    check = run_guard(["check", "--tool", "Bash", "--input", '{"command": "ls"}'], project)
    assert (
        "hook no-shell" in check.stderr and "'Bsh' is no known tool of any client; did you mean bash?" in check.stderr
    )
    doctor = run_guard(["doctor", "--model-timeout", "1"], project)
    assert "matcher: hook no-shell" in doctor.stdout and "did you mean bash?" in doctor.stdout, doctor.stdout


def test_the_docs_table_lists_every_clients_tools_as_the_matcher_reads_them() -> None:
    from guard.core.actions import ACTIONS, CLIENT_TOOLS

    text = (Path(SOURCE_ROOT) / "docs" / "actions.md").read_text()
    shown = text.split("<!-- actions-table: generated from guard.core.actions.CLIENT_TOOLS -->\n")[1].split(
        "<!-- /actions-table -->"
    )[0]
    rows = shown.splitlines()[2:]
    clients = ["claude", "codex", "gemini", "copilot", "devin"]
    expected = [
        f"| `{action}` | "
        + " | ".join(
            ", ".join(f"`{name}`" for name, acts in CLIENT_TOOLS[c].items() if action in acts) or "—" for c in clients
        )
        + " |"
        for action in ACTIONS
        if action != "@mcp"
    ]
    assert rows == expected
