"""Codex's ``PermissionRequest`` through a real ``guard hook --format codex``: the answers Codex's hook schema accepts.

The payload is Codex's (its PermissionRequest hook input): ``tool_name: "Bash"`` with
the command and, when Codex has one, the request's justification as ``description``.
Codex reads ``hookSpecificOutput.decision`` with only ``behavior``, ``message``,
``interrupt``, ``updatedInput`` and ``updatedPermissions`` allowed, and fails closed when
``updatedInput`` is present.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.processes import POLICY, run_guard

REQUEST = {
    "session_id": "c1",
    "turn_id": "t1",
    "hook_event_name": "PermissionRequest",
    "cwd": "/tmp",
    "model": "gpt-5",
    "permission_mode": "default",
    "tool_name": "Bash",
    "tool_input": {"command": "git push --force origin main", "description": "push the fix"},
}
DECISION_FIELDS = {"behavior", "message", "interrupt", "updatedInput", "updatedPermissions"}


pytestmark = pytest.mark.project(
    files={"policy.py": POLICY},
    config="hooks:\n  PermissionRequest:\n    - id: no-force-push\n      matcher: Bash\n"
    "      callable: policy:no_force_push\n    - id: dry-run\n      matcher: Bash\n      callable: policy:dry_run\n",
)


def test_a_denied_approval_is_a_deny_behavior_with_the_reason(project: Path) -> None:
    proc = run_guard(["hook", "--format", "codex"], project, stdin=json.dumps(REQUEST))
    assert proc.returncode == 0, proc.stderr
    specific = json.loads(proc.stdout)["hookSpecificOutput"]
    assert specific["hookEventName"] == "PermissionRequest" and set(specific["decision"]) <= DECISION_FIELDS
    assert specific["decision"]["behavior"] == "deny" and "force-push" in specific["decision"]["message"]


@pytest.mark.slow
def test_a_rewrite_gives_no_verdict_since_codex_fails_closed_on_updated_input(project: Path) -> None:
    payload = {**REQUEST, "tool_input": {"command": "git push origin main"}}
    proc = run_guard(["hook", "--format", "codex"], project, stdin=json.dumps(payload))
    out = json.loads(proc.stdout) if proc.stdout.strip() else {}
    assert "decision" not in out.get("hookSpecificOutput", {})  # Codex's own approval prompt decides
    claude = run_guard(["hook", "--format", "claude"], project, stdin=json.dumps(payload))
    assert (
        "updatedInput" in json.loads(claude.stdout)["hookSpecificOutput"]["decision"]
    )  # Claude Code does take the rewrite
