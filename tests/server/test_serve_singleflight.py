"""N concurrent identical events make ONE model call: in the library and in ``guard serve``.

The model is the loopback OpenAI-compatible stub (guard.testing.openai_stub), answering slowly
enough that every request arrives while the first judgement is still in flight.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.cache import free_port, service_auth, wait_for_port

from guard.core.settings import Settings
from guard.core.spec import HookSpec, SmartSettings
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry
from guard.testing.openai_stub import Reply, StubServer

RULE = "Deny shell commands that delete files outside the project."


def event(session: int) -> dict[str, Any]:
    """The same tool call from different sessions: volatile fields differ, the judgement does not."""
    return {
        "hook_event_name": "PreToolUse",
        "session_id": f"s{session}",
        "tool_use_id": f"t{session}",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf ~/victim"},
    }


@pytest.fixture
def slow_stub() -> Iterator[StubServer]:
    with StubServer(latency=0.5, default=Reply.verdict("deny", "deletes the home directory", confidence=0.95)) as stub:
        yield stub


async def test_the_engine_shares_one_call_then_serves_the_cache(slow_stub: StubServer, tmp_path: Path) -> None:
    settings = Settings(
        models={"quick": "openai/stub-judge"},
        api_base=slow_stub.url,
        cache_url=f"sqlite:///{tmp_path}/cache.db",
        audit_path=None,
    )
    spec = HookSpec(
        id="no-delete",
        kind="smart",
        event="pre_tool_use",
        matcher="Bash",
        timeout=120,
        options=SmartSettings(rule=RULE, depth="quick"),
    )
    engine = Engine(settings, Registry([spec]))
    decisions = await asyncio.gather(*(engine.decide(event(n)) for n in range(12)))
    assert slow_stub.calls == 1
    assert {d.decision for d in decisions} == {"deny"}
    again = await engine.decide(event(99))
    assert again.decision == "deny" and again.hooks[0].cached is True
    assert slow_stub.calls == 1


CONFIG = f"""
models:
  quick: openai/stub-judge
cache:
  url: sqlite:///.guard/cache.db
hooks:
  PreToolUse:
    - id: no-delete
      matcher: Bash
      rule: {RULE}
      depth: quick
      timeout: 120
"""


def _post(url: str, payload: dict[str, Any], results: list[Any]) -> None:
    request = urllib.request.Request(
        url + "/v1/hooks",
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json", **service_auth()},
    )
    with urllib.request.urlopen(request, timeout=120) as r:
        results.append(json.loads(r.read()))


@pytest.mark.slow
def test_the_service_shares_one_call_across_concurrent_requests(slow_stub: StubServer, tmp_path: Path) -> None:
    (tmp_path / "guard.yaml").write_text(CONFIG)
    trust_config(tmp_path / "guard.yaml")
    port = free_port()
    env = {**os.environ, "GUARD_API_BASE": slow_stub.url}
    proc = subprocess.Popen(
        [sys.executable, "-m", "guard.cli.main", "serve", "--port", str(port), "--log-level", "warning"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_port(port, timeout=120)  # the model client is warmed before the port opens
        url = f"http://127.0.0.1:{port}"
        results: list[Any] = []
        threads = [threading.Thread(target=_post, args=(url, event(n), results)) for n in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert len(results) == 16 and {r["decision"] for r in results} == {"deny"}
        assert slow_stub.calls == 1
        later: list[Any] = []
        _post(url, event(99), later)
        smart = [h for h in later[0]["hooks"] if h["type"] == "smart"]
        assert smart[0]["cached"] is True and slow_stub.calls == 1
        with urllib.request.urlopen(urllib.request.Request(url + "/metrics", headers=service_auth()), timeout=10) as r:
            metrics = r.read().decode()
        assert "guard_cache_hits_total 1" in metrics and 'guard_decisions_total{decision="deny"} 17' in metrics
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
