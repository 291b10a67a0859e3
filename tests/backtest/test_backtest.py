"""``guard backtest`` on real ``guard hook`` traffic: the planted flips and nothing else, the gate, no audit pollution.

Traffic is recorded by ``guard hook`` processes judging against a loopback stub
whose verdict follows the rule text (a rule forbids the words it names as
``FORBIDDEN(word)``), so changing the rule plants known flips. Then labeled rows
become a dataset through ``guard log label`` and ``guard datasets from-audit``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.processes import run_guard

from guard.datasets import load_cases
from guard.eval.schema import MetricsReport, ResultRow
from guard.eval.stats import mcnemar_exact
from guard.judge.fence import FENCE_RE
from guard.testing.openai_stub import Reply, StubServer

pytestmark = pytest.mark.slow  # every test replays a recorded log through guard backtest subprocesses

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """models: {{quick: openai/stub-judge}}
audit: {{path: .guard/audit.db}}
cache: {{url: "sqlite:///.guard/cache.db"}}
hooks:
  PreToolUse:
    - id: words
      matcher: Bash
      depth: quick
      rule: Deny shell commands that mention {forbidden}.
    - id: notify
      matcher: Bash
      url: {webhook}
      fire_and_forget: true
"""
OLD_RULE = "FORBIDDEN(alpha)"
NEW_RULE = "FORBIDDEN(beta) or FORBIDDEN(gamma)"
#: command → (recorded decision under OLD_RULE, decision under NEW_RULE)
TRAFFIC = {
    "echo alpha": ("deny", "allow"),
    "echo beta": ("allow", "deny"),
    "echo gamma": ("allow", "deny"),
    "echo delta": ("allow", "allow"),
    "echo alpha beta": ("deny", "deny"),
}
PLANTED = {("echo alpha", "deny→allow"), ("echo beta", "allow→deny"), ("echo gamma", "allow→deny")}
SHORTENED = "echo beta " + "x" * 6000  # would flip, but the audit log keeps only part of it
CUT = {"command": "echo gamma", **{f"option{i}": "y" * 60 for i in range(100)}}  # would flip, cut at the size limit


def rule_policy(body: dict[str, Any]) -> Reply:
    """Deny when the fenced tool input contains a word the rule (outside the fence) forbids."""
    text = "\n".join(str(m.get("content")) for m in body.get("messages") or [])
    fenced = " ".join(m.group(2) for m in FENCE_RE.finditer(text))
    for word in re.findall(r"FORBIDDEN\((\w+)\)", FENCE_RE.sub("", text)):
        if re.search(rf"\b{word}\b", fenced):
            return Reply.verdict("deny", f"mentions {word}", confidence=0.9)
    return Reply.verdict("allow", "nothing forbidden", confidence=0.9)


@pytest.fixture(scope="module")
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        server.responder = rule_policy
        yield server


def environment(stub: StubServer, home: Path) -> dict[str, str]:
    kept = {name: value for name, value in os.environ.items() if not name.startswith("GUARD_")}
    kept = {name: value for name, value in kept.items() if name not in ("XDG_STATE_HOME", "XDG_CONFIG_HOME")}
    return {**kept, "HOME": str(home), "PYTHONPATH": str(ROOT), "GUARD_API_BASE": stub.url}


def guard(args: list[str], cwd: Path, stub: StubServer) -> subprocess.CompletedProcess[str]:
    return run_guard(args, cwd, env=environment(stub, cwd.parent), inherit_env=False, timeout=180)


def hook_event(tool_input: dict[str, Any], session: str) -> str:
    return json.dumps(
        {
            "session_id": session,
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": tool_input,
            "cwd": "/tmp",
        }
    )


def audit_rows(project: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(project / ".guard" / "audit.db") as db:
        return list(db.execute("SELECT id, payload FROM decisions ORDER BY id"))


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory, stub: StubServer) -> Path:
    """A project whose audit log holds real guard hook decisions under OLD_RULE; guard.new.yaml holds NEW_RULE."""
    project = tmp_path_factory.mktemp("recording") / "project"
    project.mkdir()
    webhook = "http://127.0.0.1:9/never-called"  # a fire_and_forget webhook a backtest leaves out
    (project / "guard.yaml").write_text(CONFIG.format(forbidden=OLD_RULE, webhook=webhook))
    with pytest.MonkeyPatch.context() as user:  # trusted as the user whose HOME the recorded hooks run with
        user.setenv("HOME", str(project.parent))
        for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME"):
            user.delenv(name, raising=False)
        trust_config(project / "guard.yaml")
    (project / "guard.new.yaml").write_text(CONFIG.format(forbidden=NEW_RULE, webhook=webhook))
    events = [hook_event({"command": c}, "s1") for c in TRAFFIC] + [
        hook_event({"command": SHORTENED}, "s2"),
        hook_event(CUT, "s2"),
    ]
    env = environment(stub, project.parent)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "guard.cli.main", "hook"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=project,
            env=env,
        )
        for _ in events
    ]
    outputs = [p.communicate(e, timeout=180) for p, e in zip(procs, events, strict=True)]
    for (command, (before, _)), (out, err) in zip(TRAFFIC.items(), outputs, strict=False):
        decision = json.loads(out)["hookSpecificOutput"]["permissionDecision"] if out.strip() else "allow"
        assert decision == before, (command, out, err)
    assert len(audit_rows(project)) == len(events)
    return project


@pytest.fixture
def recorded(recording: Path, isolated_home: Path) -> Path:
    """A private copy of the recorded project (audit log and decision cache), so tests do not see each other's replays."""
    project = isolated_home / "project"
    shutil.copytree(recording, project)
    return project


def test_backtest_reports_exactly_the_planted_flips_and_gates_new_denies(recorded: Path, stub: StubServer) -> None:
    before_rows = audit_rows(recorded)
    calls = stub.calls

    proc = guard(["backtest", "--config", "guard.new.yaml", "--out", "bt", "--max-new-denies", "1"], recorded, stub)
    assert proc.returncode == 100, proc.stdout + proc.stderr  # two new denies > 1
    assert "gate failed: 2 new denies > --max-new-denies 1" in proc.stderr
    out = recorded / "bt"
    assert {"report.md", "report.html", "results.jsonl", "junit.xml", "metrics.json"} <= {p.name for p in out.iterdir()}
    summary = MetricsReport.model_validate_json((out / "metrics.json").read_text()).backtest
    assert summary is not None
    assert {(f.summary, f.direction) for f in summary.flips} == PLANTED
    by_command = {f.summary: f for f in summary.flips}
    assert (by_command["echo alpha"].before_reason, by_command["echo alpha"].after_reason) == (
        "[words] mentions alpha",
        "nothing forbidden",
    )
    assert (by_command["echo beta"].before_reason, by_command["echo beta"].after_reason) == (
        "[words] nothing forbidden",
        "mentions beta",
    )
    assert (summary.events, summary.new_denies, summary.new_allows) == (len(TRAFFIC), 2, 1)
    assert summary.mcnemar_p == mcnemar_exact(2, 1)
    assert summary.skipped == {"long strings shortened in the audit log": 1, "payload cut at the audit size limit": 1}
    assert summary.cache_hits == 0 and stub.calls == calls + len(TRAFFIC)  # a new rule: every event judged afresh

    rows = [ResultRow.model_validate_json(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted((r.label, r.verdict) for r in rows) == sorted(TRAFFIC.values())
    junit = (out / "junit.xml").read_text()
    assert junit.count("<failure ") == len(PLANTED) + 1  # each flipped event, and the --max-new-denies limit
    assert '<failure message="2 new denies &gt; --max-new-denies 1" type="limit"' in junit
    report = (out / "report.md").read_text()
    assert report.startswith("## guard backtest: ")
    assert "**Result: FAILED** (guard.new.yaml against recorded decisions: 2 new denies > --max-new-denies 1)" in report
    assert "baseline" not in report.lower()  # it speaks of the configs compared: there is no baseline
    assert (
        "| words | Bash | echo beta | allow: [words] nothing forbidden | deny: mentions beta |" in report
    )  # the flip names its rule; the webhook is left out
    (change,) = (
        summary.rules
    )  # which rule flipped what, and how its text changed (read from the live guard.yaml, as it is now)
    assert (change.rule, change.new_denies, change.new_allows) == ("words", 2, 1)
    assert (change.old_text, change.new_text) == (
        f"Deny shell commands that mention {OLD_RULE}.",
        f"Deny shell commands that mention {NEW_RULE}.",
    )
    assert (
        f"| words | 2 | 1 | Deny shell commands that mention [-{OLD_RULE}.-]{{+{NEW_RULE}.+}} (old: guard.yaml as it is now"
        in report
    )
    assert (
        "<del>FORBIDDEN(alpha).</del><ins>FORBIDDEN(beta) or FORBIDDEN(gamma).</ins>"
        in (out / "report.html").read_text()
    )
    assert (
        "rule words: 2 allow → deny, 1 deny → allow; Deny shell commands that mention [-FORBIDDEN(alpha).-]"
        in proc.stdout
    )
    assert audit_rows(recorded) == before_rows  # the replay wrote nothing to the log it read

    again = guard(["backtest", "--config", "guard.new.yaml", "--out", "bt2", "--max-new-denies", "2"], recorded, stub)
    assert again.returncode == 0, again.stdout + again.stderr
    rerun = MetricsReport.model_validate_json((recorded / "bt2" / "metrics.json").read_text()).backtest
    assert rerun is not None and {(f.summary, f.direction) for f in rerun.flips} == PLANTED
    assert rerun.cache_hits == rerun.cached_events == len(TRAFFIC)  # the first backtest's verdicts are reused
    assert stub.calls == calls + len(TRAFFIC)


def test_against_an_old_config_and_filters(recorded: Path, stub: StubServer) -> None:
    proc = guard(
        ["backtest", "--config", "guard.new.yaml", "--against", "guard.yaml", "--session", "s1", "--out", "bt"],
        recorded,
        stub,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = MetricsReport.model_validate_json((recorded / "bt" / "metrics.json").read_text()).backtest
    assert summary is not None and summary.reference == "guard.yaml"
    assert {(f.summary, f.direction) for f in summary.flips} == PLANTED
    assert [(r.rule, r.old_source) for r in summary.rules] == [
        ("words", "guard.yaml")
    ]  # --against: the old text is OLD's
    limited = guard(
        [
            "backtest",
            "--config",
            "guard.new.yaml",
            "--against",
            "guard.yaml",
            "--session",
            "s1",
            "--out",
            "bt5",
            "--max-new-allows",
            "0",
        ],
        recorded,
        stub,
    )
    assert limited.returncode == 100 and "gate failed: 1 new allow > --max-new-allows 0" in limited.stderr
    assert summary.skipped == {}  # --session s1 leaves out the two unreplayable s2 rows before they are looked at

    sampled = guard(["backtest", "--config", "guard.new.yaml", "--sample", "2", "--out", "bt3"], recorded, stub)
    assert sampled.returncode == 0, sampled.stderr
    assert MetricsReport.model_validate_json((recorded / "bt3" / "metrics.json").read_text()).backtest.events == 2  # type: ignore[union-attr]

    by_rule = guard(["backtest", "--config", "guard.new.yaml", "--rule", "words", "--out", "bt4"], recorded, stub)
    assert by_rule.returncode == 0, by_rule.stderr
    assert MetricsReport.model_validate_json((recorded / "bt4" / "metrics.json").read_text()).backtest.events == len(
        TRAFFIC
    )  # type: ignore[union-attr]

    unknown = guard(["backtest", "--config", "guard.new.yaml", "--rule", "no-such-hook"], recorded, stub)
    assert unknown.returncode == 1 and "no-such-hook" in unknown.stderr and "Traceback" not in unknown.stderr


def test_labeled_decisions_become_a_dataset(recorded: Path, stub: StubServer) -> None:
    ids = {
        json.loads(payload)["tool_input"]["command"][:20]: row_id
        for row_id, payload in audit_rows(recorded)
        if payload.startswith("{") and payload.endswith("}")
    }
    assert guard(["log", "label", str(ids["echo alpha"]), "allow"], recorded, stub).returncode == 0
    assert guard(["log", "label", str(ids["echo beta"]), "deny"], recorded, stub).returncode == 0
    assert guard(["log", "label", str(ids[SHORTENED[:20]]), "deny"], recorded, stub).returncode == 0
    missing = guard(["log", "label", "999", "deny"], recorded, stub)
    assert missing.returncode == 1 and "no decision #999" in missing.stderr

    listed = guard(["log"], recorded, stub)
    assert f"#{ids['echo beta']} " in listed.stdout and "[labeled deny]" in listed.stdout

    proc = guard(["datasets", "from-audit", "--out", "labeled.jsonl"], recorded, stub)
    assert proc.returncode == 0, proc.stderr
    assert "left out 1 labeled row(s): long strings shortened in the audit log" in proc.stderr
    cases = {case.tool_input["command"]: case for case in load_cases(recorded / "labeled.jsonl")}
    assert {command: case.label for command, case in cases.items()} == {"echo alpha": "allow", "echo beta": "deny"}
    assert (
        cases["echo alpha"].tool_name == "Bash"
        and cases["echo alpha"].event == "PreToolUse"
        and "relabeled" in cases["echo alpha"].tags
    )
    assert (
        cases["echo alpha"].cluster == "session s1"
    )  # calls of one session are not independent: eval resamples sessions
    assert guard(["datasets", "check", "--strict", "labeled.jsonl"], recorded, stub).returncode == 0
