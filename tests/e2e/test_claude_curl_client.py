"""The real Claude Code CLI with ``guard install claude --client curl``: the warm service asked over its Unix socket.

What a user relies on before choosing this client: an allowed call runs and a deny stops it
through the service; with the service down the call is still decided (the full ``guard hook``
runs) and a deny still stops it; a stale socket file, a listener on the socket that hangs
and one answering 200 without guard serve's header are each never read as "proceed". And
the agent's sandboxed Bash can neither read the credential nor plant a socket of its own.

The rule is a command hook (no model): nothing starts a warm service by itself, so each
case has exactly the listener the test put on the socket.
"""

from __future__ import annotations

import json
import shlex
import socket
import socketserver
import subprocess
import threading
from pathlib import Path

import pytest
from fixtures.cache import AnsweringEmpty200
from fixtures.processes import serve_argv, wait_for_socket

from guard.testing.anthropic_stub import final_text, tool_use

from .conftest import AgentProject
from .test_claude_sandbox import hidden

pytestmark = [pytest.mark.claude, pytest.mark.slow]

DENY_SCRIPT = "grep -q 'rm -rf' && { echo 'guard-e2e: deletes a directory' >&2; exit 2; }; exit 0\n"
CONFIG = 'hooks:\n  PreToolUse:\n    - id: no-deletes\n      matcher: Bash\n      command: "sh deny.sh"\n'


def _install(project: AgentProject) -> tuple[Path, Path]:
    """``guard install claude --client curl`` in the project; the socket and credential file its hook program names."""
    (project.dir / "deny.sh").write_text(DENY_SCRIPT)
    project.configure(CONFIG, "--client", "curl", timeout="60")
    assert (
        "curl-client.sh" not in (project.dir / ".claude/settings.json").read_text()
    )  # the shared file names no one's paths
    words = shlex.split(json.loads((project.dir / ".claude/settings.local.json").read_text())["env"]["GUARD_HOOK"])
    assert words[1].endswith("curl-client.sh"), words
    return Path(words[2]), Path(words[3])


def _bash(project: AgentProject, command: str) -> str:
    """Run one Bash call through the agent; what Claude Code told the model, and how the run went."""
    run, agent = project.run(tool_use("Bash", {"command": command, "description": "run"}), final_text("ok"))
    return f"{agent.agent_requests[1].tool_results()} {run.describe()}"


def _delete(project: AgentProject, name: str) -> tuple[Path, str]:
    victim = project.dir / name
    victim.mkdir()
    return victim, _bash(project, f"rm -rf {victim}")


def _serve(project: AgentProject, sock: Path) -> subprocess.Popen[str]:
    serve = subprocess.Popen(
        serve_argv("--port", "0", "--unix-socket", str(sock)),
        cwd=project.dir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_socket(sock, serve, timeout=90)
    return serve


def _denials(sock: Path, credential: Path) -> int:
    """How many calls the service on ``sock`` denied (its /metrics, asked with the installed credential)."""
    done = subprocess.run(
        ["curl", "-sS", "--fail", "--unix-socket", str(sock), "-H", f"@{credential}", "http://guard/metrics"],
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith('guard_decisions_total{decision="deny"}'))
    return int(float(line.split()[-1]))


class _UnixListener:
    """Something of the test's own on the service's socket path: stale (bound, never listening), hanging, or answering 200."""

    def __init__(self, path: Path, behaviour: str) -> None:
        path.unlink(missing_ok=True)
        self.http: socketserver.ThreadingUnixStreamServer | None = None
        self.held: list[socket.socket] = []
        if behaviour == "answers 200":
            self.http = socketserver.ThreadingUnixStreamServer(str(path), AnsweringEmpty200)
            threading.Thread(target=self.http.serve_forever, daemon=True).start()
            return
        self.raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.raw.bind(str(path))
        if behaviour == "hangs":
            self.raw.listen()
            threading.Thread(target=self._hold, daemon=True).start()
        else:
            self.raw.close()  # the file stays: a stale socket nobody listens on

    def _hold(self) -> None:
        """Accept and never answer, until close() shuts the socket (accept then fails, which ends the thread)."""
        try:
            while True:
                self.held.append(self.raw.accept()[0])
        except OSError:
            return

    def close(self) -> None:
        if self.http is not None:
            self.http.shutdown()
            self.http.server_close()
        else:
            self.raw.close()


def test_the_installed_curl_client_decides_through_the_socket_and_never_reads_a_failure_as_proceed(
    claude_project: AgentProject, short_state: Path
) -> None:
    sock, credential = _install(claude_project)
    assert oct(credential.stat().st_mode & 0o777) == "0o600"
    serve = _serve(claude_project, sock)
    try:
        told = _bash(claude_project, "echo allowed-ran")
        assert "allowed-ran" in told, told
        before = _denials(sock, credential)
        victim, told = _delete(claude_project, "victim")
        assert victim.exists(), f"the denied command ran: {told}"
        assert "deletes a directory" in told, told
        assert _denials(sock, credential) == before + 1, "the deny did not come from the service on the socket"
    finally:
        serve.terminate()
        serve.communicate(timeout=30)
    assert not sock.exists(), "guard serve left its socket behind"

    victim, told = _delete(claude_project, "down")  # no socket: the full guard hook decides
    assert victim.exists(), f"with guard serve down the call ran: {told}"
    assert "deletes a directory" in told, told
    assert "allowed-down" in _bash(claude_project, "echo allowed-down")

    for behaviour in ("stale", "hangs", "answers 200"):
        listener = _UnixListener(sock, behaviour)
        try:
            victim, told = _delete(claude_project, behaviour.replace(" ", "-"))
            assert victim.exists(), f"with a socket that {behaviour} the call ran: {told}"
            assert "deletes a directory" in told, f"{behaviour}: {told}"
        finally:
            listener.close()
            sock.unlink(missing_ok=True)


def test_the_agents_sandboxed_bash_cannot_read_the_credential_or_plant_a_socket(
    claude_project: AgentProject, short_state: Path
) -> None:
    sock, credential = _install(claude_project)
    secret = credential.read_text().split()[-1]
    script = (
        f"cat {credential}; echo cred=$?; mkdir -p {sock.parent}; touch {sock.parent}/planted; echo plant=$?; "
        "touch made-in-project; echo project=$?"
    )
    told = _bash(claude_project, hidden(script))
    assert "project=0" in told, told
    assert "cred=1" in told and secret not in told, told
    assert "plant=1" in told and not (sock.parent / "planted").exists(), told
