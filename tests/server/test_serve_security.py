"""A real ``guard serve`` against callers it should not trust: tokens, content types, hostile JSON, 0.0.0.0."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.cache import free_port, start_listening, wait_for_port

from guard.server.client import send_event
from guard.testing.openai_stub import Reply, StubServer

REPO = Path(__file__).resolve().parents[2]
TOKEN = "s3cret-token-for-tests"
#: Every hook kind a payload reaches: a smart rule (cache key, fence, model call), a command hook
#: (stdin, environment variables) that leaves a marker, and the audit log.
CONFIG = """
models: {quick: openai/stub-quick}
audit: {path: audit.db}
hooks:
  PreToolUse:
    - id: rule
      depth: quick
      rule: Deny shell commands that delete files.
    - id: marker
      command: "cat > /dev/null; touch ran.marker"
  UserPromptSubmit:
    - id: prompt-rule
      depth: quick
      rule: Block prompts asking for secrets.
"""
RM = {
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build"},
    "session_id": "s",
}  # not `rm -rf /`: the self-protection rule denies that (it removes guard.yaml)


@dataclass
class Served:
    url: str
    folder: Path
    proc: subprocess.Popen[str]

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        request = urllib.request.Request(self.url + path, data=body, method="POST", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")

    def get(self, path: str, headers: dict[str, str] | None = None) -> int:
        try:
            with urllib.request.urlopen(
                urllib.request.Request(self.url + path, headers=headers or {}), timeout=10
            ) as r:
                return int(r.status)
        except urllib.error.HTTPError as exc:
            return exc.code


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "guard.cli.main", "serve", "--log-level", "warning", *args]


def serve_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "GUARD_SERVE_TOKEN"}
    return {**env, "PYTHONPATH": str(REPO), **extra}


pytestmark = [pytest.mark.slow, pytest.mark.stub(default=Reply.verdict("allow", "fine", confidence=0.9))]


@pytest.fixture
def served(tmp_path: Path, stub: StubServer) -> Iterator[Served]:
    (tmp_path / "guard.yaml").write_text(CONFIG)
    trust_config(tmp_path / "guard.yaml")
    proc, port = start_listening(
        lambda port: serve_command(
            "--port", str(port), "--config", str(tmp_path / "guard.yaml"), "--token", TOKEN, "--log-level", "warning"
        ),
        cwd=tmp_path,
        env=serve_env(GUARD_API_BASE=stub.url),
    )
    try:
        yield Served(f"http://127.0.0.1:{port}", tmp_path, proc)
    finally:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        assert "Traceback" not in err, err


AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


def test_every_endpoint_wants_the_token(served: Served) -> None:
    body = json.dumps(RM).encode()
    for headers in (
        {"Content-Type": "application/json"},
        {"Content-Type": "application/json", "Authorization": "Bearer wrong"},
        {"Content-Type": "application/json", "Authorization": TOKEN},  # not a bearer header
        {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}x"},
    ):
        status, reply = served.post("/v1/hooks", body, headers)
        assert status == 401 and "bearer token" in reply["error"], (headers, reply)
        # a Claude Code http hook runs the call on any non-2xx: the client route answers the failure policy instead
        status, reply = served.post("/v1/hooks/claude", body, headers)
        assert status == 200 and "(401)" in json.dumps(reply), (headers, reply)
    assert not (served.folder / "ran.marker").exists()  # refused before any hook ran
    assert served.get("/metrics") == 401 and served.get("/metrics", {"Authorization": f"Bearer {TOKEN}"}) == 200
    assert served.get("/healthz") == 401 and served.get("/healthz", {"Authorization": f"Bearer {TOKEN}"}) == 200, (
        "every route, /healthz too"
    )

    status, reply = served.post("/v1/hooks", body, AUTH)
    assert status == 200 and reply["decision"] == "allow" and (served.folder / "ran.marker").exists()


@pytest.mark.parametrize(
    "ctype", ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain", None]
)
def test_a_body_that_is_not_declared_json_is_refused_before_any_hook_runs(served: Served, ctype: str | None) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", **({"Content-Type": ctype} if ctype else {})}
    status, reply = served.post("/v1/hooks", json.dumps(RM).encode(), headers)
    assert status == 415 and "application/json" in reply["error"]
    assert not (served.folder / "ran.marker").exists()


def _nested(depth: int, rng: random.Random) -> str:
    opens = "".join(rng.choice("[{") for _ in range(depth))
    inner = '"x"'
    for bracket in reversed(opens):
        inner = f"[{inner}]" if bracket == "[" else f'{{"k":{inner}}}'
    return inner


def hostile_bodies(count: int, seed: int = 11) -> list[tuple[str, bytes]]:
    """``count`` (path, body) pairs: random bytes, broken JSON, deep nesting, surrogates, wrong types, odd numbers."""
    rng = random.Random(seed)
    paths = [
        "/v1/hooks",
        "/v1/hooks/claude",
        "/v1/hooks/devin",
        "/v1/hooks/codex",
        "/v1/hooks/gemini",
        "/v1/hooks/copilot",
        "/v1/hooks?format=copilot",
        "/v1/hooks?format=gemini",
    ]
    wrong = [None, 0, -1, 1.5, True, "", "x" * 300, [], ["Bash"], {}, {"a": "b"}, [[[]]], "\u0000", "\ud800"]
    fields = [
        "hook_event_name",
        "tool_name",
        "tool_input",
        "cwd",
        "session_id",
        "prompt",
        "tool_response",
        "hookEventName",
        "toolName",
        "toolArgs",
        "stop_hook_active",
        "transcript_path",
        "permission_mode",
    ]
    events = ["PreToolUse", "UserPromptSubmit", "Stop", "PostToolUse", "preToolUse", "BeforeTool"]

    def event() -> dict[str, Any]:
        data: dict[str, Any] = {
            "hook_event_name": rng.choice(events),
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
        }
        for _ in range(rng.randint(1, 3)):
            data[rng.choice(fields)] = rng.choice(wrong)
        return data

    makers = [
        lambda: bytes(rng.randrange(256) for _ in range(rng.randint(0, 64))),
        lambda: json.dumps(event()).encode()[: rng.randint(0, 40)],
        lambda: json.dumps(event()).encode(),
        lambda: json.dumps(event(), ensure_ascii=False).encode("utf-8", "surrogatepass"),  # raw surrogate bytes
        lambda: _nested(rng.choice([63, 64, 65, 260, 1000, 5000, 100_000]), rng).encode(),
        lambda: (
            '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","deep":'
            + _nested(rng.choice([60, 63, 100, 260, 999, 1000, 3000]), rng)
            + "}}"
        ).encode(),
        lambda: (
            '{"hook_event_name":"'
            + rng.choice(events)
            + '","tool_name":"Bash","extra":'
            + _nested(rng.choice([62, 150, 260, 990]), rng)
            + "}"
        ).encode(),
        lambda: b'{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"\\ud800 rm"}}',
        lambda: b'{"hook_event_name":"UserPromptSubmit","prompt":"\\udfff\\ud800"}',
        lambda: b'{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"\\ud83d":1}}',
        lambda: (
            '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"n":'
            + rng.choice(["NaN", "Infinity", "-Infinity", "1e999", "1" * 5000, "-0"])
            + "}}"
        ).encode(),
        lambda: b'{"hook_event_name":"PreToolUse","hook_event_name":["x"],"tool_name":"Bash"}',
        lambda: rng.choice(
            [b"", b"null", b"[]", b'"PreToolUse"', b"0", b"{}", b"\xef\xbb\xbf{}", b"\xff\xfe{\x00}\x00"]
        ),
        lambda: json.dumps({**event(), "tool_input": {"command": "rm \x00 -rf", "env": "\x00"}}).encode(),
        lambda: json.dumps(
            {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"k" * 1000: ["v"] * 1000}}
        ).encode(),
    ]
    return [(rng.choice(paths), rng.choice(makers)()) for _ in range(count)]


def test_hostile_json_never_gets_a_500(served: Served) -> None:
    statuses: dict[int, int] = {}
    for path, body in hostile_bodies(200):
        status, reply = served.post(path, body, AUTH)
        assert status < 500, (path, body[:200], reply)
        assert status == 200 or reply.get("error"), (path, body[:200], reply)  # every refusal says why
        if path != "/v1/hooks" and "refused the request" in json.dumps(reply):
            status = 400  # the client route answers a bad body with the failure policy (in a 200)
        statuses[status] = statuses.get(status, 0) + 1
    assert statuses.get(400, 0) > 50 and statuses.get(200, 0) > 10, statuses  # both kinds were really exercised
    assert served.get("/healthz", AUTH) == 200  # and the service is still up


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (_nested(1000, random.Random(1)), "nested deeper than"),
        (
            '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":' + _nested(200, random.Random(2)) + "}",
            "nested deeper than",
        ),
        ('{"hook_event_name":"PreToolUse","tool_name":["Bash"]}', "tool_name"),
    ],
)
def test_hostile_json_gets_a_400_that_says_why(served: Served, body: str, reason: str) -> None:
    status, reply = served.post("/v1/hooks", body.encode(), AUTH)
    assert status == 400 and reason in reply["error"], reply


def test_a_lone_surrogate_is_repaired_and_judged(served: Served) -> None:
    body = '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm \\ud800 -rf"}}'
    status, reply = served.post("/v1/hooks", body.encode(), AUTH)
    assert status == 200 and reply["decision"] == "allow" and (served.folder / "ran.marker").exists(), reply


def test_guard_hooks_client_sends_the_token_from_the_environment(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GUARD_SERVE_TOKEN", raising=False)
    assert send_event(served.url, RM, timeout=30) is None  # 401: judged in-process instead
    monkeypatch.setenv("GUARD_SERVE_TOKEN", TOKEN)
    assert (send_event(served.url, RM, timeout=30) or {}).get("decision") == "allow"


def test_listening_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    port = free_port()
    refused = subprocess.run(
        serve_command("--host", "0.0.0.0", "--port", str(port)),
        cwd=tmp_path,
        env=serve_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode != 0
    assert "refusing to listen on 0.0.0.0 without a token" in refused.stderr and "GUARD_SERVE_TOKEN" in refused.stderr
    assert "Traceback" not in refused.stderr

    proc = subprocess.Popen(
        serve_command("--host", "0.0.0.0", "--port", str(port)),
        cwd=tmp_path,
        env=serve_env(GUARD_SERVE_TOKEN=TOKEN),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_port(port, timeout=60)
        served = Served(f"http://127.0.0.1:{port}", tmp_path, proc)
        assert served.post("/v1/hooks", json.dumps(RM).encode(), {"Content-Type": "application/json"})[0] == 401
        assert served.post("/v1/hooks", json.dumps(RM).encode(), AUTH)[0] == 200
    finally:
        proc.kill()
        proc.communicate(timeout=10)


def test_loopback_without_a_token_of_yours_answers_only_the_holder_of_the_per_user_token(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        serve_command("--port", str(port)),
        cwd=tmp_path,
        env=serve_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_port(port, timeout=60)
        served = Served(f"http://127.0.0.1:{port}", tmp_path, proc)
        assert (send_event(served.url, RM, timeout=30) or {}).get("decision") == "allow", (
            "guard hook derives the token itself"
        )
        for path in ("/v1/hooks", "/healthz", "/metrics"):  # any other local process, the agent included, is refused
            status = (
                served.post(path, json.dumps(RM).encode(), {"Content-Type": "application/json"})[0]
                if path == "/v1/hooks"
                else served.get(path)
            )
            assert status == 401, path
        printed = subprocess.run(
            serve_command("--print-token"), cwd=tmp_path, env=serve_env(), capture_output=True, text=True, timeout=60
        )
        assert served.get("/healthz", {"Authorization": f"Bearer {printed.stdout.strip()}"}) == 200, (
            "the user's own copy of it"
        )
        refused = subprocess.run(
            serve_command("--print-token"),
            cwd=tmp_path,
            env=serve_env(CLAUDECODE="1"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode == 1 and not refused.stdout and "needs you, not an agent" in refused.stderr
    finally:
        proc.kill()
        _, err = proc.communicate(timeout=10)
    assert "per-user: guard serve --print-token shows it" in err


def test_guard_hook_sends_the_configs_token_to_its_auto_started_service(stub: StubServer, isolated_home: Path) -> None:
    """``server: {url: auto, token: ${VAR}}``: the background service wants the token and guard hook sends it."""
    from test_serve_autostart import bash_event, guard, wait_for_state

    (isolated_home / "guard.yaml").write_text(
        "models: {quick: openai/stub-quick}\nserver: {url: auto, token: '${TEAM_GUARD_TOKEN}'}\ncache: {url: 'off'}\n"
        "hooks:\n  PreToolUse:\n    - id: no-delete\n      matcher: Bash\n      depth: quick\n      timeout: 60\n"
        "      rule: Deny shell commands that delete files outside the project.\n"
    )
    trust_config(isolated_home / "guard.yaml")
    stub.default = Reply.verdict("deny", "deletes outside the project", confidence=0.9)
    env = {"GUARD_API_BASE": stub.url, "TEAM_GUARD_TOKEN": TOKEN, "PYTHONPATH": str(REPO)}
    first = guard(["hook"], isolated_home, env, json.dumps(bash_event("rm -rf ~/a")))
    assert json.loads(first.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", first.stderr
    state = wait_for_state(isolated_home.parent / "home/.cache/guard/serve")
    service = Served(state["url"], isolated_home, None)  # type: ignore[arg-type]
    try:
        deadline = time.monotonic() + 60
        while service.get("/healthz", AUTH) != 200:
            assert time.monotonic() < deadline, "the service never answered"
            time.sleep(0.2)
        assert service.post("/v1/hooks", json.dumps(RM).encode(), {"Content-Type": "application/json"})[0] == 401
        second = guard(["hook"], isolated_home, env, json.dumps(bash_event("rm -rf ~/b")))
        assert json.loads(second.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", second.stderr
        with urllib.request.urlopen(
            urllib.request.Request(state["url"] + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}), timeout=10
        ) as r:
            metrics = r.read().decode()
        assert 'route="/v1/hooks",status="200"} 1' in metrics, (
            metrics
        )  # the second call was the service's, with the token
    finally:
        os.kill(state["pid"], signal.SIGTERM)
