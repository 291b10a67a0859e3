"""``guard cache stats|clear`` and ``guard log`` as a person runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fixtures.cli import GuardCli

from guard.audit import AuditLog
from guard.cache.sqlite import SQLiteCache
from guard.core.decision import Decision, HookResult

CONFIG = """
cache:
  url: sqlite:///state/cache.db
  ttl: 12h
audit:
  path: state/audit.db
  redact: [token]
"""


@pytest.fixture
def config(write_config: Any) -> Path:
    path: Path = write_config(CONFIG)
    return path


def test_cache_stats_reads_the_configured_cache(config: Path, guard_cli: GuardCli) -> None:
    cache = SQLiteCache(config.parent / "state" / "cache.db", ttl=60)
    cache.set("a", {"decision": "deny"})
    cache.get("a")
    cache.get("b")
    done = guard_cli(["cache", "stats"])
    assert done.returncode == 0
    lines = dict(line.split(None, 1) for line in done.stdout.splitlines() if " " in line)
    assert lines["backend"] == "sqlite" and lines["entries"] == "1" and lines["hits"] == "1" and lines["misses"] == "1"
    assert "50.0%" in done.stdout and lines["ttl"] == "12h" and str(config.parent / "state" / "cache.db") in done.stdout
    done = guard_cli(["cache", "stats", "--json"])
    stats = json.loads(done.stdout)
    assert (stats["entries"], stats["hits"], stats["misses"], stats["ttl_seconds"]) == (1, 1, 1, 43200)


def test_cache_clear_empties_it(config: Path, guard_cli: GuardCli) -> None:
    cache = SQLiteCache(config.parent / "state" / "cache.db", ttl=60)
    cache.set("a", {"decision": "deny"})
    cache.set("b", {"decision": "allow"})
    done = guard_cli(["cache", "clear"])
    assert done.returncode == 0 and done.stdout.startswith("removed 2 cached verdicts")
    assert cache.get("a") is None


def test_cache_commands_take_an_explicit_config(tmp_path: Path, guard_cli: GuardCli) -> None:
    other = tmp_path / "elsewhere" / "guard.yaml"
    other.parent.mkdir()
    other.write_text("cache:\n  url: 'off'\n")
    done = guard_cli(["cache", "stats", "--config", str(other)])
    assert done.returncode == 0 and "off" in done.stdout


def test_guard_log_shows_decisions_and_hooks(config: Path, guard_cli: GuardCli) -> None:
    log = AuditLog(config.parent / "state" / "audit.db", redact=["token"])
    hooks = [
        HookResult(
            id="no-rm",
            type="smart",
            decision="deny",
            reason="deletes home",
            tier="quick",
            model="openai/stub",
            latency_ms=412.0,
            cost_usd=0.00012,
        )
    ]
    log.record(
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"token": "t0p"}},
        Decision("deny", "deletes home", hooks=hooks),
        latency_ms=415.0,
    )
    log.record(
        {"hook_event_name": "PreToolUse", "tool_name": "Read"},
        Decision(hooks=[HookResult(id="no-rm", type="smart", decision="allow", cached=True)]),
        latency_ms=2.0,
    )
    done = guard_cli(["log"])
    assert done.returncode == 0
    newest, hook2, older, hook1 = done.stdout.splitlines()  # newest first: `guard log | head -1` is the latest decision
    assert (
        "deny" in older
        and "pre_tool_use" in older
        and "Bash" in older
        and "415 ms" in older
        and "deletes home" in older
    )
    assert hook1.split() == ["no-rm", "smart", "deny", "quick", "openai/stub", "412", "ms", "$0.000120"]
    assert "allow" in newest and "Read" in newest
    assert hook2.split() == ["no-rm", "smart", "allow", "cached"]
    done = guard_cli(["log", "--reverse"])
    assert done.stdout.splitlines()[0] == older
    done = guard_cli(["log", "--limit", "1", "--json"])
    [line] = done.stdout.splitlines()
    assert json.loads(line)["tool"] == "Read"
    done = guard_cli(["log", "--json"])  # JSON Lines: one object per line, newest first
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["tool"] for r in rows] == ["Read", "Bash"] and rows[1]["payload"]["tool_input"]["token"] == "[redacted]"


def test_guard_log_with_nothing_logged_says_so(config: Path, guard_cli: GuardCli) -> None:
    done = guard_cli(["log"])
    assert done.returncode == 0 and done.stdout.startswith("no decisions logged yet")


def test_guard_log_refuses_a_bad_limit(guard_cli: GuardCli) -> None:
    done = guard_cli(["log", "--limit", "0"])
    assert done.returncode == 2 and "expected at least 1" in done.stderr
