"""One model call per fleet: replicas sharing a Redis cache judge an event once, and a dead or failed holder frees it.

Real redis-server, real ``guard serve`` processes, the loopback stub counting model calls.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.cache import free_port, service_auth, wait_for_port
from fixtures.processes import serve_argv

from guard.cache.redis import RedisCache
from guard.cache.singleflight import once_per_fleet
from guard.testing.openai_stub import Reply, StubServer

pytestmark = pytest.mark.redis

RULE = "Deny shell commands that delete files outside the project."
VERDICT = {"decision": "deny", "reason": "stored by the holder"}


def event(n: int) -> dict[str, Any]:
    """One tool call from many sessions: volatile fields differ, the judgement does not."""
    return {
        "hook_event_name": "PreToolUse",
        "session_id": f"s{n}",
        "tool_use_id": f"t{n}",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf ~/victim"},
    }


def post(url: str, payload: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url + "/v1/hooks",
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json", **service_auth()},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


@pytest.mark.slow
def test_three_replicas_on_one_redis_make_one_model_call(redis_cache_url: str, tmp_path: Path) -> None:  # noqa: F811
    config = tmp_path / "guard.yaml"
    config.write_text(
        f"models:\n  quick: openai/stub-judge\ncache:\n  url: '{redis_cache_url}'\n"
        f"hooks:\n  PreToolUse:\n    - id: no-delete\n      matcher: Bash\n      rule: {RULE}\n      depth: quick\n      timeout: 60\n"
    )
    trust_config(config)
    with StubServer(latency=0.5, default=Reply.verdict("deny", "deletes the home directory", confidence=0.95)) as stub:
        ports = [free_port() for _ in range(3)]
        env = {**os.environ, "GUARD_API_BASE": stub.url}
        replicas = [
            subprocess.Popen(
                serve_argv("--port", str(port), "--config", str(config)),
                cwd=tmp_path,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for port in ports
        ]
        try:
            for port in ports:
                wait_for_port(port, timeout=120)
            with ThreadPoolExecutor(30) as pool:  # 30 at once, spread over the replicas
                results = list(pool.map(lambda n: post(f"http://127.0.0.1:{ports[n % 3]}", event(n)), range(30)))
            assert len(results) == 30 and {r["decision"] for r in results} == {"deny"}
            assert stub.calls == 1
            assert (
                sum(1 for r in results if not r["hooks"][0].get("cached")) >= 1
            )  # the holder judged; the rest waited for it
        finally:
            for proc in replicas:
                proc.terminate()
            for proc in replicas:
                proc.communicate(timeout=30)


async def test_a_dead_holders_lease_expires_and_a_waiter_judges(redis_cache_url: str) -> None:  # noqa: F811
    cache = RedisCache(redis_cache_url, ttl=60)
    try:
        assert cache.lock("k", lease=0.3) is not None  # taken by a process that then dies: never unlocked, never stored
        calls = 0

        async def judge() -> str:
            nonlocal calls
            calls += 1
            cache.set("k", VERDICT)
            return "judged here"

        started = time.monotonic()
        assert await once_per_fleet(cache, "k", judge, lease=5) == "judged here"
        assert calls == 1 and 0.25 <= time.monotonic() - started < 3
        assert not cache.locked("k"), "the new holder released its lock"
    finally:
        cache.close()


async def test_waiters_get_the_holders_verdict_and_take_over_when_it_fails(redis_cache_url: str) -> None:  # noqa: F811
    holder_cache, waiter_cache = (
        RedisCache(redis_cache_url, ttl=60),
        RedisCache(redis_cache_url, ttl=60),
    )  # two replicas
    try:
        release = asyncio.Event()

        async def slow_judge() -> str:
            await release.wait()
            holder_cache.set("k", VERDICT)
            return "judged"

        async def never() -> str:
            raise AssertionError("a waiter judged while the holder was judging")

        holder = asyncio.ensure_future(once_per_fleet(holder_cache, "k", slow_judge, lease=5))
        await asyncio.sleep(0.05)
        waiter = asyncio.ensure_future(once_per_fleet(waiter_cache, "k", never, lease=5))
        await asyncio.sleep(0.1)
        release.set()
        assert await holder == "judged" and await waiter == VERDICT

        async def failing() -> str:
            await asyncio.sleep(0.1)
            raise RuntimeError("model unavailable")

        async def takeover() -> str:
            return "judged after the holder failed"

        failed = asyncio.ensure_future(once_per_fleet(holder_cache, "other", failing, lease=5))
        await asyncio.sleep(0.02)
        second = await once_per_fleet(waiter_cache, "other", takeover, lease=5)
        with pytest.raises(RuntimeError):
            await failed
        assert second == "judged after the holder failed" and not waiter_cache.locked("other")
    finally:
        holder_cache.close()
        waiter_cache.close()
