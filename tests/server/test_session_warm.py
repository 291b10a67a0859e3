"""A session's start warms the service: the SessionStart entry ``guard install`` writes starts ``guard serve``
in the background and returns at once, and the session's judged calls then go to it."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.judge import bash_event
from fixtures.processes import guard_modules, run_guard
from test_serve_autostart import guard, requests_served, wait_for_state, wait_until_answering

from guard.setup.install import guard_program
from guard.testing.openai_stub import Reply, StubServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.stub(default=Reply.verdict("deny", "deletes outside the project", confidence=0.9)),
]

SMART = (
    "models: {quick: openai/stub-quick}\ncache: {url: 'off'}\n"
    "hooks:\n  PreToolUse:\n    - id: no-delete\n      matcher: Bash\n      depth: quick\n      timeout: 60\n"
    "      rule: Deny shell commands that delete files outside the project.\n"
)
SESSION_START = {
    "session_id": "s1",
    "transcript_path": "/tmp/t.jsonl",
    "cwd": "/home/u/proj",
    "hook_event_name": "SessionStart",
    "source": "startup",
}


def installed_session_start_command(project: Path) -> list[str]:
    """What the SessionStart entry ``guard install claude`` wrote runs here, as guard CLI arguments.

    The shared entry runs this user's ``GUARD_HOOK`` (the local settings) with ``--format claude --project <project>``.
    """
    out = guard(["install", "claude", "--no-sandbox"], project, {})  # the sandbox is not what this is about
    assert out.returncode == 0, out.stderr
    [group] = json.loads((project / ".claude/settings.json").read_text())["hooks"]["SessionStart"]
    assert "$GUARD_HOOK" in group["hooks"][0]["command"]
    command = shlex.split(json.loads((project / ".claude/settings.local.json").read_text())["env"]["GUARD_HOOK"])
    hook = command.index("hook")
    assert command[:hook] == guard_program()  # this interpreter, isolated: python -I -m guard.cli.main
    return [*command[hook:], "--format", "claude", "--project", str(project)]


def test_session_start_warms_the_service_and_later_misses_use_it(stub: StubServer, isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(SMART)
    trust_config(isolated_home / "guard.yaml")
    env = {"GUARD_API_BASE": stub.url}
    states = isolated_home.parent / "home/.cache/guard/serve"
    command = installed_session_start_command(isolated_home)
    started = time.monotonic()
    warm = guard(command, isolated_home, env, json.dumps(SESSION_START))
    assert warm.returncode == 0 and time.monotonic() - started < 10, (
        warm.stderr
    )  # returns without waiting for the service
    state = wait_for_state(states)
    try:
        wait_until_answering(state["url"])
        miss = guard(["hook", "--format", "claude"], isolated_home, env, json.dumps(bash_event("rm -rf ~/a")))
        assert json.loads(miss.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", miss.stderr
        assert requests_served(state["url"]) == 1 and stub.calls == 1  # judged by the warm service
    finally:
        os.kill(state["pid"], signal.SIGTERM)


def test_with_the_service_warm_a_miss_goes_to_it_and_the_repeat_is_a_local_hit_that_never_loads_the_server(
    stub: StubServer, isolated_home: Path
) -> None:
    """The gate makes the service's decider only for an event its fast path cannot answer: the session's warm service
    still judges the miss, and the same call again is answered from the decision cache it filled, in the hook process,
    without asking the service or importing guard.server."""
    (isolated_home / "guard.yaml").write_text(SMART.replace("cache: {url: 'off'}\n", ""))
    trust_config(isolated_home / "guard.yaml")
    env = {"GUARD_API_BASE": stub.url}
    warm = guard(installed_session_start_command(isolated_home), isolated_home, env, json.dumps(SESSION_START))
    assert warm.returncode == 0, warm.stderr
    state = wait_for_state(isolated_home.parent / "home/.cache/guard/serve")
    try:
        wait_until_answering(state["url"])
        calls = [
            run_guard(
                ["hook"],
                isolated_home,
                stdin=json.dumps(bash_event("rm -rf ~/a", session_id=session)),
                env=env,
                probe=True,
            )
            for session in ("s1", "s2")
        ]
        for call in calls:
            assert json.loads(call.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", call.stderr
        miss, hit = calls
        assert "guard.server.decider" in guard_modules(miss)  # the miss went past the fast path, to the service
        assert requests_served(state["url"]) == 1 and stub.calls == 1  # judged once, by the warm service
        assert not [m for m in guard_modules(hit) if m.startswith("guard.server")], guard_modules(hit)
    finally:
        os.kill(state["pid"], signal.SIGTERM)


def test_a_miss_right_after_session_start_waits_for_the_starting_service(stub: StubServer, isolated_home: Path) -> None:
    """The session's first judged call comes before the service is up: it is judged by the service, not a cold process."""
    (isolated_home / "guard.yaml").write_text(SMART)
    trust_config(isolated_home / "guard.yaml")
    env = {"GUARD_API_BASE": stub.url}
    states = isolated_home.parent / "home/.cache/guard/serve"
    command = installed_session_start_command(isolated_home)
    warm = guard(command, isolated_home, env, json.dumps(SESSION_START))
    assert warm.returncode == 0, warm.stderr
    [state_file] = states.glob("*.json")
    assert json.loads(state_file.read_text())["url"] is None  # still starting when the first tool call comes
    try:
        miss = guard(["hook", "--format", "claude"], isolated_home, env, json.dumps(bash_event("rm -rf ~/a")))
        assert json.loads(miss.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", miss.stderr
        state = wait_for_state(states)
        assert requests_served(state["url"]) == 1 and stub.calls == 1  # judged once, by the warm service
    finally:
        os.kill(json.loads(state_file.read_text())["pid"], signal.SIGTERM)


def test_a_service_that_never_comes_up_is_waited_for_only_while_the_call_can_still_be_judged(
    stub: StubServer, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A "starting" service that hangs: the hook stops waiting in time to judge the call itself (never an unjudged allow)."""
    from guard.config.pinning import load_trusted
    from guard.server.autostart import state_path, write_state

    (isolated_home / "guard.yaml").write_text(SMART.replace("timeout: 60", "timeout: 5"))
    trust_config(isolated_home / "guard.yaml")
    monkeypatch.setenv("GUARD_API_BASE", stub.url)
    hung = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        path = state_path(
            load_trusted().loaded
        )  # the state file guard hook reads for this trusted config and interpreter
        path.parent.mkdir(parents=True)
        write_state(path, None, hung.pid)  # "starting", by a live process that will never listen
        started = time.monotonic()
        miss = guard(
            ["hook", "--format", "claude", "--deadline", "14"], isolated_home, {}, json.dumps(bash_event("rm -rf ~/a"))
        )
        took = time.monotonic() - started
    finally:
        hung.kill()
        hung.wait()
    assert json.loads(miss.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", miss.stderr
    assert (
        stub.calls == 1 and 2 < took < 14
    )  # waited for the service, then judged in-process before the client's deadline


def test_a_service_stuck_starting_for_long_is_not_waited_for(
    stub: StubServer, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from guard.config.pinning import load_trusted
    from guard.server.autostart import STARTUP_WAIT, state_path, write_state

    (isolated_home / "guard.yaml").write_text(SMART)
    trust_config(isolated_home / "guard.yaml")
    monkeypatch.setenv("GUARD_API_BASE", stub.url)
    hung = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        path = state_path(load_trusted().loaded)
        path.parent.mkdir(parents=True)
        write_state(path, None, hung.pid)
        launched = time.time() - STARTUP_WAIT - 5
        os.utime(path, (launched, launched))  # "starting" since well before the longest start-up guard waits for
        started = time.monotonic()
        miss = guard(["hook", "--format", "claude"], isolated_home, {}, json.dumps(bash_event("rm -rf ~/a")))
        took = time.monotonic() - started
    finally:
        hung.kill()
        hung.wait()
    assert json.loads(miss.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", miss.stderr
    assert stub.calls == 1 and took < STARTUP_WAIT  # judged in-process without waiting out the stuck start


def test_session_start_without_smart_hooks_starts_nothing(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - id: lint\n      matcher: Bash\n      command: 'true'\n"
    )
    trust_config(isolated_home / "guard.yaml")
    out = guard(["hook", "--format", "claude"], isolated_home, {}, json.dumps(SESSION_START))
    assert out.returncode == 0, out.stderr
    time.sleep(0.5)
    assert not list((isolated_home.parent / "home/.cache/guard/serve").glob("*.json"))
