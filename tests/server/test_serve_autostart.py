"""``server.url: auto``: guard hook starts a warm guard serve once and sends later misses to it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.cache import service_auth
from fixtures.importers import trapped_env
from fixtures.judge import bash_event
from fixtures.processes import SOURCE_ROOT, run_guard, serve_argv

from guard.testing.openai_stub import Reply, StubServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.stub(default=Reply.verdict("deny", "deletes outside the project", confidence=0.9)),
]


def guard(args: list[str], cwd: Path, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """A guard process of the tree under test (wherever guard is installed)."""
    return run_guard(args, cwd, stdin=stdin, env=env)


def wait_for_state(folder: Path, *, timeout: float = 90.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in folder.glob("*.json"):
            state = json.loads(path.read_text() or "{}")
            if state.get("url"):
                return state
        time.sleep(0.2)
    raise AssertionError(f"no service wrote its URL into {folder}: {[p.read_text() for p in folder.glob('*')]}")


def wait_until_answering(url: str, *, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(urllib.request.Request(url + "/healthz", headers=service_auth()), timeout=2)
            return
        except OSError:
            time.sleep(0.2)


def requests_served(url: str) -> int:
    text = (
        urllib.request.urlopen(urllib.request.Request(url + "/metrics", headers=service_auth()), timeout=5)
        .read()
        .decode()
    )
    return sum(
        int(float(line.rsplit(" ", 1)[1]))
        for line in text.splitlines()
        if line.startswith("guard_http_requests_total{") and 'route="/v1/hooks"' in line
    )


def test_first_miss_starts_a_service_and_later_misses_use_it(stub: StubServer, isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(
        "models: {quick: openai/stub-quick}\nserver: {url: auto}\ncache: {url: 'off'}\n"
        "hooks:\n  PreToolUse:\n    - id: no-delete\n      matcher: Bash\n      depth: quick\n      timeout: 60\n"
        "      rule: Deny shell commands that delete files outside the project.\n"
    )
    trust_config(isolated_home / "guard.yaml")
    env = {"GUARD_API_BASE": stub.url}
    states = isolated_home.parent / "home/.cache/guard/serve"
    first = guard(["hook"], isolated_home, env, json.dumps(bash_event("rm -rf ~/a")))
    assert json.loads(first.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", first.stderr
    state = wait_for_state(states)
    try:
        wait_until_answering(state["url"])  # then a second miss must be judged by the service, not in-process
        before = requests_served(state["url"])
        second = guard(["hook"], isolated_home, env, json.dumps(bash_event("rm -rf ~/b")))
        assert json.loads(second.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", second.stderr
        assert requests_served(state["url"]) == before + 1
        assert stub.calls == 2  # one judgement in-process, one by the service
        third = guard(["hook"], isolated_home, env, json.dumps(bash_event("rm -rf ~/c")))
        assert third.returncode == 0 and len(list(states.glob("*.json"))) == 1  # no second service
    finally:
        os.kill(state["pid"], signal.SIGTERM)


def test_without_the_serve_extra_a_miss_launches_no_service_and_the_decision_says_why(
    stub: StubServer, isolated_home: Path
) -> None:
    """A bare ``pip install plainguard`` with the guide's ``server: {url: auto}``: every miss launched a guard serve
    that only printed the serve extra's install line into its log."""
    (isolated_home / "guard.yaml").write_text(
        "models: {quick: openai/stub-quick}\nserver: {url: auto}\ncache: {url: 'off'}\n"
        "hooks:\n  PreToolUse:\n    - id: no-delete\n      matcher: Bash\n      depth: quick\n      timeout: 60\n"
        "      rule: Deny shell commands that delete files outside the project.\n"
    )
    trust_config(isolated_home / "guard.yaml")
    trapped = trapped_env(isolated_home, refuse=["starlette", "uvicorn"])
    env = {**trapped, "PYTHONPATH": os.pathsep.join([trapped["PYTHONPATH"], SOURCE_ROOT]), "GUARD_API_BASE": stub.url}
    start = {"hook_event_name": "SessionStart", "session_id": "s1", "source": "startup", "cwd": str(isolated_home)}
    assert guard(["hook"], isolated_home, env, json.dumps(start)).returncode == 0  # where a session launches it
    for command in ("rm -rf ~/a", "rm -rf ~/b"):
        done = guard(["hook"], isolated_home, env, json.dumps(bash_event(command)))
        assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", done.stderr
    states = isolated_home.parent / "home/.cache/guard/serve"
    assert not list(states.glob("*")), [p.read_text() for p in states.glob("*.log")]
    logged = json.loads(guard(["log", "--json", "-n", "1"], isolated_home, {}).stdout.splitlines()[0])
    assert "needs the serve extra" in logged["details"]["server_fallback"], logged["details"]


def test_an_auto_started_service_leaves_when_idle(isolated_home: Path) -> None:
    state_file = isolated_home / "serve.json"
    proc = subprocess.Popen(
        serve_argv("--port", "0", "--state-file", str(state_file), "--idle-timeout", "3"),
        cwd=isolated_home,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
    )
    try:
        deadline = time.monotonic() + 30
        while not state_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        state = json.loads(state_file.read_text())
        assert state["pid"] == proc.pid and state["url"].startswith("http://127.0.0.1:")
        assert proc.wait(timeout=60) == 0  # exits by itself after three seconds without requests
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not state_file.exists()  # and tidies up its state file
