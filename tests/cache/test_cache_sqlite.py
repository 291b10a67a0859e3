"""SQLite backend specifics: URLs, lazy creation, migrations, and many processes at once."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from guard.cache.sqlite import SQLiteCache
from guard.core.errors import CacheError, ConfigError
from guard.storage.database import Migrations

VERDICT = {"decision": "allow", "reason": "read-only command"}


def test_relative_urls_resolve_against_the_config_directory(tmp_path: Path) -> None:
    cache = SQLiteCache.from_url("sqlite:///.guard/cache.db", ttl=60, base_dir=tmp_path / "proj")
    assert cache.path == tmp_path / "proj" / ".guard" / "cache.db"
    assert (
        SQLiteCache.from_url(f"sqlite:///{tmp_path}/abs.db", ttl=60, base_dir="/elsewhere").path == tmp_path / "abs.db"
    )


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///", "memcached://host", "/tmp/cache.db"])
def test_a_bad_cache_url_names_the_key(url: str) -> None:
    with pytest.raises(ConfigError, match=r"cache\.url"):
        SQLiteCache.from_url(url, ttl=60)


def test_the_file_and_its_directory_appear_on_first_use_only(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "cache.db"
    cache = SQLiteCache(path, ttl=60)
    assert cache.stats()["entries"] == 0 and cache.clear() == 0
    assert not path.parent.exists()
    assert cache.get("k") is None
    assert path.exists()


def test_a_new_file_is_migrated_in_wal_mode_and_records_its_migrations(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    SQLiteCache(path, ttl=60).set("k", VERDICT)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    assert [r[0] for r in db.execute("SELECT name FROM _guard_cache_migrations")] == ["m001_entries", "m002_seals"]
    row = db.execute("SELECT value, created_at < expires_at, hits FROM entries WHERE key = 'k'").fetchone()
    assert (json.loads(row[0]), row[1], row[2]) == (VERDICT, 1, 0)


def test_opening_an_up_to_date_file_does_no_schema_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache-hit guard hook opens the file on every tool call: only the user_version read may happen."""
    path = tmp_path / "cache.db"
    SQLiteCache(path, ttl=60).set("k", VERDICT)

    def no_migrations(self: Migrations, db: sqlite3.Connection) -> None:
        raise AssertionError("migrations ran on an up-to-date file")

    monkeypatch.setattr(Migrations, "apply", no_migrations)
    assert SQLiteCache(path, ttl=60).get("k") == VERDICT
    with pytest.raises(AssertionError):
        SQLiteCache(tmp_path / "new.db", ttl=60).get("k")


def test_a_damaged_file_is_a_cache_error_and_clear_starts_afresh(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    path.write_bytes(b"this is not a database" * 100)
    cache = SQLiteCache(path, ttl=60)
    with pytest.raises(CacheError, match=f"{path}.*guard cache clear"):
        cache.get("k")
    assert cache.clear() == 0
    cache.set("k", VERDICT)
    assert cache.get("k") == VERDICT


def test_a_locked_file_is_not_mistaken_for_a_damaged_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cache.db"
    cache = SQLiteCache(path, ttl=60)
    cache.set("k", VERDICT)
    monkeypatch.setattr("guard.storage.database.BUSY_TIMEOUT_S", 0.05)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(CacheError, match="locked") as exc:
            SQLiteCache(path, ttl=60).clear()
        assert "guard cache clear" not in str(exc.value)
    finally:
        holder.execute("ROLLBACK")
    assert cache.get("k") == VERDICT


def test_one_instance_is_safe_across_threads(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "cache.db", ttl=60)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(50):
                if cache.get(f"k{(n + i) % 7}") is None:
                    cache.set(f"k{(n + i) % 7}", VERDICT)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    stats = cache.stats()
    assert stats["hits"] + stats["misses"] == 400 and stats["entries"] == 7


WORKER = """
import json, sys
from guard.cache.sqlite import SQLiteCache
path, n = sys.argv[1], int(sys.argv[2])
hits = 0
for i in range(60):
    cache = SQLiteCache(path, ttl=60)  # a fresh open per lookup, as each guard hook process does
    key = f"k{(n * 7 + i) % 13}"
    if cache.get(key) is None:
        cache.set(key, {"decision": "allow", "by": n})
    else:
        hits += 1
    cache.close()
print(json.dumps({"hits": hits}))
"""


@pytest.mark.slow
def test_many_processes_share_a_brand_new_file(tmp_path: Path) -> None:
    """Twelve processes race to create, migrate and use the same file: no error, no lost count."""
    path = tmp_path / "fresh" / "cache.db"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(path), str(n)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for n in range(12)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 12, [err for _, err in outputs]
    hits = sum(json.loads(out)["hits"] for out, _ in outputs)
    stats = SQLiteCache(path, ttl=60).stats()
    assert stats["hits"] == hits
    assert stats["hits"] + stats["misses"] == 12 * 60
    assert stats["entries"] == 13


def test_a_new_file_another_process_is_creating_is_waited_for_not_failed(tmp_path: Path) -> None:
    """Two processes creating one audit log or cache at once (two hooks, a hook and guard view): the second waits."""
    from guard.audit import migration
    from guard.storage.database import connect

    path = tmp_path / "new.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE held (x)")
    holder.execute("BEGIN IMMEDIATE")  # another process is mid-migration
    threading.Timer(0.3, lambda: holder.execute("COMMIT")).start()
    db = connect(path, migration)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    holder.close()
