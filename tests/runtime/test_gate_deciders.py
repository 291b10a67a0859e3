"""The gate's deciders, one at a time, and the two entry points agreeing on every one of them.

A gate asks the deciders its builder gave it in order: the fast path, then the warm service, then the local engine; ``decide``
and ``adecide`` share that middle and the finishing step (stop-loop guard, latency,
audit row), so a sync SDK and an async one get the same decision and the same row.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from fixtures.judge import bash_event, settings_for, smart_spec

from guard.audit import AuditLog
from guard.core.decision import Decision
from guard.core.settings import SERVER_ENV, LoadedConfig
from guard.runtime.deciders import Decider, LocalEngine, in_process
from guard.runtime.gate import Gate
from guard.server import client as service_client
from guard.server.decider import ServiceDecider
from guard.testing.openai_stub import Reply, StubServer

RULE = "Deny shell commands that delete files outside the project."


def gate_for(stub: StubServer, tmp_path: Path, service: Decider | None = None, **options: Any) -> Gate:
    """A gate for one smart rule, built as ``guard.Gate`` builds one: the fast path, ``service`` if given, the local engine."""
    settings = settings_for(stub, cache_url=f"sqlite:///{tmp_path}/cache.db").replace(
        audit_path=str(tmp_path / "audit.db")
    )
    fast_path, local = in_process()
    deciders = (fast_path, local) if service is None else (fast_path, service, local)
    return Gate(LoadedConfig(settings, [smart_spec(RULE)]), deciders=deciders, **options)


def local_engine(gate: Gate) -> LocalEngine:
    """The gate's local engine decider: its last."""
    local = gate.deciders[-1]
    assert isinstance(local, LocalEngine)
    return local


def audit_rows(tmp_path: Path) -> list[dict[str, Any]]:
    return AuditLog(tmp_path / "audit.db").tail(100)


_VOLATILE = {
    "id",
    "time",
    "latency_ms",
    "wire_ms",
    "client_load_ms",
    "chain",
    "prev",
    "mac",
    "seq",
    "request_id",
    "started",
}


def comparable(value: Any) -> Any:
    """An audit row without what differs between two runs of one decision (times, latencies, ids, the chain)."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def test_the_fast_path_answers_a_cached_call_without_building_the_engine(stub: StubServer, tmp_path: Path) -> None:
    stub.default = Reply.verdict("deny", "it deletes files", confidence=0.97)
    gate_for(stub, tmp_path).decide(bash_event())  # a first gate judges it and fills the cache
    assert stub.calls == 1
    gate = gate_for(stub, tmp_path)
    _, sync = gate.decide(bash_event())
    _, async_ = asyncio.run(gate.adecide(bash_event()))
    for decision in (sync, async_):
        assert decision.decision == "deny" and decision.details.get("fast_path") is True and decision.hooks[0].cached
    assert local_engine(gate).built is None and stub.calls == 1  # neither entry point reached the engine or the model


def test_the_local_engine_judges_a_miss_from_both_entry_points_alike(stub: StubServer, tmp_path: Path) -> None:
    stub.default = Reply.verdict("deny", "it deletes files", confidence=0.97)
    _, sync = gate_for(stub, tmp_path / "sync").decide(bash_event())
    _, async_ = asyncio.run(gate_for(stub, tmp_path / "async").adecide(bash_event()))
    assert stub.calls == 2  # both were misses, judged by the model through the engine
    assert "fast_path" not in sync.details and "fast_path" not in async_.details
    assert sync.decision == async_.decision == "deny" and sync.reason == async_.reason
    [sync_row], [async_row] = audit_rows(tmp_path / "sync"), audit_rows(tmp_path / "async")
    assert comparable(sync_row) == comparable(async_row)  # one finishing step: the same audit row
    assert sync_row["decision"] == "deny" and sync_row["hooks"][0]["id"] == "no-delete"


def test_sync_and_async_hits_write_the_same_audit_row(stub: StubServer, tmp_path: Path) -> None:
    stub.default = Reply.verdict("deny", "it deletes files", confidence=0.97)
    gate = gate_for(stub, tmp_path)
    gate.decide(bash_event())  # the miss
    _, sync = gate.decide(bash_event())
    _, async_ = asyncio.run(gate.adecide(bash_event()))
    assert sync.to_dict() | {"details": None} == async_.to_dict() | {"details": None}
    deadline = time.monotonic() + 5
    while len(audit_rows(tmp_path)) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)  # a gate that decides again writes from a thread, a few milliseconds later
    _, sync_row, async_row = audit_rows(tmp_path)
    assert comparable(sync_row) == comparable(async_row)


@pytest.fixture
def fake_service(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """A warm service that denies everything it is sent; the events it received."""
    received: list[dict[str, Any]] = []

    def send_event(url: str, payload: dict[str, Any], **_: Any) -> dict[str, Any]:
        received.append(payload)
        return Decision("deny", "the service says no").to_dict()

    monkeypatch.setattr(service_client, "send_event", send_event)
    monkeypatch.setattr(service_client, "service_key", lambda *a: "key")
    return received


def test_the_service_decides_a_config_miss_from_both_entry_points(
    stub: StubServer, tmp_path: Path, fake_service: list[dict[str, Any]]
) -> None:
    gate = gate_for(stub, tmp_path, ServiceDecider("http://127.0.0.1:9", start_service=False))
    _, sync = gate.decide(bash_event())
    _, async_ = asyncio.run(gate.adecide(bash_event()))
    assert len(fake_service) == 2 and stub.calls == 0  # the service answered both: no model call here
    for decision in (sync, async_):
        assert (
            decision.decision == "deny"
            and decision.reason == "the service says no"
            and decision.details["server"] == "http://127.0.0.1:9"
        )
    assert audit_rows(tmp_path) == []  # the service wrote its own rows: none twice


def test_hooks_the_caller_chose_are_never_sent_to_the_service(
    stub: StubServer, tmp_path: Path, fake_service: list[dict[str, Any]]
) -> None:
    stub.default = Reply.verdict("allow", "the given rule allows it", confidence=0.97)
    settings = settings_for(stub)
    fast_path, local = in_process()
    gate = Gate(
        LoadedConfig(settings, [smart_spec(RULE)]),
        deciders=(fast_path, ServiceDecider("http://127.0.0.1:9", start_service=False), local),
        specs=[smart_spec("Allow everything.", id="given")],
    )
    _, sync = gate.decide(bash_event())
    _, async_ = asyncio.run(gate.adecide(bash_event()))
    assert fake_service == [] and stub.calls == 2  # judged here, with the given rule, both times
    assert sync.decision == async_.decision == "allow" and [h.id for h in sync.hooks] == ["given"]


def test_an_unreachable_service_is_judged_here_and_says_so(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub.default = Reply.verdict("allow", "fine", confidence=0.97)
    monkeypatch.setattr(service_client, "send_event", lambda *a, **k: None)
    monkeypatch.setattr(service_client, "service_key", lambda *a: "key")
    gate = gate_for(stub, tmp_path, ServiceDecider("http://127.0.0.1:9", start_service=False))
    for _, decision in (gate.decide(bash_event("ls")), asyncio.run(gate.adecide(bash_event("ls -l")))):
        assert decision.decision == "allow" and "unreachable; judged in-process" in decision.details["server_fallback"]
    assert stub.calls == 2


def test_the_builder_says_whether_the_service_may_answer(
    stub: StubServer, tmp_path: Path, fake_service: list[dict[str, Any]]
) -> None:
    """No import decides it: a runtime gate whose builder gave it no service decider never asks one (``GUARD_SERVER`` set
    or not), a runtime gate built without its deciders is refused, and the Python API's ``guard.Gate`` asks the service as
    ``guard hook`` does."""
    import os

    import guard

    stub.default = Reply.verdict("allow", "fine", confidence=0.97)
    env = {**os.environ, SERVER_ENV: "http://127.0.0.1:9"}
    _, decision = gate_for(stub, tmp_path, env=env).decide(bash_event("ls"))
    assert fake_service == [] and stub.calls == 1 and "server" not in decision.details
    with pytest.raises(TypeError, match="deciders"):
        Gate(LoadedConfig(settings_for(stub), [smart_spec(RULE)]))  # type: ignore[call-arg]
    settings = settings_for(stub, cache_url="off").replace(audit_path=None)
    _, served = guard.Gate(
        loaded=LoadedConfig(settings, [smart_spec(RULE)]), server="http://127.0.0.1:9", start_service=False
    ).decide(bash_event("ls"))
    assert len(fake_service) == 1 and served.reason == "the service says no" and stub.calls == 1


def test_guard_serve_reads_events_under_the_one_payload_limit(tmp_path: Path) -> None:
    """A 2 MiB Write that ``guard hook`` would judge is judged by the service too (it once refused anything over 1 MiB)."""
    from starlette.testclient import TestClient

    from guard.core.events.payload import MAX_EVENT_BYTES
    from guard.core.settings import Settings
    from guard.core.spec import HookSpec
    from guard.runtime.engine import Engine
    from guard.runtime.registry import Registry
    from guard.server.app import create_app

    spec = HookSpec(
        id="no-big-writes",
        kind="callable",
        event="pre_tool_use",
        matcher="Write",
        func=lambda e: {"decision": "deny", "reason": f"{len(e.tool_input['content'])} characters"},
    )
    engine = Engine(Settings(audit_path=None, cache_url="off"), Registry([spec]))
    write = {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "tool_name": "Write",
        "tool_input": {"file_path": "a.txt", "content": "x" * (2 << 20)},
    }
    with TestClient(create_app(engine), base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        judged = client.post("/v1/hooks", json=write)
        assert (
            judged.status_code == 200
            and judged.json()["decision"] == "deny"
            and judged.json()["reason"].endswith(f"{2 << 20} characters")
        )
        too_large = client.post("/v1/hooks", json={**write, "tool_input": {"content": "x" * MAX_EVENT_BYTES}})
        assert too_large.status_code == 413


def test_a_miss_runs_the_self_protection_rule_once_and_keeps_its_result(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast path judged the call against the self-protection rule before it found no cached verdict; the engine reuses that."""
    from guard.hooks import protect

    judged: list[str] = []
    real = protect.judge

    def counting(spec: Any, payload: dict[str, Any]) -> Any:
        judged.append(payload["tool_input"]["command"])
        return real(spec, payload)

    monkeypatch.setattr(protect, "judge", counting)
    from guard.config.assembly import with_protection

    stub.default = Reply.verdict("deny", "it deletes files", confidence=0.97)
    settings = settings_for(stub, cache_url=f"sqlite:///{tmp_path}/cache.db").replace(
        audit_path=str(tmp_path / "audit.db")
    )
    gate = Gate(with_protection(LoadedConfig(settings, [smart_spec(RULE)])), deciders=in_process())
    for decide in (gate.decide, lambda e: asyncio.run(gate.adecide(e))):
        judged.clear()
        _, decision = decide(bash_event(f"rm -rf ~/victim-{len(stub.requests)}"))
        assert decision.decision == "deny" and "fast_path" not in decision.details  # a miss: judged by the engine
        assert len(judged) == 1
        assert [h.type for h in decision.hooks].count("protect") == 1  # its result is in the decision all the same


@pytest.mark.parametrize("protected", [False, True], ids=["one-hook", "with-protection"])
async def test_a_miss_reaches_the_model_from_the_callers_own_task(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, protected: bool
) -> None:
    """No task hop from the request to the model call (nor back): on a busy ``guard serve`` each hop queues a miss
    behind every other ready request, so 64 concurrent misses all waited for the slowest one's set-up."""
    from guard.config.assembly import with_protection
    from guard.judge import http11

    posted_from: list[asyncio.Task[Any] | None] = []
    real = http11.Connections.post

    async def post(self: http11.Connections, *args: Any, **kwargs: Any) -> Any:
        posted_from.append(asyncio.current_task())
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(http11.Connections, "post", post)
    stub.default = Reply.verdict("deny", "it deletes files", confidence=0.97)
    settings = settings_for(stub, cache_url=f"sqlite:///{tmp_path}/cache.db").replace(audit_path=None)
    loaded = LoadedConfig(settings, [smart_spec(RULE)])
    gate = Gate(with_protection(loaded) if protected else loaded, deciders=in_process())

    async def caller() -> tuple[bool, str | None]:
        _, decision = await gate.adecide(bash_event("rm -rf ~/victim"))
        return posted_from == [asyncio.current_task()], decision.decision

    assert await asyncio.create_task(caller()) == (True, "deny")
    assert stub.calls == 1
