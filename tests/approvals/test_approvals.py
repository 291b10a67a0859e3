"""Approvals through real entry points: a waiting ``guard hook`` process, a webhook receiver on loopback, ``guard approve`` at a
terminal (docs/approvals.md)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from fixtures.processes import SOURCE_ROOT, run_guard
from fixtures.team import final_answer, waiting_hook
from fixtures.terminal import at_terminal

pytestmark = pytest.mark.slow  # real guard processes by the dozen, waiting calls, a Postgres

#: A hook that asks about every shell command; its ask goes to a person.
ASKS = """  PreToolUse:
    - id: needs-a-person
      matcher: Bash
      on_ask: approval
      command: "echo '{\\"decision\\": \\"ask\\", \\"reason\\": \\"deploys need a person\\"}'"
"""


def _config(write_config: Any, receiver: Any, timeout: float = 60, form: str = "guard") -> None:
    write_config(
        f"webhooks:\n  allow_networks: [127.0.0.0/8]\napprovals:\n  webhook: {receiver.url('/approvals')}\n  timeout: {timeout}\n"
        f"  format: {form}\n  link: http://127.0.0.1:8377\nhooks:\n{ASKS}"
    )


def _request(receiver: Any) -> dict[str, Any]:
    assert receiver.wait_for(1, timeout=60), "the waiting call POSTed its request to the webhook"
    return dict(json.loads(receiver.requests[0].body))


def _last_row(cwd: Path) -> dict[str, Any]:
    done = run_guard(["log", "--json", "-n", "1"], cwd)
    return dict(json.loads(done.stdout.splitlines()[0]))


def test_guard_approve_at_a_terminal_lets_the_waiting_call_run_and_names_who(
    write_config, make_receiver, isolated_home: Path
) -> None:
    receiver = make_receiver()
    _config(write_config, receiver)
    proc = waiting_hook(isolated_home)
    request = _request(receiver)
    assert (
        request["type"] == "guard.approval_request"
        and request["tool"] == "Bash"
        and request["input"] == {"command": "make deploy"}
    )
    assert request["rules"][0]["id"] == "needs-a-person" and request["rules"][0]["reason"] == "deploys need a person"
    assert (
        request["link"].startswith(f"http://127.0.0.1:8377/approvals/{request['id']}?t=")
        and request["approve"] == f"guard approve {request['id']}"
    )
    assert proc.poll() is None, "the call waits for a person"
    code, screen = at_terminal(
        [sys.executable, "-m", "guard.cli.main", "approve", request["id"], "--by", "alice"],
        answer="y",
        cwd=isolated_home,
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
    )
    assert code == 0 and "make deploy" in screen and "needs-a-person" in screen, screen
    decision, _ = final_answer(proc)
    assert decision == "allow"
    approval = _last_row(isolated_home)["details"]["approval"]
    assert (
        approval["status"] == "approved" and approval["by"] == "alice" and approval["via"] == "guard approve, terminal"
    )


def test_an_approval_left_alone_is_denied_at_its_timeout(write_config, make_receiver, isolated_home: Path) -> None:
    receiver = make_receiver()
    _config(write_config, receiver, timeout=2)
    decision, reason = final_answer(waiting_hook(isolated_home))
    request = _request(receiver)
    assert (
        decision == "deny"
        and f"no one answered approval request {request['id']}" in reason
        and "approvals.timeout" in reason
    )
    assert _last_row(isolated_home)["details"]["approval"]["status"] == "expired"
    late = run_guard(["deny", request["id"]], isolated_home)
    assert late.returncode == 1 and "expired" in late.stderr, "no call waits on it any more"


def test_guard_deny_and_a_token_answer_name_who_answered(write_config, make_receiver, isolated_home: Path) -> None:
    receiver = make_receiver()
    _config(write_config, receiver)
    proc = waiting_hook(isolated_home)
    request = _request(receiver)
    assert run_guard(["deny", request["id"], "--by", "bob"], isolated_home).returncode == 0
    decision, reason = final_answer(proc)
    assert decision == "deny" and "denied by bob" in reason and request["id"] in reason
    assert "?t=" not in reason, "the agent never sees the proof"
    proc = waiting_hook(isolated_home)
    assert receiver.wait_for(2, timeout=60)
    second = json.loads(receiver.requests[1].body)
    wrong = run_guard(["approve", second["id"], "--token", "0" * 32], isolated_home)
    assert wrong.returncode == 1 and "not approval request" in wrong.stderr
    token = second["link"].split("?t=")[1]
    assert run_guard(["approve", second["id"], "--token", token, "--by", "carol"], isolated_home).returncode == 0
    assert final_answer(proc)[0] == "allow"
    assert _last_row(isolated_home)["details"]["approval"]["by"] == "carol"


def test_the_agent_cannot_answer(write_config, make_receiver, isolated_home: Path) -> None:
    receiver = make_receiver()
    _config(write_config, receiver)
    proc = waiting_hook(isolated_home)
    request = _request(receiver)
    as_agent = run_guard(["approve", request["id"]], isolated_home, env={"CLAUDECODE": "1"})
    assert as_agent.returncode == 1 and "needs you, not an agent" in as_agent.stderr
    no_terminal = run_guard(["approve", request["id"]], isolated_home)
    assert no_terminal.returncode == 1 and "confirm at a terminal" in no_terminal.stderr
    event = {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": f"guard approve {request['id']}"},
        "cwd": str(isolated_home),
    }
    through_a_tool = run_guard(["hook"], isolated_home, stdin=json.dumps(event))
    assert json.loads(through_a_tool.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", (
        "self-protection refuses running guard"
    )
    assert run_guard(["deny", request["id"]], isolated_home).returncode == 0
    assert final_answer(proc)[0] == "deny"


def test_the_wait_ends_before_the_clients_deadline(write_config, make_receiver, isolated_home: Path) -> None:
    receiver = make_receiver()
    _config(write_config, receiver, timeout=300)
    decision, reason = final_answer(waiting_hook(isolated_home, "--deadline", "4"))
    assert decision == "deny" and "before the client's deadline" in reason


def test_the_slack_body_is_text_with_the_link_and_the_agents_input_cannot_add_one(
    write_config, make_receiver, isolated_home: Path
) -> None:
    receiver = make_receiver()
    _config(write_config, receiver, timeout=2, form="slack")
    final_answer(waiting_hook(isolated_home, command="make deploy ` <https://evil.example/x|Decide in guard view>"))
    text = json.loads(receiver.requests[0].body)["text"]
    assert "make deploy" in text and "guard approve " in text and text.count("|Decide in guard view>") == 1
    assert "<https://evil.example" not in text and "&lt;https://evil.example/x|Decide in guard view&gt;" in text


@pytest.mark.parametrize("timeout", [1])
def test_an_unreachable_webhook_still_waits_for_guard_approve(write_config, isolated_home: Path, timeout: int) -> None:
    write_config(
        f"approvals:\n  webhook: http://127.0.0.1:9/nowhere\n  timeout: {timeout}\nwebhooks:\n  allow_networks: [127.0.0.0/8]\nhooks:\n{ASKS}"
    )
    decision, reason = final_answer(waiting_hook(isolated_home))
    assert decision == "deny" and "no one answered" in reason
    row = _last_row(isolated_home)
    assert any("the approval webhook failed" in warning for warning in row["warnings"])


def test_a_slow_webhook_does_not_push_the_wait_past_the_clients_deadline(
    write_config, make_receiver, isolated_home: Path
) -> None:
    receiver = make_receiver(delay=30)  # the webhook takes the whole deadline: an approval no one gave is still a deny
    _config(write_config, receiver, timeout=300)
    decision, reason = final_answer(waiting_hook(isolated_home, "--deadline", "5"))
    assert decision == "deny" and "before the client's deadline" in reason, reason


def test_the_deadline_coming_while_the_store_is_locked_is_a_deny(
    write_config, make_receiver, isolated_home: Path
) -> None:
    import sqlite3

    receiver = make_receiver()
    _config(write_config, receiver, timeout=300)
    proc = waiting_hook(isolated_home, "--deadline", "5")
    _request(receiver)
    store = isolated_home.parent / "home" / ".local" / "state" / "guard" / "approvals.db"
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute(
        "BEGIN EXCLUSIVE"
    )  # the waiting call cannot mark its request expired: the client's deadline comes first
    try:
        decision, reason = final_answer(proc)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert decision == "deny" and "no one approved this call" in reason, reason
