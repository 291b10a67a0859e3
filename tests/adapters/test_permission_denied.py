"""Claude Code's ``PermissionDenied`` (auto mode or a permission rule refused a call): audited, and part of the session's history.

The payload is the documented one: the common fields, then ``tool_name``,
``tool_input``, ``tool_use_id`` and the client's ``reason``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fixtures.processes import run_guard
from fixtures.session import SESSION_RULE, bash_event, decision_of, hook, session_of

from guard.setup.install import install
from guard.testing.openai_stub import StubServer

REASON = "Auto mode classifier: the command deletes files outside the task"


def denied(pre: dict[str, Any]) -> dict[str, Any]:
    """The PermissionDenied Claude Code sends after refusing the call ``pre`` asked for."""
    keep = ("session_id", "cwd", "transcript_path", "tool_name", "tool_input", "tool_use_id")
    return {
        **{k: pre[k] for k in keep if k in pre},
        "hook_event_name": "PermissionDenied",
        "permission_mode": "auto",
        "reason": REASON,
    }


@pytest.mark.slow
def test_a_client_denial_is_audited_with_its_reason_and_answers_nothing(session_project: Path) -> None:
    pre = bash_event("s1", "rm -rf ~/old")
    proc = hook(session_project, denied(pre))
    assert proc.returncode == 0 and proc.stdout.strip() == "", proc.stderr  # observing only: no retry asked for
    log = run_guard(["log", "--json"], session_project)
    [row] = [
        json.loads(line)
        for line in log.stdout.splitlines()
        if "PermissionDenied" in line or "permission_denied" in line
    ]
    assert row["decision"] == "deny" and REASON in row["reason"] and row["tool"] == "Bash", row


@pytest.mark.slow
def test_the_denied_call_shows_as_denied_to_the_next_session_aware_judgement(
    session_project: Path, judge_stub: StubServer
) -> None:
    first = bash_event("s2", "ls ~/old")
    assert (
        decision_of(hook(session_project, first)) == "allow"
    )  # guard had no objection; Claude Code's auto mode refused it
    hook(session_project, denied(first))
    hook(session_project, bash_event("s2", "rm -rf ~/old"))
    shown = [
        session_of(body) for body in judge_stub.requests if f"Rule: {SESSION_RULE}" in body["messages"][-1]["content"]
    ]
    assert shown[-1] is not None
    assert shown[-1]["actions"] == [
        {"tool_name": "Bash", "input": "ls ~/old", "decision": "deny"}
    ]  # once, as the client decided


@pytest.mark.slow
def test_without_a_transcript_the_recorded_call_is_updated_not_repeated(
    session_project: Path, judge_stub: StubServer
) -> None:
    first = {k: v for k, v in bash_event("s3", "ls ~/old").items() if k != "transcript_path"}
    hook(session_project, first)
    hook(session_project, denied(first))
    hook(session_project, {k: v for k, v in bash_event("s3", "rm -rf ~/old").items() if k != "transcript_path"})
    shown = [
        session_of(body) for body in judge_stub.requests if f"Rule: {SESSION_RULE}" in body["messages"][-1]["content"]
    ]
    assert shown[-1]["actions"] == [{"tool_name": "Bash", "input": "ls ~/old", "decision": "deny"}]  # type: ignore[index]


def test_guard_install_claude_hooks_permission_denied(tmp_path: Path) -> None:
    install("claude", project_dir=tmp_path, home=tmp_path)
    hooks = json.loads((tmp_path / ".claude/settings.json").read_text())["hooks"]
    assert "PermissionDenied" in hooks


@pytest.mark.slow
def test_guard_view_lists_the_client_denial_with_its_reason(session_project: Path) -> None:
    import urllib.request

    from fixtures.browser import start_view

    hook(session_project, denied(bash_event("s4", "rm -rf ~/old")))
    proc, url = start_view("--config", str(session_project / "guard.yaml"), cwd=session_project)
    try:
        with urllib.request.urlopen(url + "/decisions?decision=deny", timeout=30) as response:
            page = response.read().decode()
    finally:
        proc.kill()
        proc.wait()
    assert "PermissionDenied" in page or "permission_denied" in page
    assert REASON in page and "rm -rf ~/old" in page
