"""``guard serve`` as a real process: the stdlib client, fallback when it is down, graceful shutdown."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.cache import free_port, service_auth, start_serve

from guard.server.client import send_event

HOOKS_MODULE = """
import time

def judge(event):
    command = (event.tool_input or {}).get("command", "")
    if command.startswith("sleep "):
        time.sleep(float(command.split()[1]))
        return {"decision": "deny", "reason": "slept " + command.split()[1]}
    return {"decision": "deny", "reason": "no rm"} if command.startswith("rm") else "allow"
"""

CONFIG = """
audit:
  path: audit.db
hooks:
  PreToolUse:
    - id: slow-judge
      matcher: Bash|bash
      callable: servehooks:judge
      timeout: 30
"""


class ServeProcess:
    def __init__(self, proc: subprocess.Popen[str], url: str, workdir: Path) -> None:
        self.proc, self.url, self.workdir = proc, url, workdir

    def get(self, path: str) -> str:
        with urllib.request.urlopen(urllib.request.Request(self.url + path, headers=service_auth()), timeout=5) as r:
            return str(r.read().decode())


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServeProcess]:
    (tmp_path / "servehooks.py").write_text(HOOKS_MODULE)
    (tmp_path / "guard.yaml").write_text(CONFIG)
    trust_config(tmp_path / "guard.yaml")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])),
    }  # keep the tree under test
    proc, url = start_serve(tmp_path / "guard.yaml", tmp_path, env)
    try:
        yield ServeProcess(proc, url, tmp_path)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def test_send_event_returns_the_services_decision(serve: ServeProcess) -> None:
    reply = send_event(
        serve.url,
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}},
        timeout=10,
    )
    assert reply is not None and reply["decision"] == "deny" and reply["hooks"][0]["id"] == "slow-judge"
    copilot = {"hookEventName": "preToolUse", "toolName": "bash", "toolArgs": json.dumps({"command": "ls"})}
    assert (send_event(serve.url, copilot, fmt="copilot", timeout=10) or {}).get("decision") == "allow"
    assert json.loads(serve.get("/healthz"))["hooks"] == 2  # the config's hook and the built-in self-protection rule


def test_the_service_writes_the_audit_log(serve: ServeProcess) -> None:
    send_event(
        serve.url, {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm x"}}, timeout=10
    )
    from guard.audit import AuditLog

    deadline = time.monotonic() + 10
    while not (rows := AuditLog(serve.workdir / "audit.db").tail()) and time.monotonic() < deadline:
        time.sleep(0.05)  # a thread writes the log, just after the answer
    [row] = rows
    assert row["decision"] == "deny" and row["tool"] == "Bash"


def test_send_event_is_none_when_the_service_is_down_or_says_no() -> None:
    started = time.monotonic()
    assert send_event(f"http://127.0.0.1:{free_port()}", {"hook_event_name": "Stop"}, timeout=5) is None
    assert send_event("http://256.0.0.1:1", {"hook_event_name": "Stop"}, timeout=1) is None
    assert time.monotonic() - started < 3


def test_send_event_is_none_for_an_answer_that_is_not_a_decision(serve: ServeProcess) -> None:
    assert send_event(serve.url, {"tool_name": "Bash"}, timeout=5) is None  # 400 from the service
    assert send_event(serve.url + "/healthz#", {"hook_event_name": "Stop"}, timeout=5) is None  # 404


def _post_in_thread(url: str, payload: dict[str, Any], out: dict[str, Any]) -> threading.Thread:
    def post() -> None:
        request = urllib.request.Request(
            url + "/v1/hooks",
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json", **service_auth()},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as r:
                out["status"], out["body"] = r.status, json.loads(r.read())
        except Exception as exc:  # noqa: BLE001 - reported by the assertion
            out["error"] = repr(exc)

    thread = threading.Thread(target=post)
    thread.start()
    return thread


@pytest.mark.slow
def test_sigterm_lets_an_in_flight_request_finish(serve: ServeProcess) -> None:
    out: dict[str, Any] = {}
    thread = _post_in_thread(
        serve.url, {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "sleep 1.5"}}, out
    )
    deadline = time.monotonic() + 10
    while "guard_http_requests_in_flight 2" not in serve.get("/metrics"):  # the slow request + this one
        assert time.monotonic() < deadline, "the slow request never started"
        time.sleep(0.05)
    serve.proc.send_signal(signal.SIGTERM)
    thread.join(timeout=30)
    assert out.get("status") == 200, out
    assert out["body"]["decision"] == "deny" and out["body"]["reason"] == "slept 1.5"
    assert serve.proc.wait(timeout=15) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once drained
    with pytest.raises(urllib.error.URLError) as stopped:  # and it stopped listening
        serve.get("/healthz")
    assert not isinstance(stopped.value, urllib.error.HTTPError), "refused the connection, not the request"


def test_the_client_guard_hook_uses_loads_no_http_library_or_server() -> None:
    code = (
        "import sys, guard.server.client\n"
        "heavy = {'starlette', 'uvicorn', 'httpx', 'litellm', 'redis', 'pydantic'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_every_decision_is_in_the_audit_log_after_sigterm_even_while_the_log_was_locked(serve: ServeProcess) -> None:
    """Rows queue while another process holds the log's write lock, then land in batches; a clean stop loses none."""
    import sqlite3

    from guard.audit import AuditLog

    send_event(
        serve.url, {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}, timeout=10
    )
    deadline = time.monotonic() + 10
    while not AuditLog(serve.workdir / "audit.db").tail() and time.monotonic() < deadline:
        time.sleep(0.05)
    holder = sqlite3.connect(serve.workdir / "audit.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # `guard log label` or a guard hook beside the service, mid-write
    started = time.monotonic()
    replies = [
        send_event(
            serve.url,
            {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": f"rm f{i}"}},
            timeout=10,
        )
        for i in range(40)
    ]
    answered_in = time.monotonic() - started
    holder.execute("COMMIT")
    holder.close()
    assert all(r is not None and r["decision"] == "deny" for r in replies)
    assert answered_in < 5, "decisions waited for the locked audit log"
    serve.proc.send_signal(signal.SIGTERM)
    serve.proc.wait(timeout=30)
    commands = [row["payload"]["tool_input"]["command"] for row in AuditLog(serve.workdir / "audit.db").tail(100)]
    assert commands == ["ls", *[f"rm f{i}" for i in range(40)]]


def test_the_audit_writer_writes_what_queued_in_one_transaction_and_a_bad_row_loses_only_itself() -> None:
    from guard.audit.writer import BackgroundAudit

    class Log:
        def __init__(self) -> None:
            self.batches: list[list[str]] = []
            self.gate = threading.Event()

        def record_many(self, entries: list[Any], *, note: bool = True) -> None:
            self.gate.wait(5)
            if "bad" in [e[0] for e in entries]:
                raise ValueError("cannot write")
            self.batches.append([e[0] for e in entries])

        def close(self) -> None:
            pass

    log = Log()
    writer = BackgroundAudit(log)
    for name in ["first", *[f"r{i}" for i in range(50)]]:
        writer.record(name, None, latency_ms=1.0)  # type: ignore[arg-type]
    log.gate.set()  # the log was busy while 51 rows queued
    deadline = time.monotonic() + 5
    while sum(map(len, log.batches)) < 51 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [n for b in log.batches for n in b] == ["first", *[f"r{i}" for i in range(50)]]
    assert len(log.batches) <= 2  # what queued went in one transaction

    log.gate.clear()
    for name in ["x", "a", "bad", "b"]:
        writer.record(name, None, latency_ms=1.0)  # type: ignore[arg-type]
    log.gate.set()
    writer.close()
    assert [n for b in log.batches for n in b][51:] == ["x", "a", "b"]


SMART_CONFIG = """
hooks:
  PreToolUse:
    - id: no-deletes
      matcher: Bash
      rule: Deny deleting files.
"""


def _health_of_a_service(tmp_path: Path, **env: str) -> Iterator[dict[str, Any]]:
    """``/healthz`` of a real ``guard serve`` with a smart hook, read until its LiteLLM client is not loading any more."""
    (tmp_path / "guard.yaml").write_text(SMART_CONFIG)
    trust_config(tmp_path / "guard.yaml")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GUARD_")}
    proc, url = start_serve(tmp_path / "guard.yaml", tmp_path, {**clean, "OPENAI_API_KEY": "sk-test", **env})
    try:
        deadline = time.monotonic() + 60
        while True:
            with urllib.request.urlopen(
                urllib.request.Request(url + "/healthz", headers=service_auth()), timeout=10
            ) as r:
                health = json.loads(r.read())
            yield health
            if health["model_clients"]["litellm"] != "loading":
                return
            assert time.monotonic() < deadline, health
            time.sleep(0.1)
    finally:
        proc.kill()
        proc.communicate(timeout=10)


def test_a_service_whose_models_all_go_to_an_openai_compatible_endpoint_never_loads_litellm(tmp_path: Path) -> None:
    """With GUARD_API_BASE every model id goes over the OpenAI transport, an unprefixed one too: LiteLLM's seconds stay out."""
    [health] = _health_of_a_service(
        tmp_path, GUARD_API_BASE="http://127.0.0.1:9/v1", GUARD_MODEL_QUICK="stub", GUARD_MODEL_THOROUGH="anthropic/x"
    )
    assert health["model_clients"] == {"openai": "ready", "litellm": "not loaded"}


@pytest.mark.slow
def test_a_service_listens_with_its_openai_client_ready_and_loads_litellm_for_the_other_models_meanwhile(
    tmp_path: Path,
) -> None:
    healths = list(
        _health_of_a_service(
            tmp_path, GUARD_MODEL_QUICK="openai/gpt-4.1-mini", GUARD_MODEL_THOROUGH="anthropic/claude-haiku-4-5"
        )
    )
    assert healths[0]["model_clients"]["openai"] == "ready"
    assert healths[-1]["model_clients"]["litellm"] == "ready"
