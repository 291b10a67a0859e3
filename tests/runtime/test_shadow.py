"""Shadow mode through the real entry points: ``guard hook`` processes, a running ``guard view``, ``guard doctor``, ``guard trust``.

A shadow rule is judged (by the loopback stub), cached and audited like any other,
and never changes an answer; its would-be denies show in the view while calls run;
promoting it is a config change, so an untrusted promotion is not enforced.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.browser import start_view
from fixtures.processes import run_guard
from fixtures.session import bash_event, decision_of, hook, stub_judging

from guard.testing.openai_stub import Reply, StubServer

DELETES = "Deny shell commands that delete files."


def no_deletes(body: dict[str, Any]) -> Reply:
    """A stand-in judge (not a model): deny a command holding ``rm``, allow anything else."""
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    return (
        Reply.verdict("deny", "deletes files", confidence=0.95)
        if "rm -" in user
        else Reply.verdict("allow", "no deletion", confidence=0.95)
    )


def config(api_base: str, mode: str = "shadow", extra: str = "") -> str:
    return f"""models: {{quick: stub-quick, thorough: stub-thorough, api_base: {api_base}}}
audit: {{path: audit.db}}
hooks:
  PreToolUse:
    - id: no-deletes
      matcher: Bash
      depth: quick
      mode: {mode}
      failure_mode: fail_closed
      rule: "{DELETES}"
{extra}"""


#: A fail_closed command hook that always crashes: in shadow, its failure must not deny either.
CRASHING = """    - id: crashes
      matcher: Bash
      mode: shadow
      failure_mode: fail_closed
      command: "exit 7"
"""


@pytest.fixture
def judge() -> Iterator[StubServer]:
    yield from stub_judging(no_deletes)


def audited_hooks(project: Path) -> list[list[dict[str, Any]]]:
    db = sqlite3.connect(project / "audit.db")
    try:
        return [json.loads(row[0]) for row in db.execute("SELECT hooks FROM decisions ORDER BY id")]
    finally:
        db.close()


@pytest.mark.slow
def test_a_shadow_rule_is_judged_cached_and_audited_but_never_changes_the_answer(
    isolated_home: Path, judge: StubServer
) -> None:
    (isolated_home / "guard.yaml").write_text(config(judge.url, extra=CRASHING))
    trust_config(isolated_home / "guard.yaml")

    first = hook(isolated_home, bash_event("s1", "rm -rf build"))
    assert decision_of(first) == "allow" and first.stdout.strip() == "", (
        "a shadow deny is not the answer, and nothing is shown"
    )
    assert judge.calls == 1, "the shadow rule was judged"
    again = hook(isolated_home, bash_event("s1", "rm -rf build"))
    assert decision_of(again) == "allow" and judge.calls == 1, "its verdict was cached like any other"

    rows = audited_hooks(isolated_home)
    assert len(rows) == 2
    for hooks, cached in zip(rows, (False, True), strict=True):
        by_id = {h["id"]: h for h in hooks}
        assert (
            by_id["no-deletes"]["decision"] == "deny"
            and by_id["no-deletes"]["shadow"] is True
            and by_id["no-deletes"]["cached"] is cached
        )
    crashed = {h["id"]: h for h in rows[0]}["crashes"]
    assert crashed["shadow"] is True and crashed["error"] and crashed["decision"] == "deny", (
        "a failing fail_closed shadow hook: a would-be deny, recorded"
    )


@pytest.mark.slow
def test_a_shadow_rules_would_be_deny_appears_in_guard_view_while_calls_run(
    isolated_home: Path, judge: StubServer
) -> None:
    (isolated_home / "guard.yaml").write_text(config(judge.url))
    trust_config(isolated_home / "guard.yaml")
    assert decision_of(hook(isolated_home, bash_event("s1", "ls"))) == "allow"  # the log exists before the view opens
    view, url = start_view("--audit", str(isolated_home / "audit.db"), cwd=isolated_home)
    try:
        for command in ("rm -rf build", "rm -f notes.txt", "git status"):
            assert decision_of(hook(isolated_home, bash_event("s1", command))) == "allow"
        with urllib.request.urlopen(f"{url}/rules.json", timeout=30) as response:
            rules = {r["rule"]: r for r in json.load(response)["rules"]}
        with urllib.request.urlopen(f"{url}/rules", timeout=30) as response:
            page = response.read().decode()
        example = rules["no-deletes"]["shadow"]["examples"][0]["id"]
        with urllib.request.urlopen(f"{url}/decisions/{example}", timeout=30) as response:
            detail = response.read().decode()
    finally:
        view.terminate()
        view.wait(timeout=30)
    record = rules["no-deletes"]
    assert record["shadow"]["calls"] == 4 and record["shadow"]["deny"] == 2 and record["shadow"]["allow"] == 2
    assert record["enforced"]["calls"] == 0 and record["enforced"]["deny"] == 0, (
        "shadow verdicts are not counted as enforced"
    )
    examples = record["shadow"]["examples"]
    assert [e["verdict"] for e in examples] == ["deny", "deny"] and all(
        e["enforced"] == "allow" and e["reason"] == "deletes files" for e in examples
    )
    assert (
        "4 calls: 2 allow, 0 ask, 2 deny" in page
        and "would deny — deletes files" in page
        and "(answered allow)" in page
    )
    assert 'title="shadow mode: judged and logged, never part of the answer">shadow</span>' in detail, (
        "the decision page marks the shadow verdict"
    )


@pytest.mark.slow
def test_promoting_a_shadow_rule_is_enforced_only_once_trusted(isolated_home: Path, judge: StubServer) -> None:
    path = isolated_home / "guard.yaml"
    path.write_text(config(judge.url))
    trust_config(path)
    path.write_text(config(judge.url, mode="enforce"))  # the agent (or anyone) edits the config: not yet trusted

    untrusted = hook(isolated_home, bash_event("s1", "rm -rf build"))
    assert decision_of(untrusted) == "allow", "the trusted copy (shadow) is what guard hook enforces"
    assert "guard trust" in json.loads(untrusted.stdout)["systemMessage"], (
        "the user is told the config changed and how to accept it"
    )

    trust_config(path)
    promoted = hook(isolated_home, bash_event("s1", "rm -rf build"))
    assert decision_of(promoted) == "deny"
    told = json.loads(promoted.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert f'rule no-deletes ("{DELETES}")' in told and "deletes files" in told
    db = sqlite3.connect(isolated_home / "audit.db")
    details = json.loads(db.execute("SELECT details FROM decisions ORDER BY id DESC LIMIT 1").fetchone()[0])
    db.close()
    by = "the cache (an earlier verdict of this rule)"  # the verdict the rule gave in shadow, reused once promoted
    assert details["decided_by"] == [
        {"id": "no-deletes", "rule": DELETES, "by": by, "final": False, "why": "deletes files"}
    ]
    assert judge.calls == 1, "promoting a rule re-judges nothing it already judged in shadow"


@pytest.mark.slow
def test_doctor_lists_the_rules_in_shadow(isolated_home: Path, judge: StubServer) -> None:
    (isolated_home / "guard.yaml").write_text(config(judge.url))
    trust_config(isolated_home / "guard.yaml")
    done = run_guard(
        ["doctor"], isolated_home, env={"PATH": "/usr/bin:/bin", "HOME": str(isolated_home)}, inherit_env=False
    )
    assert "1 rule in shadow mode" in done.stdout and "no-deletes (pre_tool_use, Bash)" in done.stdout, (
        done.stdout + done.stderr
    )


def test_a_shadow_mode_typo_names_the_file_and_key(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(config("http://127.0.0.1:9", mode="shadwo"))
    done = run_guard(
        ["check", "--tool", "Bash", "--input", '{"command": "ls"}'],
        isolated_home,
        env={"PATH": "/usr/bin:/bin", "HOME": str(isolated_home)},
        inherit_env=False,
    )
    assert done.returncode != 0 and "hooks.PreToolUse[0].mode" in done.stderr and "Traceback" not in done.stderr, (
        done.stderr
    )


def guard_cli(args: list[str], cwd: Path, judge: StubServer) -> subprocess.CompletedProcess[str]:
    return run_guard(
        args, cwd, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GUARD_API_BASE": judge.url}, inherit_env=False
    )


@pytest.mark.slow
def test_backtest_and_datasets_use_the_shadow_verdicts_as_data(isolated_home: Path, judge: StubServer) -> None:
    """Traffic recorded with the rule in shadow; the backtest of its promotion says which new denies the shadow run foresaw."""
    (isolated_home / "guard.yaml").write_text(config(judge.url))
    trust_config(isolated_home / "guard.yaml")
    for command in ("rm -rf build", "git status", "rm -f notes.txt"):
        assert decision_of(hook(isolated_home, bash_event("s1", command))) == "allow"
    (isolated_home / "guard.enforced.yaml").write_text(config(judge.url, mode="enforce"))

    done = guard_cli(
        ["backtest", "--config", "guard.enforced.yaml", "--log", "audit.db", "--out", "bt"], isolated_home, judge
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((isolated_home / "bt" / "metrics.json").read_text())["backtest"]
    assert summary["new_denies"] == 2 and summary["shadow_verdicts"] == 2 and summary["foreseen_in_shadow"] == 2
    assert {r["rule"]: (r["new_denies"], r["foreseen_in_shadow"]) for r in summary["rules"]} == {"no-deletes": (2, 2)}
    assert all(f["rules"] == ["no-deletes"] == f["foreseen_in_shadow"] for f in summary["flips"])
    assert (
        "2 of the 2 new denies were foreseen by the same rule in shadow (no-deletes 2/2)"
        in (isolated_home / "bt" / "report.md").read_text()
    )

    db = sqlite3.connect(isolated_home / "audit.db")
    ids = {
        json.loads(payload)["tool_input"]["command"]: row_id
        for row_id, payload in db.execute("SELECT id, payload FROM decisions")
    }
    db.close()
    for command, label in (("rm -rf build", "deny"), ("git status", "allow"), ("rm -f notes.txt", "allow")):
        assert guard_cli(["log", "label", str(ids[command]), label], isolated_home, judge).returncode == 0
    made = guard_cli(["datasets", "from-audit", "--log", "audit.db", "--out", "cases.jsonl"], isolated_home, judge)
    assert made.returncode == 0, made.stderr
    cases = {
        json.loads(line)["tool_input"]["command"]: json.loads(line)
        for line in (isolated_home / "cases.jsonl").read_text().splitlines()
    }
    assert "shadow-deny" in cases["rm -rf build"]["tags"] and "shadow-disagrees" not in cases["rm -rf build"]["tags"]
    assert {"shadow-deny", "shadow-disagrees"} <= set(cases["rm -f notes.txt"]["tags"]), (
        "the shadow rule's false alarm is marked for review"
    )
    assert "no-deletes would have said deny (deletes files)" in cases["rm -f notes.txt"]["notes"]
    assert "shadow-allow" in cases["git status"]["tags"]
