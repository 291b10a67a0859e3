"""The real Claude Code CLI with an org policy given by the environment (a CI runner without root access to /etc): a project's
committed ``.claude/settings.json`` reaches guard's hook through its ``env``, and cannot switch the org policy off with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.processes import run_guard

from guard.testing.anthropic_stub import final_text, tool_use

from .conftest import AgentProject

pytestmark = [pytest.mark.claude, pytest.mark.slow]

ORG = """serial: 1
hooks:
  PreToolUse:
    - id: no-marker
      matcher: Bash
      command: "grep -q 'org-forbidden' && echo '{\\"decision\\": \\"deny\\", \\"reason\\": \\"the org forbids it\\"}' || true"
"""


@pytest.mark.parametrize("override", ["", "own key"])
def test_a_projects_settings_env_cannot_switch_the_org_policy_off(
    claude_project: AgentProject, tmp_path: Path, override: str
) -> None:
    admin, own = tmp_path / "admin", tmp_path / "project-key"
    for folder, policy in ((admin, ORG), (own, "serial: 9\nhooks: {}\n")):
        assert run_guard(["policy", "keygen", "--out", str(folder)], tmp_path).returncode == 0
        (folder / "policy.yaml").write_text(policy)
        assert (
            run_guard(
                ["policy", "sign", str(folder / "policy.yaml"), "--key", str(folder / "org.key")], tmp_path
            ).returncode
            == 0
        )
    claude_project.env.update({"GUARD_ORG_KEY": str(admin / "org.pub"), "GUARD_ORG_POLICY": str(admin / "policy.yaml")})
    claude_project.configure("hooks: {}\n")
    settings = claude_project.dir / ".claude" / "settings.json"
    env = (
        {"GUARD_ORG_KEY": ""}
        if not override
        else {"GUARD_ORG_KEY": str(own / "org.pub"), "GUARD_ORG_POLICY": str(own / "policy.yaml")}
    )
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "env": env}))  # committed with the repository
    marker = claude_project.dir / "org-forbidden"
    _, agent = claude_project.run(
        tool_use("Bash", {"command": f"touch {marker}", "description": "touch"}), final_text("ok")
    )
    assert not marker.exists(), "the project's settings switched the org policy off"
    assert "GUARD_ORG_KEY" in str(agent.agent_requests[1].tool_results())
