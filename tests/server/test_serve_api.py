"""The service's HTTP API in process: decisions, client formats, metrics, and 4xx for client mistakes."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from guard.core.decision import Decision, HookResult
from guard.core.events.model import Event
from guard.core.settings import Settings
from guard.core.spec import HookSpec, SmartSettings
from guard.judge.model import client_status
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry
from guard.server.app import create_app, warm
from guard.server.metrics import Metrics

RM = {"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": {"command": "rm -rf ~"}}
LS = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}


def no_rm(event: Event) -> Any:
    command = (event.tool_input or {}).get("command", "")
    if "crash" in command:
        raise RuntimeError("hook bug")
    return {"decision": "deny", "reason": "deletes the home directory"} if command.startswith("rm") else "allow"


@pytest.fixture
def engine() -> Engine:
    spec = HookSpec(id="no-rm", kind="callable", event="pre_tool_use", matcher="Bash|bash", func=no_rm)
    return Engine(Settings(audit_path=None, cache_url="off"), Registry([spec]))


@pytest.fixture
def client(engine: Engine) -> Iterator[TestClient]:
    with TestClient(create_app(engine, max_body=4096), base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        yield c


def test_an_event_gets_the_canonical_decision(client: TestClient) -> None:
    r = client.post("/v1/hooks", json=RM)
    assert r.status_code == 200
    body = r.json()
    assert body["decision"] == "deny" and body["reason"] == "deletes the home directory"
    assert [(h["id"], h["type"], h["decision"]) for h in body["hooks"]] == [("no-rm", "callable", "deny")]
    assert client.post("/v1/hooks", json=LS).json()["decision"] == "allow"
    assert client.post("/v1/hooks", json={"hook_event_name": "Stop"}).json() == {
        "decision": "allow",
        "reason": None,
        "updated_input": None,
        "additional_context": None,
        "hooks": [],
        "details": {"latency_ms": pytest.approx(0, abs=100)},
    }


def test_a_client_format_route_answers_what_guard_hook_would_print(client: TestClient) -> None:
    r = client.post("/v1/hooks/claude", json=RM)
    assert r.status_code == 200 and r.headers["x-guard-exit-code"] == "0" and r.headers["x-guard-decision"] == "deny"
    told = "guard denied this call: rule no-rm, decided by callable hook no-rm: deletes the home directory. This block is final: do not retry this in another form; ask the user."
    assert r.json() == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": told,
        },
        "systemMessage": "guard denied Bash: rule no-rm (callable hook no-rm); final.",
    }
    allow = client.post("/v1/hooks/claude", json=LS)
    assert allow.status_code == 200 and allow.text == "" and allow.headers["x-guard-decision"] == "allow"


def test_an_event_in_a_clients_own_shape_is_normalized(client: TestClient) -> None:
    copilot = {"hookEventName": "preToolUse", "toolName": "bash", "toolArgs": json.dumps({"command": "rm -rf /"})}
    r = client.post("/v1/hooks/copilot", json=copilot)
    assert r.json() == {
        "permissionDecision": "deny",
        "permissionDecisionReason": "guard denied this call: rule no-rm, decided by callable hook no-rm: "
        "deletes the home directory. This block is final: do not retry this in another form; ask the user.",
    }
    assert client.post("/v1/hooks?format=copilot", json=copilot).json()["decision"] == "deny"


def test_a_crashing_hook_is_reported_in_the_decision_not_as_a_500(client: TestClient) -> None:
    r = client.post("/v1/hooks", json={**RM, "tool_input": {"command": "crash"}})
    assert r.status_code == 200
    assert r.json()["decision"] == "allow" and "hook bug" in r.json()["hooks"][0]["error"]


@pytest.mark.parametrize(
    ("headers", "content", "fail_closed"),
    [
        ({"content-type": "application/json"}, b'{"toolName": "bash", "toolArgs": "{broken"}', False),
        ({"content-type": "text/plain"}, json.dumps(RM).encode(), False),
        ({"content-type": "application/json"}, b"{not json", True),
    ],
)
def test_the_client_route_answers_bad_requests_with_the_failure_policy(
    engine: Engine, headers: dict[str, str], content: bytes, fail_closed: bool
) -> None:
    """A Claude Code http hook runs the call on any non-2xx answer: the client route never gives one for a bad request."""
    if fail_closed:
        engine.registry = Registry([s.replace(failure_mode="fail_closed") for s in engine.registry.specs()])
    with TestClient(create_app(engine), base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        r = c.post("/v1/hooks/claude", content=content, headers=headers)
    assert r.status_code == 200
    if fail_closed:
        assert r.json()["decision"] == "block" and "refused the request (400)" in r.json()["reason"]
    else:
        assert "refused the request" in r.json()["systemMessage"]  # allowed, but the user sees it was not judged


@pytest.mark.parametrize(
    ("path", "kwargs", "status", "message"),
    [
        (
            "/v1/hooks",
            {"content": b"{not json", "headers": {"content-type": "application/json"}},
            400,
            "not valid JSON",
        ),
        ("/v1/hooks", {"content": b"\xff\xfe", "headers": {"content-type": "application/json"}}, 400, "not valid JSON"),
        ("/v1/hooks", {"json": [RM]}, 400, "JSON object, got list"),
        ("/v1/hooks", {"json": {"tool_name": "Bash"}}, 400, "hook_event_name"),
        ("/v1/hooks", {"json": {"hook_event_name": 7}}, 400, "hook_event_name"),
        ("/v1/hooks", {"json": {"hook_event_name": "no such event!"}}, 400, "hook_event_name"),
        ("/v1/hooks", {"json": {**RM, "tool_input": "not an object"}}, 400, "tool_input"),
        ("/v1/hooks", {"content": json.dumps(RM), "headers": {"content-type": "text/plain"}}, 415, "application/json"),
        ("/v1/hooks", {"json": {**RM, "pad": "x" * 5000}}, 413, "4096-byte limit"),
        ("/v1/hooks/windsurf", {"json": RM}, 404, "unknown client format 'windsurf'"),
        ("/v1/hooks?format=windsurf", {"json": RM}, 404, "unknown client format"),
        ("/v2/hooks", {"json": RM}, 404, "Not Found"),
    ],
)
def test_client_mistakes_get_a_4xx_with_a_json_error(
    client: TestClient, path: str, kwargs: dict[str, Any], status: int, message: str
) -> None:
    r = client.post(path, **kwargs)
    assert r.status_code == status
    assert r.json()["status"] == status and message in r.json()["error"]


def test_an_oversized_chunked_body_is_refused_without_reading_it_all(client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"hook_event_name": "PreToolUse", "pad": "'
        for _ in range(100):
            yield b"x" * 1000
        yield b'"}'

    r = client.post("/v1/hooks", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and "limit" in r.json()["error"]


def test_the_wrong_method_is_a_json_405(client: TestClient) -> None:
    r = client.get("/v1/hooks")
    assert r.status_code == 405 and r.json()["status"] == 405


def test_guards_own_fault_follows_the_failure_policy(
    client: TestClient, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(event: Any, *_: Any, **__: Any) -> Decision:
        raise RuntimeError("bug in the engine")

    monkeypatch.setattr(engine, "run", broken)  # what the gate's local decider calls
    r = client.post("/v1/hooks", json=RM)  # the hook is fail_open: allowed, and the allow says it was not judged
    assert r.status_code == 200 and r.json()["decision"] == "allow"
    assert "internal error: RuntimeError" in r.json()["warnings"][0]
    engine.registry = Registry([s.replace(failure_mode="fail_closed") for s in engine.registry.specs()])
    closed = TestClient(create_app(engine), base_url="http://127.0.0.1", raise_server_exceptions=False).post(
        "/v1/hooks", json=RM
    )
    assert (
        closed.status_code == 200
        and closed.json()["decision"] == "deny"
        and "internal error" in closed.json()["reason"]
    )


def test_healthz(client: TestClient) -> None:
    r = client.get("/healthz")
    assert r.status_code == 200 and r.json()["status"] == "ok" and r.json()["hooks"] == 1 and r.json()["cache"] == "off"


def test_metrics_count_requests_by_route_and_status_and_decisions_by_verdict(client: TestClient) -> None:
    client.post("/v1/hooks", json=RM)
    client.post("/v1/hooks", json=LS)
    client.post("/v1/hooks/claude", json=RM)
    client.post("/v1/hooks", content=b"{", headers={"content-type": "application/json"})
    client.post("/v1/hooks/nope", json=RM)
    r = client.get("/metrics")
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples = dict(line.rsplit(" ", 1) for line in r.text.splitlines() if line and not line.startswith("#"))
    assert samples['guard_http_requests_total{method="POST",route="/v1/hooks",status="200"}'] == "2"
    assert samples['guard_http_requests_total{method="POST",route="/v1/hooks",status="400"}'] == "1"
    assert samples['guard_http_requests_total{method="POST",route="/v1/hooks/{format}",status="200"}'] == "1"
    assert samples['guard_http_requests_total{method="POST",route="/v1/hooks/{format}",status="404"}'] == "1"
    assert samples['guard_decisions_total{decision="deny"}'] == "2"
    assert samples['guard_decisions_total{decision="allow"}'] == "1"
    assert samples["guard_http_requests_in_flight"] == "1"  # this very request
    assert samples['guard_http_request_duration_seconds_count{route="/v1/hooks"}'] == "3"


def test_metrics_derive_cache_hits_misses_and_model_latency_from_smart_hooks() -> None:
    metrics = Metrics()
    smart = [
        HookResult(id="a", type="smart", decision="deny", cached=True, latency_ms=1.0),
        HookResult(id="b", type="smart", decision="allow", latency_ms=300.0),
        HookResult(id="c", type="smart", decision="allow", latency_ms=30.0),
        HookResult(id="d", type="smart", error="timed out after 5s", latency_ms=5000.0),
        HookResult(id="e", type="command", decision="allow", latency_ms=7.0),
    ]
    metrics.observe_decision(Decision("deny", hooks=smart))
    text = metrics.render()
    samples = dict(line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    assert samples["guard_cache_hits_total"] == "1" and samples["guard_cache_misses_total"] == "2"
    assert float(samples["guard_cache_hit_ratio"]) == pytest.approx(1 / 3, abs=1e-5)
    assert samples['guard_model_latency_seconds_bucket{le="0.025"}'] == "0"
    assert samples['guard_model_latency_seconds_bucket{le="0.05"}'] == "1"
    assert samples['guard_model_latency_seconds_bucket{le="0.5"}'] == "2"
    assert samples['guard_model_latency_seconds_bucket{le="+Inf"}'] == "2"
    assert float(samples["guard_model_latency_seconds_sum"]) == pytest.approx(0.33)
    assert samples['guard_hook_errors_total{type="smart"}'] == "1"
    assert "# TYPE guard_model_latency_seconds histogram" in text


def test_warm_loads_the_model_client_only_when_a_smart_hook_needs_it(engine: Engine) -> None:
    assert warm(engine) == []
    smart = HookSpec(
        id="judge",
        kind="smart",
        event="pre_tool_use",
        options=SmartSettings(rule="Deny deletes.", model="anthropic/own-model"),
    )
    settings = Settings(models={"quick": "openai/stub-quick"}, audit_path=None, cache_url="off")
    assert warm(Engine(settings, Registry([smart]))) == ["anthropic/own-model", "openai/stub-quick"]
    deadline = time.monotonic() + 60
    while client_status()["litellm"] != "ready":  # imported by a background thread: the non-OpenAI model's route
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert client_status()["openai"] == "ready"
