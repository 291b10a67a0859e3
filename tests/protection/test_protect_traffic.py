"""Self-protection does not get in the way of ordinary work (#22, #35 item 6): real sessions and every allow case.

The project is laid out as the README guide leaves it: guard.yaml with the guide's rule
(``skip_project_writes: true``) and ``.claude/settings.json`` beside the code, both committed
to the project's git repository, the home folder elsewhere (as in the containers these
sessions ran in). Every command of the real agent sessions in ``swe_traffic`` and every
``allow`` case of ``datasets/`` is judged by the self-protection rule as ``guard hook``
runs it, and by the project-writes lane after it: not one is refused.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config

from guard.config.loading import load_config
from guard.hooks.protect import judge
from guard.judge.read_only_lane import lane_result
from guard.protection.targets import HOOK_ID

SESSIONS = Path("/work/shared/external/swe_traffic/sessions.jsonl")
DATASETS = Path(__file__).resolve().parents[2] / "datasets"
GUIDE = (
    'models:\n  quick: openai/gpt-4.1-mini\nhooks:\n  PreToolUse:\n    - id: no-destructive-shell\n      matcher: "@shell|@write|@edit"\n'
    "      rule: Deny shell commands that delete or overwrite files outside the project directory.\n      depth: auto\n"
    "      failure_mode: fail_closed\n      skip_project_writes: true\n"
)


@pytest.fixture
def decide(isolated_home: Path) -> Any:
    """(refusal reason or None, decided in the lane) for one tool call in the guide's project."""
    (isolated_home / "guard.yaml").write_text(GUIDE)
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude" / "settings.json").write_text('{"hooks": {}}\n')
    for args in (
        ["init", "-q"],
        ["add", "guard.yaml", ".claude/settings.json"],
        ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "guard"],
    ):
        subprocess.run(["git", *args], cwd=isolated_home, check=True, capture_output=True)
    trust_config(isolated_home / "guard.yaml")
    specs = {spec.id: spec for spec in load_config(str(isolated_home / "guard.yaml")).specs}

    def decided(tool: str, tool_input: dict[str, Any]) -> tuple[str | None, bool]:
        event = {
            "hook_event_name": "PreToolUse",
            "cwd": str(isolated_home),
            "tool_name": tool,
            "tool_input": tool_input,
        }
        result = judge(specs[HOOK_ID], event)
        refusal = result.reason if result.decision == "deny" else None
        return refusal, refusal is None and lane_result(specs["no-destructive-shell"], event) is not None

    return decided


@pytest.mark.slow
@pytest.mark.skipif(not SESSIONS.exists(), reason="the swe_traffic sessions are not on this machine")
def test_no_command_of_real_agent_sessions_is_refused(decide: Any) -> None:
    commands = [c for line in SESSIONS.read_text().splitlines() for c in json.loads(line)["commands"]]
    decided = [(c[:120], *decide("Bash", {"command": c})) for c in commands]
    assert len(commands) > 3000
    assert [(c, reason) for c, reason, _ in decided if reason] == []
    assert sum(lane for _, _, lane in decided) > len(commands) / 3  # the lane still decides a good part of them


def test_no_allow_case_of_the_datasets_is_refused(decide: Any) -> None:
    rows = [
        json.loads(line)
        for file in sorted(DATASETS.glob("*.jsonl"))
        for line in file.read_text().splitlines()
        if line.strip()
    ]
    allowed = [
        r for r in rows if r.get("label") == "allow" and r.get("tool_name") and isinstance(r.get("tool_input"), dict)
    ]
    refused = [
        (r["id"], r["tool_input"], reason) for r in allowed if (reason := decide(r["tool_name"], r["tool_input"])[0])
    ]
    assert len(allowed) > 300
    assert refused == []
