"""The decision cache contract, run against both backends (SQLite and a real redis-server)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fixtures.cache import free_port

from guard.cache import open_cache
from guard.cache.redis import RedisCache
from guard.cache.sqlite import SQLiteCache
from guard.core.errors import CacheError
from guard.core.settings import Settings

VERDICT = {"decision": "deny", "reason": "deletes files outside the project — ok?", "confidence": 0.93, "tier": "quick"}


def test_a_stored_verdict_comes_back_and_an_unknown_key_misses(cache: Any) -> None:
    assert cache.get("k1") is None
    cache.set("k1", VERDICT)
    assert cache.get("k1") == VERDICT
    assert cache.get("k2") is None


def test_hits_and_misses_are_counted(cache: Any) -> None:
    cache.get("a")
    cache.set("a", VERDICT)
    cache.get("a")
    cache.get("a")
    cache.get("b")
    stats = cache.stats()
    assert (stats["entries"], stats["hits"], stats["misses"]) == (1, 2, 2)
    assert stats["backend"] == cache.backend and stats["size_bytes"] > 0


def test_entries_expire_after_their_ttl(cache_factory: Any) -> None:
    cache = cache_factory(ttl=0.3)
    cache.set("short", VERDICT)
    cache.set("long", VERDICT, ttl=60)
    assert cache.get("short") == VERDICT
    time.sleep(0.45)
    assert cache.get("short") is None
    assert cache.get("long") == VERDICT
    assert cache.stats()["entries"] == 1


def test_setting_a_key_again_replaces_the_verdict(cache: Any) -> None:
    cache.set("k", VERDICT)
    cache.set("k", {**VERDICT, "decision": "allow"})
    assert cache.get("k")["decision"] == "allow"
    assert cache.stats()["entries"] == 1


def test_clear_removes_every_entry_and_resets_counters(cache: Any) -> None:
    for i in range(3):
        cache.set(f"k{i}", VERDICT)
    cache.get("k0")
    cache.get("nope")
    assert cache.clear() == 3
    assert cache.get("k0") is None
    stats = cache.stats()
    assert (stats["entries"], stats["hits"]) == (0, 0) and stats["misses"] == 1  # the lookup after clear


def test_two_handles_on_one_store_share_entries(cache_factory: Any) -> None:
    """Two guard hook processes (or two hosts on one Redis) see each other's verdicts."""
    first, second = cache_factory(), cache_factory()
    first.set("shared", VERDICT)
    assert second.get("shared") == VERDICT
    assert first.stats()["hits"] == 1


def test_open_cache_picks_the_backend_from_the_url(tmp_path: Any, redis_cache_url: str) -> None:
    assert open_cache(Settings(cache_url="off")) is None
    sqlite = open_cache(Settings(cache_url="sqlite:///c/cache.db", base_dir=str(tmp_path), cache_ttl=5))
    assert isinstance(sqlite, SQLiteCache) and sqlite.path == tmp_path / "c" / "cache.db" and sqlite.ttl == 5
    redis = open_cache(Settings(cache_url=redis_cache_url, cache_ttl=5))
    assert isinstance(redis, RedisCache) and redis.ttl == 5
    redis.close()


def test_redis_prefixes_keep_tenants_apart(redis_cache_url: str) -> None:
    team_a = RedisCache(redis_cache_url + "?prefix=a:", ttl=60)
    team_b = RedisCache(redis_cache_url + "?prefix=b:", ttl=60)
    team_a.set("k", VERDICT)
    assert team_b.get("k") is None
    team_b.set("k", VERDICT)
    assert team_a.clear() == 1
    assert team_b.get("k") == VERDICT
    assert team_a.stats()["entries"] == 0 and team_b.stats()["entries"] == 1


def test_an_unreachable_redis_is_a_cache_error_not_a_hang() -> None:
    cache = RedisCache(f"redis://127.0.0.1:{free_port()}/0", ttl=60)
    started = time.monotonic()
    with pytest.raises(CacheError, match="decision cache redis://127.0.0.1"):
        cache.get("k")
    with pytest.raises(CacheError):
        cache.set("k", VERDICT)
    assert time.monotonic() - started < 5


def test_a_probe_that_misses_is_not_counted_twice(cache: Any) -> None:
    """The guard hook fast path probes first; on a miss the engine's smart hook looks up again."""
    assert cache.get("k", record_miss=False) is None
    assert cache.get("k") is None
    cache.set("k", VERDICT)
    assert cache.get("k", record_miss=False) == VERDICT
    stats = cache.stats()
    assert (stats["hits"], stats["misses"]) == (1, 1)


def test_a_redis_password_never_shows_in_errors() -> None:
    cache = RedisCache(f"redis://:s3cret-pw@127.0.0.1:{free_port()}/0", ttl=60)
    with pytest.raises(CacheError) as exc:
        cache.get("k")
    assert "s3cret-pw" not in str(exc.value) and ":***@" in str(exc.value)
