"""The real Claude Code CLI with bench/curl_hook_client.sh as its command hook: ``guard serve`` asked without an interpreter.

bench_cache_hook.py measures this route (a cache hit with no Python start-up). What a user
would rely on before adopting it: a deny from the service stops the call, and a service that
is down, that never answers, or something else answering on its port blocks the call too:
none of them reads as "proceed" to Claude Code.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.cache import AnsweringEmpty200, free_port, wait_for_port

from guard.testing.anthropic_stub import final_text, tool_use

from .conftest import JUDGE_MODEL, AgentProject, judge_says, smart_rule

pytestmark = [pytest.mark.claude, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "bench" / "curl_hook_client.sh"
TOKEN = "e2e-curl-token"


def _use_client(project: AgentProject, url: str) -> None:
    handler = {"type": "command", "command": f"sh {CLIENT} {url}", "timeout": 120}
    (project.dir / ".claude").mkdir(exist_ok=True)
    (project.dir / ".claude/settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}})
    )


def _delete(project: AgentProject, name: str) -> tuple[Path, str]:
    """Ask the agent to delete a new folder ``name``; the folder, and what Claude Code told the model."""
    victim = project.dir / name
    victim.mkdir()
    run, agent = project.run(
        tool_use("Bash", {"command": f"rm -rf {victim}", "description": "delete"}), final_text("ok")
    )
    return victim, f"{agent.agent_requests[1].tool_results()} {run.describe()}"


def _silent_listener() -> tuple[socket.socket, int]:
    """A port that accepts connections and never answers: a service that hangs."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.extend(iter(lambda: server.accept()[0], None)), daemon=True).start()
    return server, int(server.getsockname()[1])


def _answering_200() -> ThreadingHTTPServer:
    """Some other program on the port, answering every POST with 200 and an empty JSON object (not guard serve)."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), AnsweringEmpty200)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_curl_command_hook_blocks_unless_guard_serve_answers(claude_project: AgentProject) -> None:
    (claude_project.dir / "guard.yaml").write_text(
        smart_rule(
            "PreToolUse", "Deny shell commands that delete files or directories.", matcher="Bash", hook_id="no-deletes"
        )
    )
    trust_config(claude_project.dir / "guard.yaml")
    claude_project.judge.responder = judge_says("rm -rf", "deletes a directory")
    claude_project.env.update({"GUARD_SERVE_TOKEN": TOKEN, "GUARD_CURL_MAX_TIME": "3"})
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
        _use_client(claude_project, f"http://127.0.0.1:{port}")
        victim, told = _delete(claude_project, "victim")
        assert victim.exists(), "the denied command ran"
        assert "deletes a directory" in told, told
    finally:
        serve.kill()
        serve.communicate(timeout=10)

    _use_client(claude_project, f"http://127.0.0.1:{port}")  # the service is down now
    victim, told = _delete(claude_project, "down")
    assert victim.exists(), f"with guard serve down the call ran: {told}"
    assert "did not answer; the call is blocked" in told, told

    hanging, hanging_port = _silent_listener()
    try:
        _use_client(claude_project, f"http://127.0.0.1:{hanging_port}")
        victim, told = _delete(claude_project, "hung")
        assert victim.exists(), f"with a service that never answers the call ran: {told}"
        assert "did not answer; the call is blocked" in told, told
    finally:
        hanging.close()

    foreign = _answering_200()
    try:
        _use_client(claude_project, f"http://127.0.0.1:{foreign.server_port}")
        victim, told = _delete(claude_project, "foreign")
        assert victim.exists(), f"with another server answering 200 on guard's port the call ran: {told}"
        assert "no answer from guard serve" in told, told
    finally:
        foreign.shutdown()
        foreign.server_close()
