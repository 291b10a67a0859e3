"""``guard hook --defer``: only a fail_closed hook's failure to judge becomes Claude Code's ``defer``; a rule's deny stays a deny."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.processes import run_guard
from test_cli_hook import POLICY, PRE

BROKEN = "\ndef broken(event):\n    raise RuntimeError('the policy service is down')\n"


pytestmark = pytest.mark.project(
    files={"policy.py": POLICY + BROKEN},
    config="hooks:\n  PreToolUse:\n    - id: no-force-push\n      matcher: Bash\n      callable: policy:no_force_push\n"
    "    - id: lookup\n      matcher: Bash\n      callable: policy:broken\n      failure_mode: fail_closed\n",
)


def decision(project: Path, command: str, *flags: str) -> str:
    proc = run_guard(
        ["hook", "--format", "claude", *flags], project, stdin=json.dumps({**PRE, "tool_input": {"command": command}})
    )
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"])


@pytest.mark.slow
def test_a_hook_that_could_not_judge_defers(project: Path) -> None:
    assert decision(project, "git status", "--defer") == "defer"
    assert decision(project, "git status") == "deny"  # without --defer: fail_closed's deny


def test_a_rules_deny_is_never_deferred(project: Path) -> None:
    assert decision(project, "git push --force origin main", "--defer") == "deny"
