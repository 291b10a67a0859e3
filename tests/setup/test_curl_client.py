"""``guard install claude --client curl``: what it writes, what it refuses, what doctor says, and how its script reads answers.

The script is run as Claude Code runs it (``/bin/sh``, the event on stdin) against a real
``guard serve`` on a Unix socket and against listeners that are not guard serve: only an
answer carrying guard serve's exit-code header is read; anything else runs the fallback
with the same event, and a fallback that cannot run blocks (exit 2).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.git import git
from fixtures.processes import SOURCE_ROOT, serve_argv, wait_for_socket
from fixtures.terminal import at_terminal
from test_install_sandbox import CONFIG, guard

from guard.setup.curl_client import SCRIPT

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
EVENT = json.dumps(
    {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "cwd": "/tmp",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
)


def _client(sock: Path, credential: Path, *fallback: str, stdin: str = EVENT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/sh", str(SCRIPT), str(sock), str(credential), "3", *fallback],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_without_a_service_the_fallback_gets_the_same_event_and_one_that_cannot_run_blocks(tmp_path: Path) -> None:
    credential = tmp_path / "cred"
    credential.write_text("Authorization: Bearer x\n")
    echoed = _client(tmp_path / "none.sock", credential, "cat", stdin=EVENT + "\n\n")
    assert echoed.returncode == 0 and echoed.stdout == EVENT + "\n\n"  # byte for byte, trailing newlines kept
    missing = _client(tmp_path / "none.sock", credential, str(tmp_path / "no-such-guard"), "hook")
    assert missing.returncode == 2 and "the call is blocked" in missing.stderr
    for crash in ("cat >/dev/null; exit 1", "cat >/dev/null; kill -9 $$"):  # a traceback's status, a kill at a timeout
        crashed = _client(tmp_path / "none.sock", credential, "sh", "-c", crash)
        assert crashed.returncode == 2 and "the call is blocked" in crashed.stderr, (
            crash
        )  # Claude Code proceeds on any other status


def test_a_stale_socket_or_a_listener_without_guards_header_runs_the_fallback(tmp_path: Path) -> None:
    credential = tmp_path / "cred"
    credential.write_text("Authorization: Bearer x\n")
    stale = tmp_path / "stale.sock"
    with socket.socket(socket.AF_UNIX) as bound:
        bound.bind(str(stale))  # closed without listening: the file stays, nobody answers
    assert _client(stale, credential, "sh", "-c", "cat >/dev/null; echo fallback; exit 2").stdout == "fallback\n"
    other = tmp_path / "other.sock"
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import socket, sys\ns = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen()\n"
                "while True:\n    c = s.accept()[0]; c.recv(65536); c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\n{}'); c.close()"
            ),
            str(other),
        ]
    )
    try:
        while not other.exists():
            time.sleep(0.02)
        done = _client(other, credential, "sh", "-c", "cat >/dev/null; echo fallback; exit 2")
        assert (done.returncode, done.stdout) == (2, "fallback\n")
    finally:
        server.kill()
        server.wait()


def _personal(project: Path) -> list[str]:
    """This user's hook program, which the shared settings' launcher runs (``GUARD_HOOK`` in the local settings)."""
    return shlex.split(json.loads((project / ".claude/settings.local.json").read_text())["env"]["GUARD_HOOK"])


def _program(project: Path) -> str:
    """The hook program ``guard install claude`` set up for this user: the curl client's script or guard hook."""
    words = _personal(project)
    return "curl" if words[1:2] == [str(SCRIPT)] else "guard" if "hook" in words else f"unknown: {words}"


@pytest.mark.slow
@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap and socat are what Claude Code's sandbox needs on Linux"
)
@pytest.mark.usefixtures("sandbox_tools")  # a plain guard install claude configures Claude Code's sandbox
def test_a_plain_install_picks_the_curl_client_where_it_can_run_and_says_why_not_elsewhere(
    tmp_path: Path, short_state: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "guard.yaml").write_text(CONFIG)
    done = guard(project, "install", "claude")
    assert done.returncode == 0 and _program(project) == "curl" and "hook program: the curl client" in done.stdout, done
    done = guard(project, "install", "claude", "--client", "guard")
    assert _program(project) == "guard" and "hook program" not in done.stdout, done  # asked for: no note
    home = Path(os.environ["HOME"])  # the suite's own, for this test
    done = guard(project, "install", "claude", "--scope", "user")  # a user hook runs in every project
    assert (
        done.returncode == 0 and "curl client is not installed: --client curl is for --scope project" in done.stdout
    ), done
    assert "curl-client.sh" not in (home / ".claude/settings.json").read_text()
    refused = guard(project, "install", "claude", "--scope", "user", "--client", "curl")
    assert refused.returncode == 1 and "--client curl is for --scope project" in refused.stderr, refused
    done = guard(project, "install", "claude", "--no-sandbox")
    assert (
        _program(project) == "guard" and "curl client is not installed: --client curl needs the sandbox" in done.stdout
    ), done
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("sh", "cat", "bwrap", "socat"):  # the sandbox's tools, and no curl
        (bare / tool).symlink_to(shutil.which(tool) or f"/bin/{tool}")
    done = guard(project, "install", "claude", PATH=str(bare))
    assert done.returncode == 0 and _program(project) == "guard" and "needs curl on PATH" in done.stdout, done


@pytest.mark.slow
@pytest.mark.usefixtures("sandbox_tools")  # a plain guard install claude configures Claude Code's sandbox
def test_install_writes_the_client_doctor_reports_it_and_guard_serve_answers_it_on_the_socket(
    tmp_path: Path, short_state: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "guard.yaml").write_text(CONFIG)
    assert (
        guard(project, "install", "claude", "--client", "curl", "--no-sandbox").returncode == 1
    )  # the protection needs the sandbox
    done = guard(project, "install", "claude", "--client", "curl")
    assert done.returncode == 0, done.stderr
    trust_config(project / "guard.yaml")  # the user's guard trust: install had no terminal to show it on
    words = _personal(project)
    sock, credential = Path(words[2]), Path(words[3])
    assert words[1] == str(SCRIPT) and "curl-client.sh" not in (project / ".claude/settings.json").read_text()
    assert credential.stat().st_mode & 0o777 == 0o600 and credential.read_text().startswith("Authorization: Bearer ")
    report = guard(project, "doctor").stdout
    assert f"curl over {sock}; no service there now" in report, report
    assert "--deadline" not in report, report  # curl's share and the fallback's deadline add up to the client's timeout

    serve = subprocess.Popen(
        serve_argv("--port", "0", "--unix-socket", str(sock)),
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(Path(SCRIPT).parents[3])},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_socket(sock, serve)
        assert sock.stat().st_mode & 0o777 == 0o600
        answered = _client(sock, credential, "sh", "-c", "cat >/dev/null; echo fallback; exit 2")
        assert answered.returncode == 0 and "fallback" not in answered.stdout, answered
        forged = tmp_path / "forged.header"
        forged.write_text(
            "Authorization: Bearer not-the-credential\n"
        )  # answered 200 with the failure policy, marked refused
        refused = _client(sock, forged, "sh", "-c", "cat >/dev/null; echo fallback; exit 2")
        assert (refused.returncode, refused.stdout) == (2, "fallback\n"), refused
        assert "(a service listens)" in guard(project, "doctor").stdout
        local = project / ".claude/settings.local.json"
        settings = json.loads(local.read_text())
        settings["sandbox"]["filesystem"]["denyRead"] = []
        local.write_text(json.dumps(settings))
        assert f"do not deny the agent reads of {credential}" in guard(project, "doctor").stdout
    finally:
        serve.terminate()
        serve.wait(timeout=30)
    assert not sock.exists(), "guard serve left its socket behind"


def _serve_on(sock: Path, project: Path) -> subprocess.Popen[str]:
    serve = subprocess.Popen(
        serve_argv("--port", "0", "--unix-socket", str(sock)),
        cwd=project,
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_socket(sock, serve)
    return serve


@pytest.mark.slow
@pytest.mark.usefixtures("sandbox_tools")  # a plain guard install claude configures Claude Code's sandbox
def test_a_service_whose_trusted_config_changed_stops_answering_and_leaves(tmp_path: Path, short_state: Path) -> None:
    """An edit of guard.yaml, or a new ``guard trust``, changes what a fresh guard hook enforces: the warm service must not answer with the old one."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "guard.yaml").write_text(CONFIG)
    assert guard(project, "install", "claude").returncode == 0
    trust_config(project / "guard.yaml")
    words = _personal(project)
    sock, credential = Path(words[2]), Path(words[3])
    fallback = ("sh", "-c", "cat >/dev/null; echo fallback; exit 2")
    edits = {
        "an edit of guard.yaml, not trusted yet": lambda: (project / "guard.yaml").write_text(
            CONFIG + '  Stop:\n    - id: more\n      command: "true"\n'
        ),
        "guard trust of that edit": lambda: at_terminal(
            [sys.executable, "-m", "guard.cli.main", "trust", "--yes"],
            answer=None,
            cwd=project,
            env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
        ),
    }
    for what, edit in edits.items():
        serve = _serve_on(sock, project)
        try:
            answered = _client(sock, credential, *fallback)
            assert answered.returncode == 0 and "fallback" not in answered.stdout, (
                what,
                answered,
            )  # the service answered
            edit()
            after = _client(sock, credential, *fallback)
            assert (after.returncode, after.stdout) == (2, "fallback\n"), (
                what,
                after,
            )  # refused at once: guard hook decides
            assert serve.wait(timeout=30) is not None, (
                what
            )  # and it leaves, so the next session start loads the new config
            assert "changed since the trusted config was loaded" in serve.communicate()[1], what
            assert not sock.exists(), what
        finally:
            if serve.poll() is None:
                serve.kill()
                serve.wait()


@pytest.mark.slow
@pytest.mark.usefixtures("sandbox_tools")  # a plain guard install claude configures Claude Code's sandbox
def test_a_worktrees_hook_sent_to_the_main_checkouts_service_is_decided_by_the_worktrees_config(
    tmp_path: Path, short_state: Path
) -> None:
    """Claude Code (2.1.332) gives a git worktree the main checkout's ``.claude/settings.local.json``, so the worktree's
    launcher runs the main checkout's curl client, whose socket is the main checkout's service. The worktree's branch
    has a stricter rule, which the user trusted there: it decides, not the service of the main checkout's config."""
    main = tmp_path / "main"
    main.mkdir()
    (main / "guard.yaml").write_text(CONFIG)  # every Bash call allowed
    git(main, "init", "-q")
    assert guard(main, "install", "claude", "--client", "curl").returncode == 0
    trust_config(main / "guard.yaml")
    git(main, "add", "-A")
    git(main, "commit", "-qm", "guard")
    worktree = tmp_path / "feature"
    git(main, "worktree", "add", "-q", str(worktree))
    (worktree / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      command: \"echo 'no pushes from this branch' >&2; exit 2\"\n"
    )
    trust_config(worktree / "guard.yaml")
    words = _personal(main)  # what Claude Code hands the worktree's hooks as GUARD_HOOK
    sock, credential = Path(words[2]), Path(words[3])
    fallback = ("sh", "-c", "cat >/dev/null; echo fallback; exit 2", "guard")
    launcher = json.loads((worktree / ".claude/settings.json").read_text())["hooks"]["PreToolUse"][0]["hooks"][0]
    push = json.dumps({**json.loads(EVENT), "tool_input": {"command": "git push"}})

    serve = _serve_on(sock, main)
    try:
        own = _client(sock, credential, *fallback, "--format", "claude", "--project", str(main))
        assert own.returncode == 0 and "fallback" not in own.stdout, own  # the service answers for its own project
        other = _client(sock, credential, *fallback, "--format", "claude", "--project", str(worktree))
        assert (other.returncode, other.stdout) == (2, "fallback\n"), other  # and leaves another's to guard hook
        for spaced in (f"{main} ", f"{main}\t", f" {main}"):  # HTTP trims a header's ends: another folder's name
            trimmed = _client(sock, credential, *fallback, "--format", "claude", "--project", spaced)
            assert (trimmed.returncode, trimmed.stdout) == (2, "fallback\n"), (spaced, trimmed)
        ran = subprocess.run(
            ["/bin/sh", "-c", launcher["command"]],
            input=push,
            capture_output=True,
            text=True,
            cwd=worktree,
            env={
                **os.environ,
                "PYTHONPATH": SOURCE_ROOT,
                "GUARD_HOOK": shlex.join(words),
                "CLAUDE_PROJECT_DIR": str(worktree),
            },
            timeout=60,
        )
        assert serve.poll() is None, "the main checkout's service is still up: it was asked, and declined"
    finally:
        serve.terminate()
        serve.wait(timeout=30)
    decided = json.loads(ran.stdout)["hookSpecificOutput"]
    assert (
        decided["permissionDecision"] == "deny" and "no pushes from this branch" in decided["permissionDecisionReason"]
    ), ran
