"""The gate's own duties on a cache hit: a cached Stop deny still blocks a stop only once in a row.

The stop-loop guard lives once, in the gate's finishing step, for every decider:
a cache hit never reaches the engine, so this is the test that fails when that
step loses it."""

from __future__ import annotations

from pathlib import Path

from fixtures.judge import settings_for, smart_spec

from guard.core.settings import LoadedConfig
from guard.runtime.deciders import in_process
from guard.runtime.gate import Gate
from guard.testing.openai_stub import Reply, StubServer

RULE = "Do not let the agent stop while the tests it changed have not been run."


def stop(active: bool) -> dict[str, object]:
    return {"hook_event_name": "Stop", "session_id": "s1", "cwd": "/home/u/proj", "stop_hook_active": active}


def test_a_cached_stop_deny_blocks_only_once_in_a_row(stub: StubServer, tmp_path: Path) -> None:
    stub.default = Reply.verdict("deny", "run the tests first")
    settings = settings_for(stub, cache_url=f"sqlite:///{tmp_path}/cache.db")
    gate = Gate(
        LoadedConfig(settings, [smart_spec(RULE, id="tests-run", event="stop", matcher=None)]), deciders=in_process()
    )
    _, first = gate.decide(stop(False))
    assert first.decision == "deny" and stub.calls == 1
    # the agent went on once and stops again: judged (stop_hook_active is part of what the rule sees), deny cached, not blocked
    _, judged = gate.decide(stop(True))
    assert judged.decision == "allow" and stub.calls == 2
    # the same stop once more: the cached deny answers on the fast path, and the gate still does not block again
    _, cached = gate.decide(stop(True))
    assert cached.details.get("fast_path") is True and stub.calls == 2  # answered from the cache: the engine never ran
    assert cached.decision == "allow"
    assert "run the tests first" in cached.details["stop_loop_guard"]
