"""The Claude Agent SDK with ``hooks=guard_hooks()``: guard decides in-process, the real Claude Code CLI obeys.

The end-to-end tests run the SDK's ``query()`` against the real CLI (``.e2e``),
which talks to the scripted Anthropic stub on loopback; what is asserted is
what a user relies on: whether the command ran, and what the model saw next.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query
from e2e.agent_cli import CLAUDE
from fixtures.integration import guard_yaml, write_trusted

from guard.integrations.claude_agent_sdk import guard_hooks
from guard.testing.anthropic_stub import AnthropicStub, final_text, tool_use


async def run_agent(project: Path, hooks: dict[str, Any], *turns: Any) -> tuple[AnthropicStub, ResultMessage | None]:
    """One SDK query through the real Claude Code CLI against the scripted model."""
    binary = CLAUDE.find()
    if binary is None:
        pytest.skip(f"claude CLI not found: {CLAUDE.install_hint}")
    home = project / "agent-home"
    home.mkdir(exist_ok=True)
    result = None
    with AnthropicStub(turns) as agent:
        env = {
            k: v
            for k, v in CLAUDE.env(agent.base_url, home).items()
            if k.startswith(("ANTHROPIC_", "CLAUDE_CODE_", "DISABLE_"))
        }
        options = ClaudeAgentOptions(
            cli_path=str(binary), cwd=str(project), env={**env, "HOME": str(home)}, hooks=hooks, allowed_tools=["Bash"]
        )
        async for message in query(prompt="do the task", options=options):
            if isinstance(message, ResultMessage):
                result = message
    return agent, result


def bash(command: str) -> Any:
    return tool_use("Bash", {"command": command, "description": "run"})


@pytest.mark.claude
@pytest.mark.slow
async def test_a_denied_call_never_runs_and_the_model_sees_why_while_an_allowed_one_runs(
    isolated_home: Path, policy: Any
) -> None:
    write_trusted(isolated_home / "guard.yaml", guard_yaml("Bash"))
    victim, marker, allowed = isolated_home / "victim", isolated_home / "ran", isolated_home / "allowed"
    victim.mkdir()
    hooks = guard_hooks(str(isolated_home / "guard.yaml"))

    agent, result = await run_agent(
        isolated_home,
        hooks,
        bash(f"touch {marker} && rm -rf {victim}"),
        bash(f"touch {allowed} && echo hi"),
        final_text("ok"),
    )

    assert not marker.exists() and victim.is_dir(), "the denied command ran"
    assert allowed.exists(), "the allowed command did not run"
    assert "deleting folders is not allowed in this project" in str(agent.agent_requests[1].tool_results())
    assert result is not None and [d["tool_input"]["command"] for d in result.permission_denials or []] == [
        f"touch {marker} && rm -rf {victim}"
    ]
    rows = sqlite3.connect(isolated_home / "audit.db").execute("select decision from decisions").fetchall()
    assert ("deny",) in rows  # the same audit log as guard hook


@pytest.mark.claude
@pytest.mark.slow
async def test_a_rewrite_runs_the_rewritten_command(isolated_home: Path, policy: Any) -> None:
    write_trusted(isolated_home / "guard.yaml", guard_yaml("Bash"))
    out = isolated_home / "out.txt"

    await run_agent(
        isolated_home,
        guard_hooks(str(isolated_home / "guard.yaml")),
        bash(f"echo REWRITE-ME > {out}"),
        final_text("ok"),
    )

    assert out.read_text().strip() == "rewritten-by-guard"


@pytest.mark.claude
@pytest.mark.slow
async def test_a_smart_rule_is_judged_in_process_by_the_model_inside_the_sdk_session(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from guard.testing.openai_stub import Reply, StubServer

    write_trusted(
        isolated_home / "guard.yaml",
        "models: {quick: openai/stub-quick}\nhooks:\n  PreToolUse:\n    - id: no-delete\n      matcher: Bash\n      depth: quick\n"
        "      failure_mode: fail_closed\n      rule: Deny shell commands that delete files.\n",
    )
    victim, marker = isolated_home / "victim", isolated_home / "ran"
    victim.mkdir()
    with StubServer() as judge:
        judge.default = Reply.verdict("deny", "deletes the victim folder", confidence=0.96)
        monkeypatch.setenv("GUARD_API_BASE", judge.url)
        agent, _ = await run_agent(
            isolated_home,
            guard_hooks(str(isolated_home / "guard.yaml")),
            bash(f"touch {marker} && rm -rf {victim}"),
            final_text("ok"),
        )
        assert judge.calls == 1
    assert not marker.exists() and victim.is_dir()
    assert "deletes the victim folder" in str(agent.agent_requests[1].tool_results())


# -- the callbacks as the SDK calls them: (input, tool_use_id, context) -> hook output ---------------------------


async def call(hooks: dict[str, Any], event: str, payload: dict[str, Any]) -> dict[str, Any]:
    [matcher] = hooks[event]
    [callback] = matcher.hooks
    return await callback(
        {"hook_event_name": event, "session_id": "s1", "cwd": os.getcwd(), **payload}, "toolu_1", {"signal": None}
    )


async def test_ask_and_deny_answer_in_the_sdk_hook_format(isolated_home: Path, policy: Any) -> None:
    write_trusted(isolated_home / "guard.yaml", guard_yaml("Bash"))
    hooks = guard_hooks(str(isolated_home / "guard.yaml"))
    assert "PreToolUse" in hooks and "UserPromptSubmit" not in hooks  # only events guard has hooks for

    asked = await call(hooks, "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "release APPROVE-ME"}})
    denied = await call(hooks, "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}})
    other = await call(hooks, "PreToolUse", {"tool_name": "Read", "tool_input": {"file_path": "x"}})

    told = 'guard asks the user to approve this call: rule shell-policy ("guard_test_policy:shell_policy"), decided by callable hook shell-policy: a person signs off on releases.'
    assert asked["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "ask",
        "permissionDecisionReason": told,
    }
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert other == {}


async def test_a_config_that_does_not_load_denies_every_tool_call(isolated_home: Path) -> None:
    write_trusted(
        isolated_home / "guard.yaml", "hooks:\n  PreToolUse:\n    - matcher: Bash\n      rule: [not, a, rule]\n"
    )
    hooks = guard_hooks(str(isolated_home / "guard.yaml"))

    out = await call(hooks, "PreToolUse", {"tool_name": "Read", "tool_input": {"file_path": "x"}})

    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "guard.yaml" in out["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.parametrize("mode", ["fail_open", "fail_closed"])
async def test_a_failing_hook_follows_its_failure_mode_and_an_unjudged_allow_is_shown(
    isolated_home: Path, policy: Any, mode: str
) -> None:
    write_trusted(isolated_home / "guard.yaml", guard_yaml("Bash", failure_mode=mode, callable_name="broken"))

    out = await call(
        guard_hooks(str(isolated_home / "guard.yaml")),
        "PreToolUse",
        {"tool_name": "Bash", "tool_input": {"command": "ls"}},
    )

    if mode == "fail_closed":
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert "the policy service is down" in out["hookSpecificOutput"]["permissionDecisionReason"]
    else:
        assert "hookSpecificOutput" not in out
        assert "the policy service is down" in out["systemMessage"]  # the SDK shows it to the user


@pytest.mark.claude
@pytest.mark.slow
async def test_a_guard_callback_that_fails_blocks_the_call(
    isolated_home: Path, policy: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """guard's hooks carry on_failure="block": a callback that raises (a bug, an interpreter shutting down) never lets the call run."""
    from guard.runtime.gate import Gate

    write_trusted(isolated_home / "guard.yaml", guard_yaml("Bash"))
    hooks = guard_hooks(str(isolated_home / "guard.yaml"))

    async def fails(self: Gate, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("guard's callback failed")

    monkeypatch.setattr(Gate, "adecide", fails)
    marker = isolated_home / "ran"
    agent, _ = await run_agent(isolated_home, hooks, bash(f"touch {marker}"), final_text("ok"))
    assert not marker.exists(), "the call ran although guard's callback failed"
