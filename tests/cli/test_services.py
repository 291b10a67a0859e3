"""``guard services``: see and stop the warm services hooks leave in the background (five were found idling, 55-224 MB each)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.processes import run_guard

from guard.server.autostart import write_state
from guard.testing.openai_stub import Reply, StubServer


def guard(args: list[str], cwd: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return run_guard(args, cwd, stdin=stdin, env=env)


pytestmark = [pytest.mark.slow, pytest.mark.stub(default=Reply.verdict("allow", "fine"))]


def serve_folder() -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "guard" / "serve"


def start_service(project: Path, stub: StubServer) -> dict:
    """A session starts in ``project``: guard hook launches its warm service, as it does for Claude Code."""
    project.mkdir(exist_ok=True)
    (project / "guard.yaml").write_text(
        f"models:\n  quick: openai/stub\n  api_base: {stub.url}\nhooks:\n  PreToolUse:\n    - id: r\n      rule: Deny deleting files.\n      depth: quick\n"
    )
    trust_config(project / "guard.yaml")
    event = {"hook_event_name": "SessionStart", "session_id": "s1", "cwd": str(project), "source": "startup"}
    done = guard(["hook", "--format", "claude"], project, stdin=json.dumps(event))
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 90
    folder = serve_folder()
    while time.monotonic() < deadline:
        for path in folder.glob("*.json"):
            state = json.loads(path.read_text() or "{}")
            if state.get("url") and str(project / "guard.yaml") in Path(
                f"/proc/{state['pid']}/cmdline"
            ).read_bytes().decode(errors="replace"):
                return state
        time.sleep(0.2)
    raise AssertionError("the session's start launched no service")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text()
    return not stat.split(") ", 1)[1].startswith("Z")


def test_services_lists_the_warm_services_and_stops_one(isolated_home: Path, stub: StubServer) -> None:
    first = start_service(isolated_home.parent / "one", stub)
    second = start_service(isolated_home.parent / "two", stub)
    listed = guard(["services"], isolated_home)
    assert listed.returncode == 0, listed.stderr
    for state, project in ((first, "one"), (second, "two")):
        [row] = [line for line in listed.stdout.splitlines() if line.lstrip().startswith(str(state["pid"]))]
        assert state["url"] in row and str(isolated_home.parent / project / "guard.yaml") in row and " MB" in row, (
            listed.stdout
        )

    stopped = guard(["services", "--stop", str(first["pid"])], isolated_home)
    assert stopped.returncode == 0 and f"stopped guard serve {first['pid']}" in stopped.stdout, (
        stopped.stdout + stopped.stderr
    )
    assert not alive(first["pid"]) and alive(second["pid"])
    assert str(first["pid"]) not in guard(["services"], isolated_home).stdout

    everything = guard(["services", "--stop-all"], isolated_home)
    assert everything.returncode == 0 and f"stopped guard serve {second['pid']}" in everything.stdout
    assert not alive(second["pid"])
    assert guard(["services"], isolated_home).stdout.strip() == "no background guard serve is running"


def test_an_unknown_pid_is_an_error_not_a_signal(isolated_home: Path) -> None:
    done = guard(["services", "--stop", "999999"], isolated_home)
    assert done.returncode == 1 and "no background guard serve has pid 999999" in done.stderr


@pytest.mark.parametrize("sealed", [True, False], ids=["sealed-but-another-program", "forged"])
def test_a_state_file_naming_another_process_never_gets_it_stopped(sealed: bool, isolated_home: Path) -> None:
    """The agent can run guard and knows its state folder: a record naming any pid must not make --stop-all a kill switch."""
    victim = subprocess.Popen(["sleep", "120"])
    try:
        folder = serve_folder()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "0123456789abcdef.json"
        if sealed:  # a record guard itself wrote, whose pid was reused by another program
            write_state(path, "http://127.0.0.1:9", victim.pid)
        else:
            path.write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": victim.pid, "mac": "0" * 64}))
        assert str(victim.pid) not in guard(["services"], isolated_home).stdout
        guard(["services", "--stop-all"], isolated_home)
        time.sleep(0.2)
        assert victim.poll() is None, "guard services signalled a process that is not its service"
    finally:
        victim.kill()
        victim.wait()
