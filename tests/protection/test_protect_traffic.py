"""Self-protection does not get in the way of ordinary work (#22 "Done when"): real sessions and every allow case.

The project is set up as a guarded one (guard.yaml, .claude/settings.json beside the
code), and every command of the real agent sessions in ``swe_traffic`` and every
``allow`` case of ``datasets/`` is judged by the rule as ``guard hook`` runs it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config

from guard.config import load_config
from guard.hooks.protect import judge, protect_spec

SESSIONS = Path("/work/shared/external/swe_traffic/sessions.jsonl")
DATASETS = Path(__file__).resolve().parents[2] / "datasets"


@pytest.fixture
def refusals(isolated_home: Path) -> Any:
    (isolated_home / "guard.yaml").write_text("hooks: {}\n")
    (isolated_home / ".claude").mkdir()
    (isolated_home / ".claude" / "settings.json").write_text("{}\n")
    trust_config(isolated_home / "guard.yaml")
    spec = protect_spec(load_config(str(isolated_home / "guard.yaml")))

    def refused(tool: str, tool_input: dict[str, Any]) -> str | None:
        event = {"hook_event_name": "PreToolUse", "cwd": str(isolated_home), "tool_name": tool, "tool_input": tool_input}
        result = judge(spec, event)
        return result.reason if result.decision == "deny" else None

    return refused


@pytest.mark.slow
@pytest.mark.skipif(not SESSIONS.exists(), reason="the swe_traffic sessions are not on this machine")
def test_no_command_of_real_agent_sessions_is_refused(refusals: Any) -> None:
    commands = [c for line in SESSIONS.read_text().splitlines() for c in json.loads(line)["commands"]]
    refused = [(c[:120], reason) for c in commands if (reason := refusals("Bash", {"command": c}))]
    assert len(commands) > 3000
    assert refused == []


def test_allow_cases_of_the_datasets_are_not_refused(refusals: Any) -> None:
    """Only a call that really would remove guard's config is refused: ``git clean -fdx`` deletes an untracked guard.yaml."""
    rows = [json.loads(line) for file in sorted(DATASETS.glob("*.jsonl")) for line in file.read_text().splitlines() if line.strip()]
    allowed = [r for r in rows if r.get("label") == "allow" and r.get("tool_name") and isinstance(r.get("tool_input"), dict)]
    refused = [(r["id"], r["tool_input"]) for r in allowed if refusals(r["tool_name"], r["tool_input"])]
    assert len(allowed) > 300
    assert [tool_input for _, tool_input in refused if not str(tool_input.get("command", "")).startswith("git clean")] == []
