"""``guard cache stats|clear`` and ``guard log`` as a person runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guard.audit import AuditLog
from guard.cache.sqlite import SQLiteCache
from guard.cli.main import main
from guard.core.decision import Decision, HookResult

CONFIG = """
cache:
  url: sqlite:///state/cache.db
  ttl: 12h
audit:
  path: state/audit.db
  redact: [token]
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


@pytest.fixture
def config(write_config: Any) -> Path:
    path: Path = write_config(CONFIG)
    return path


def test_cache_stats_reads_the_configured_cache(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = SQLiteCache(config.parent / "state" / "cache.db", ttl=60)
    cache.set("a", {"decision": "deny"})
    cache.get("a")
    cache.get("b")
    code, out = run(capsys, "cache", "stats")
    assert code == 0
    lines = dict(line.split(None, 1) for line in out.splitlines() if " " in line)
    assert lines["backend"] == "sqlite" and lines["entries"] == "1" and lines["hits"] == "1" and lines["misses"] == "1"
    assert "50.0%" in out and lines["ttl"] == "12h" and str(config.parent / "state" / "cache.db") in out
    code, out = run(capsys, "cache", "stats", "--json")
    stats = json.loads(out)
    assert (stats["entries"], stats["hits"], stats["misses"], stats["ttl_seconds"]) == (1, 1, 1, 43200)


def test_cache_clear_empties_it(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = SQLiteCache(config.parent / "state" / "cache.db", ttl=60)
    cache.set("a", {"decision": "deny"})
    cache.set("b", {"decision": "allow"})
    code, out = run(capsys, "cache", "clear")
    assert code == 0 and out.startswith("removed 2 cached verdicts")
    assert cache.get("a") is None


def test_cache_commands_take_an_explicit_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "elsewhere" / "guard.yaml"
    other.parent.mkdir()
    other.write_text("cache:\n  url: 'off'\n")
    code, out = run(capsys, "cache", "stats", "--config", str(other))
    assert code == 0 and "off" in out


def test_guard_log_shows_decisions_and_hooks(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = AuditLog(config.parent / "state" / "audit.db", redact=["token"])
    hooks = [HookResult(id="no-rm", type="smart", decision="deny", reason="deletes home", tier="quick", model="openai/stub", latency_ms=412.0, cost_usd=0.00012)]
    log.record({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"token": "t0p"}}, Decision("deny", "deletes home", hooks=hooks), latency_ms=415.0)
    log.record({"hook_event_name": "PreToolUse", "tool_name": "Read"}, Decision(hooks=[HookResult(id="no-rm", type="smart", decision="allow", cached=True)]), latency_ms=2.0)
    code, out = run(capsys, "log")
    assert code == 0
    newest, hook2, older, hook1 = out.splitlines()  # newest first: `guard log | head -1` is the latest decision
    assert "deny" in older and "pre_tool_use" in older and "Bash" in older and "415 ms" in older and "deletes home" in older
    assert hook1.split() == ["no-rm", "smart", "deny", "quick", "openai/stub", "412", "ms", "$0.000120"]
    assert "allow" in newest and "Read" in newest
    assert hook2.split() == ["no-rm", "smart", "allow", "cached"]
    code, out = run(capsys, "log", "--reverse")
    assert out.splitlines()[0] == older
    code, out = run(capsys, "log", "--limit", "1", "--json")
    [line] = out.splitlines()
    assert json.loads(line)["tool"] == "Read"
    code, out = run(capsys, "log", "--json")  # JSON Lines: one object per line, newest first
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["tool"] for r in rows] == ["Read", "Bash"] and rows[1]["payload"]["tool_input"]["token"] == "[redacted]"


def test_guard_log_with_nothing_logged_says_so(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "log")
    assert code == 0 and out.startswith("no decisions logged yet")


def test_guard_log_refuses_a_bad_limit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["log", "--limit", "0"])
    assert exc.value.code == 2 and "expected at least 1" in capsys.readouterr().err
