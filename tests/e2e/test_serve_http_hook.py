"""The real Claude Code CLI using a token-protected ``guard serve`` as its ``type: "http"`` hook.

What a user relies on: Claude Code's own HTTP hook client gets past guard's
bearer-token and content-type checks (it sends ``application/json`` and the
token from ``allowedEnvVars``), and a deny from the service stops the call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.cache import free_port, wait_for_port

from guard.testing.anthropic_stub import final_text, tool_use

from .conftest import JUDGE_MODEL, AgentProject, judge_says, smart_rule

pytestmark = [pytest.mark.claude, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
TOKEN = "e2e-serve-token"


def test_claude_codes_http_hook_reaches_a_token_protected_guard_serve(claude_project: AgentProject) -> None:
    (claude_project.dir / "guard.yaml").write_text(
        smart_rule(
            "PreToolUse", "Deny shell commands that delete files or directories.", matcher="Bash", hook_id="no-deletes"
        )
    )
    trust_config(claude_project.dir / "guard.yaml")
    claude_project.judge.responder = judge_says("rm -rf", "deletes a directory")
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "GUARD_SERVE_TOKEN": TOKEN,
        "GUARD_API_BASE": claude_project.judge.url,
        "GUARD_MODEL_QUICK": JUDGE_MODEL,
        "OPENAI_API_KEY": "sk-test",
    }
    serve = subprocess.Popen(
        [sys.executable, "-m", "guard.cli.main", "serve", "--port", str(port), "--log-level", "warning"],
        cwd=claude_project.dir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_port(port, timeout=90)
        handler = {
            "type": "http",
            "url": f"http://127.0.0.1:{port}/v1/hooks/claude",
            "timeout": 120,
            "headers": {"Authorization": "Bearer $GUARD_SERVE_TOKEN"},
            "allowedEnvVars": ["GUARD_SERVE_TOKEN"],
        }
        (claude_project.dir / ".claude").mkdir()
        (claude_project.dir / ".claude/settings.json").write_text(
            json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}})
        )
        claude_project.env["GUARD_SERVE_TOKEN"] = TOKEN
        victim = claude_project.dir / "victim"
        victim.mkdir()

        run, agent = claude_project.run(
            tool_use("Bash", {"command": f"rm -rf {victim}", "description": "delete"}), final_text("ok")
        )

        assert victim.exists(), "the denied command ran"
        assert run.result is not None and run.result["permission_denials"], run.describe()
        assert "deletes a directory" in str(agent.agent_requests[1].tool_results())
        with urllib.request.urlopen(
            urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}),
            timeout=10,
        ) as r:
            metrics = r.read().decode()
        assert 'route="/v1/hooks/{format}",status="200"' in metrics, metrics
        assert 'status="401"' not in metrics and 'status="415"' not in metrics

        # without allowedEnvVars Claude Code sends no token: the service refuses the request, and since the
        # rule is fail_closed the refusal is a deny in Claude's shape (a non-2xx would have let the call run)
        del handler["allowedEnvVars"]
        (claude_project.dir / ".claude/settings.json").write_text(
            json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}})
        )
        second = claude_project.dir / "second"
        second.mkdir()
        run, agent = claude_project.run(
            tool_use("Bash", {"command": f"rm -rf {second}", "description": "delete"}), final_text("ok")
        )
        assert second.exists(), f"a request the service refused let the call run: {run.describe()}"
        assert "refused the request (401)" in str(agent.agent_requests[1].tool_results())
    finally:
        serve.kill()
        serve.communicate(timeout=10)
