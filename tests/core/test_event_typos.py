"""A misspelt event name is a config error that blocks, not a custom event whose hooks never run.

Custom events stay possible, declared on purpose under ``custom_events:``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fixtures.processes import run_guard

EVENT = {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}


def guard(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_guard(list(args), cwd, stdin=stdin)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("PreTooluse", "PreToolUse"),
        ("pretooluse", "pre_tool_use"),
        ("BeforeTools", "BeforeTool"),
        ("user-turn", "user_turn"),
    ],
)
def test_a_near_miss_of_a_known_event_blocks_and_says_what_was_meant(
    written: str, meant: str, write_config: Any
) -> None:
    project = write_config(f"hooks:\n  {written}:\n    - command: 'exit 0'\n").parent

    trust = guard("trust", "--yes", cwd=project)
    hook = guard("hook", cwd=project, stdin=json.dumps({**EVENT, "cwd": str(project)}))
    doctor = guard("doctor", "--model-timeout", "1", cwd=project)

    assert trust.returncode != 0 and f"did you mean {meant}?" in trust.stderr
    out = json.loads(hook.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and f"did you mean {meant}?" in out["permissionDecisionReason"]
    assert (
        doctor.returncode == 1 and f"did you mean {meant}?" in doctor.stdout and "guard is ready" not in doctor.stdout
    )


@pytest.mark.slow
def test_an_undeclared_custom_event_is_refused_and_a_declared_one_loads(write_config: Any) -> None:
    project = write_config("hooks:\n  deploy_started:\n    - command: 'exit 0'\n").parent
    refused = guard("trust", "--yes", cwd=project)
    assert refused.returncode != 0 and "custom_events" in refused.stderr

    write_config("custom_events: [deploy_started]\nhooks:\n  deploy_started:\n    - command: 'exit 0'\n")
    doctor = guard("doctor", "--model-timeout", "1", cwd=project)
    assert "config: 1 hook from" in doctor.stdout, doctor.stdout


def test_declaring_a_known_event_as_custom_is_an_error(write_config: Any) -> None:
    project = write_config("custom_events: [PreToolUse]\nhooks: {}\n").parent
    refused = guard("trust", "--yes", cwd=project)
    assert refused.returncode != 0 and "custom_events[0]" in refused.stderr and "is a known event" in refused.stderr
