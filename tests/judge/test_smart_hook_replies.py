"""A smart rule in a real ``guard hook`` process against odd input and a misbehaving model endpoint.

Each case once crashed the hook, lost its audit row, held a huge reply in memory
or showed the agent a provider's key: a Copilot ``toolArgs`` string carrying a
lone surrogate, a reply whose ``content`` is a list of parts, a reply far larger
than any verdict (on both transports), and an error text that echoes the key.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.processes import run_guard

from guard.judge.reply_limit import MAX_REPLY_BYTES
from guard.testing.openai_stub import Reply, StubServer

#: A key shaped like a real one; the test process's own provider keys are never used.
KEY = "sk-proj-T3stKeyDoNotLeak0123456789abcdefABCDEF"
SOURCE_ROOT = str(Path(__import__("guard").__file__).resolve().parents[1])
BASH = {
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build"},
    "session_id": "s1",
    "cwd": "/tmp",
}


def rule(failure_mode: str = "fail_open") -> str:
    return (
        "audit: {path: audit.db}\ncache: {url: 'off'}\nhooks:\n  PreToolUse:\n    - id: no-deletes\n"
        f"      rule: Deny shell commands that delete files.\n      depth: quick\n      timeout: 20\n      failure_mode: {failure_mode}\n"
    )


def hook(
    stub: StubServer, cwd: Path, stdin: str, *, fmt: str = "claude", **env: str
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | {
        "PYTHONPATH": SOURCE_ROOT,
        "GUARD_API_BASE": stub.url,
        "GUARD_MODEL_QUICK": "openai/stub-quick",
        "GUARD_MODEL_THOROUGH": "openai/stub-thorough",
        "OPENAI_API_KEY": KEY,
        **env,
    }
    return run_guard(["hook", "--format", fmt], cwd, stdin=stdin, env=environ, inherit_env=False)


def audit_rows(cwd: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(cwd / "audit.db")
    db.row_factory = sqlite3.Row
    return [
        dict(row) for row in db.execute("SELECT decision, reason, hooks, payload, details FROM decisions ORDER BY id")
    ]


def claude_verdict(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


@pytest.mark.slow
def test_a_lone_surrogate_inside_copilots_tool_args_is_judged_and_audited(
    stub: StubServer, isolated_home: Path
) -> None:
    """Copilot sends ``toolArgs`` as a JSON string: its escapes are read after the event's own repair."""
    (isolated_home / "guard.yaml").write_text(rule())
    trust_config(isolated_home / "guard.yaml")
    stub.enqueue(Reply.verdict("deny", "deletes the build folder"))
    args = json.dumps({"command": "rm -rf build \ud800"})  # the escape \ud800 stays inside the string
    proc = hook(
        stub,
        isolated_home,
        json.dumps({"hookEventName": "preToolUse", "toolName": "bash", "toolArgs": args}),
        fmt="copilot",
    )

    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "crashed" not in proc.stderr, proc.stderr
    out = json.loads(proc.stdout)
    assert (
        out["permissionDecision"] == "deny"
        and "(openai/stub-quick): deletes the build folder." in out["permissionDecisionReason"]
    )
    assert stub.calls == 1 and "\ufffd" in str(stub.requests[0]["messages"])
    [row] = audit_rows(isolated_home)
    assert row["decision"] == "deny" and "\ufffd" in row["payload"] and "payload_repaired" in row["details"]


@pytest.mark.slow
def test_a_reply_whose_content_is_a_list_of_parts_is_read_as_its_text(stub: StubServer, isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(rule())
    trust_config(isolated_home / "guard.yaml")
    verdict = json.dumps({"decision": "deny", "reason": "deletes the build folder", "confidence": 0.95})
    parts = [{"type": "text", "text": verdict[:20]}, {"type": "text", "text": verdict[20:]}]
    stub.enqueue(
        Reply(
            body={
                "id": "c1",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": parts}, "finish_reason": "stop"}],
            }
        )
    )

    out = claude_verdict(hook(stub, isolated_home, json.dumps(BASH)))

    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "(openai/stub-quick): deletes the build folder." in out["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.slow
def test_a_reply_of_other_content_is_a_failure_not_a_crash(stub: StubServer, isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(rule("fail_closed"))
    trust_config(isolated_home / "guard.yaml")
    stub.enqueue(
        Reply(
            body={
                "id": "c1",
                "object": "chat.completion",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": {"decision": "allow"}},
                        "finish_reason": "stop",
                    }
                ],
            }
        )
    )

    out = claude_verdict(hook(stub, isolated_home, json.dumps(BASH)))

    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny" and "crashed" not in reason and "content" in reason


@pytest.mark.slow
@pytest.mark.parametrize("route", ["openai", "litellm"])
def test_an_oversized_reply_is_not_read_and_never_believed(stub: StubServer, isolated_home: Path, route: str) -> None:
    """A verdict padded past the cap would allow the call if it were read: it is a failure, named, instead."""
    (isolated_home / "guard.yaml").write_text(rule("fail_closed"))
    trust_config(isolated_home / "guard.yaml")
    padded = {"decision": "allow", "reason": "harmless", "confidence": 0.99, "padding": "x" * (4 * MAX_REPLY_BYTES)}
    stub.default = Reply.json(padded)
    env = {"GUARD_TRANSPORT": "litellm"} if route == "litellm" else {}

    out = claude_verdict(hook(stub, isolated_home, json.dumps(BASH), **env))

    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny", reason
    assert f"over the {MAX_REPLY_BYTES // (1 << 20)} MiB" in reason
    assert stub.calls == 1, "an oversized answer is not asked for again"


@pytest.mark.slow
@pytest.mark.parametrize(
    "echoed",
    [KEY, "sk-ant-api03-Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTAx"],
    ids=["the-key-in-use", "another-providers-key"],
)
def test_a_provider_error_echoing_a_key_never_shows_it(stub: StubServer, isolated_home: Path, echoed: str) -> None:
    (isolated_home / "guard.yaml").write_text(rule("fail_closed"))
    trust_config(isolated_home / "guard.yaml")
    stub.default = Reply.error(
        401, f"Incorrect API key provided: {echoed}. You can find your API key at https://example.test/keys."
    )

    proc = hook(stub, isolated_home, json.dumps(BASH))
    out = claude_verdict(proc)

    reason = out["hookSpecificOutput"]["permissionDecisionReason"]  # what the agent reads
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert echoed not in proc.stdout and echoed not in proc.stderr
    assert "authentication failed" in reason and "guard log" in reason
    [row] = audit_rows(isolated_home)
    assert echoed not in json.dumps(row)
    [judged] = [h for h in json.loads(row["hooks"]) if h["id"] == "no-deletes"]
    assert "Incorrect API key provided: [redacted]" in judged["error"], judged  # the details stay, without the key
