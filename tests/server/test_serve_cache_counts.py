"""``guard serve`` counts cache hits off the event loop: a locked cache file holds up no hit, and a clean stop loses no count."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.cache import start_serve
from fixtures.judge import bash_event
from fixtures.processes import run_guard

from guard.server.client import send_event
from guard.testing.openai_stub import Reply, StubServer

pytestmark = pytest.mark.slow

CONFIG = (
    "models: {quick: openai/stub-quick}\ncache: {url: 'sqlite:///cache.db'}\naudit: {enabled: false}\n"
    "hooks:\n  PreToolUse:\n    - id: no-delete\n      matcher: Bash\n      depth: quick\n      timeout: 30\n"
    "      rule: Deny shell commands that delete files outside the project.\n"
)


def cache_stats(project: Path, env: dict[str, str]) -> dict[str, int]:
    out = run_guard(["cache", "stats", "--json"], project, env=env, inherit_env=False)
    assert out.returncode == 0, out.stderr
    stats: dict[str, int] = json.loads(out.stdout)
    return stats


def test_hits_wait_for_no_cache_lock_and_every_count_lands_on_a_clean_stop(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(CONFIG)
    trust_config(isolated_home / "guard.yaml")
    event = bash_event("rm -rf ~/photos")
    with StubServer() as stub:
        stub.default = Reply.verdict("deny", "deletes a home folder", confidence=0.95)
        env = {**os.environ, "GUARD_API_BASE": stub.url}
        proc, url = start_serve(isolated_home / "guard.yaml", isolated_home, env)
        try:
            assert (send_event(url, event, timeout=30) or {}).get("decision") == "deny"  # the miss: judged and stored
            holder = sqlite3.connect(isolated_home / "cache.db", isolation_level=None)
            holder.execute(
                "BEGIN IMMEDIATE"
            )  # another process holds the write lock (a `guard hook` beside the service)
            try:
                started = time.monotonic()
                for _ in range(5):
                    assert (send_event(url, event, timeout=30) or {}).get("decision") == "deny"
                assert time.monotonic() - started < 3.0, "cache hits waited for the cache file's write lock"
            finally:
                holder.execute("COMMIT")
                holder.close()
            assert stub.calls == 1  # all five were hits
            deadline = time.monotonic() + 15
            while cache_stats(isolated_home, env)["hits"] < 5 and time.monotonic() < deadline:
                time.sleep(0.2)
            assert cache_stats(isolated_home, env)["hits"] == 5  # written while the service runs, in a batch
            assert (send_event(url, event, timeout=30) or {}).get("decision") == "deny"  # a sixth, tallied at exit
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    stats = cache_stats(isolated_home, env)
    assert (stats["hits"], stats["misses"], stats["entries"]) == (
        6,
        1,
        1,
    )  # the last hit written at exit; the miss counted once
