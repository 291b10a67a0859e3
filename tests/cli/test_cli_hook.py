"""``guard hook`` and ``guard check`` as a user runs them: fresh processes, stdin in, stdout out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.processes import HEAVY, POLICY, SOURCE_ROOT, guard_modules, modules, probed, run_guard, threads_started  # noqa: F401

PRE = {
    "session_id": "s1",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "git push --force origin main"},
    "cwd": "/tmp",
}


pytestmark = pytest.mark.project(
    files={"policy.py": POLICY},
    config="hooks:\n  PreToolUse:\n    - id: no-force-push\n      matcher: Bash\n      callable: policy:no_force_push\n",
)


def test_callable_hook_denies_in_claude_format(project: Path) -> None:
    proc = run_guard(["hook", "--format", "claude"], project, stdin=json.dumps(PRE), probe=True)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    told = (
        'guard denied this call: rule no-force-push ("policy:no_force_push"), decided by callable hook no-force-push: '
        "force-push rewrites shared history. This block is final: do not retry this in another form; ask the user."
    )
    assert out["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": told,
    }
    assert out["systemMessage"] == "guard denied Bash: rule no-force-push (callable hook no-force-push); final.", (
        "the user sees the rule too"
    )


def test_devin_format(project: Path) -> None:
    proc = run_guard(["hook", "--format", "devin"], project, stdin=json.dumps({**PRE, "tool_name": "Bash"}), probe=True)
    out = json.loads(proc.stdout)
    assert (
        out["decision"] == "block"
        and "rule no-force-push" in out["reason"]
        and "force-push rewrites shared history" in out["reason"]
    )
    assert "This block is final" in out["reason"] and "rule no-force-push" in out["systemMessage"], (
        "Devin shows the agent and the user"
    )


def test_no_matching_hook_prints_nothing_and_loads_nothing_heavy(project: Path) -> None:
    event = json.dumps({**PRE, "tool_name": "Read", "tool_input": {"file_path": "README.md"}})
    run_guard(["hook"], project, stdin=event, probe=True)  # first run compiles the config snapshot
    proc = run_guard(["hook"], project, stdin=event, probe=True)
    assert proc.returncode == 0 and proc.stdout == ""
    assert modules(proc) == []  # none of HEAVY on the no-match path
    assert threads_started(proc) == []  # nothing to wait for: the deadline watchdog is not armed


def test_rewrite_through_the_cli_returns_the_whole_input(project: Path) -> None:
    (project / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - matcher: Bash\n      callable: policy:dry_run\n")
    trust_config(project / "guard.yaml")
    proc = run_guard(
        ["hook"],
        project,
        stdin=json.dumps({**PRE, "tool_input": {"command": "make deploy", "description": "d"}}),
        probe=True,
    )
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["updatedInput"] == {"command": "make deploy --dry-run", "description": "d"}


MALFORMED = [
    "",
    "not json",
    "[1, 2]",
    json.dumps({"tool_name": "Bash"}),
    json.dumps({"hook_event_name": 3}),
    "{" * 5000 + "}" * 5000,
    json.dumps({**PRE, "tool_name": ["Bash"]}),
    json.dumps({**PRE, "tool_input": "rm -rf /"}),
]
#: over the nesting and the size limit: the agent chose them, so no failure_mode lets them through
TOO_LARGE = [
    '{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": ' + "[" * 1000 + "]" * 1000 + "}",
    json.dumps({**PRE, "tool_input": {"command": "ls", "padding": "x" * (9 * 1024 * 1024)}}),
]


@pytest.mark.slow
@pytest.mark.parametrize("stdin", MALFORMED)
def test_a_malformed_event_under_fail_open_hooks_is_allowed_visibly(project: Path, stdin: str) -> None:
    proc = run_guard(["hook"], project, stdin=stdin, probe=True)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    shown = json.loads(proc.stdout)["systemMessage"]  # Claude Code shows this line to the user
    assert "malformed event" in shown and "malformed event" in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("stdin", TOO_LARGE, ids=["too deep", "over 8 MiB"])
def test_an_event_too_large_to_judge_is_refused_under_fail_open_hooks(project: Path, stdin: str) -> None:
    """An 8 MiB or 1,000-level event was allowed under the default fail_open, on the agent's own say-so."""
    proc = run_guard(["hook"], project, stdin=stdin, probe=True)
    assert "Traceback" not in proc.stderr
    if proc.returncode == 2:  # the event name could not be read: exit 2 blocks whatever the call was
        assert "too large to judge" in proc.stderr and proc.stdout == ""
    else:
        out = json.loads(proc.stdout)["hookSpecificOutput"]
        assert (
            proc.returncode == 0
            and out["permissionDecision"] == "deny"
            and "too large to judge" in out["permissionDecisionReason"]
        )


@pytest.mark.slow
@pytest.mark.parametrize("stdin", MALFORMED + TOO_LARGE, ids=lambda stdin: stdin[:40])
def test_a_malformed_event_blocks_under_fail_closed(project: Path, stdin: str) -> None:
    for proc in (
        run_guard(["hook", "--fail-closed"], project, stdin=stdin, probe=True),
        run_guard(["hook"], project, stdin=stdin, env={"GUARD_FAIL_CLOSED": "1"}, probe=True),
    ):
        assert "Traceback" not in proc.stderr
        if proc.returncode == 2:  # the event itself could not be read: exit 2 blocks whatever it was
            assert "malformed event" in proc.stderr and proc.stdout == ""
        else:
            out = json.loads(proc.stdout)["hookSpecificOutput"]
            assert (
                proc.returncode == 0
                and out["permissionDecision"] == "deny"
                and "malformed event" in out["permissionDecisionReason"]
            )


def test_a_fail_closed_hook_blocks_a_malformed_call_to_its_tool(project: Path) -> None:
    (project / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      failure_mode: fail_closed\n      callable: policy:no_force_push\n"
    )
    trust_config(project / "guard.yaml")
    proc = run_guard(["hook"], project, stdin=json.dumps({**PRE, "tool_name": {"name": "Bash"}}), probe=True)
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert (
        out["permissionDecision"] == "deny" and "field 'tool_name' must be a string" in out["permissionDecisionReason"]
    )


def test_a_lone_surrogate_is_judged_and_audited(project: Path) -> None:
    (project / "guard.yaml").write_text(
        "audit: {path: audit.db}\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      callable: policy:no_force_push\n"
    )
    trust_config(project / "guard.yaml")
    proc = run_guard(
        ["hook"],
        project,
        stdin='{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git push --force \\ud800"}}',
        probe=True,
    )
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    import sqlite3

    rows = sqlite3.connect(project / "audit.db").execute("SELECT decision, payload, details FROM decisions").fetchall()
    assert len(rows) == 1 and rows[0][0] == "deny" and "\ufffd" in rows[0][1] and "payload_repaired" in rows[0][2]


@pytest.mark.slow
def test_a_config_typo_blocks_tool_calls_and_names_the_key(isolated_home: Path) -> None:
    project = isolated_home / "fresh"  # never trusted: a config the user trusted keeps being enforced (test_trust.py)
    project.mkdir()
    (project / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      failur_mode: fail_closed\n      callable: policy:no_force_push\n"
    )
    proc = run_guard(["hook"], project, stdin=json.dumps({**PRE, "tool_name": "Read"}), probe=True)
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert proc.returncode == 0 and out["permissionDecision"] == "deny"
    assert (
        "guard.yaml: hooks.PreToolUse[0].failur_mode" in out["permissionDecisionReason"]
        and "Traceback" not in proc.stderr
    )
    prompt = run_guard(
        ["hook"], project, stdin=json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "hi"}), probe=True
    )
    assert (
        prompt.returncode == 0 and "failur_mode" in json.loads(prompt.stdout)["systemMessage"]
    )  # not blocked, but shown
    relaxed = run_guard(["hook"], project, stdin=json.dumps(PRE), env={"GUARD_FAIL_OPEN": "1"}, probe=True)
    assert relaxed.returncode == 0 and "failur_mode" in json.loads(relaxed.stdout)["systemMessage"]
    assert "hookSpecificOutput" not in json.loads(relaxed.stdout)


def test_no_config_allows_with_a_warning(isolated_home: Path) -> None:
    proc = run_guard(["hook"], isolated_home, stdin=json.dumps(PRE), probe=True)
    assert proc.returncode == 0 and "no guard config found" in json.loads(proc.stdout)["systemMessage"]
    check = run_guard(["check", "--tool", "Bash", "--input", "{}"], isolated_home, probe=True)
    assert check.returncode == 3 and "NOT JUDGED" in check.stdout and "no guard config found" in check.stderr


@pytest.mark.slow
def test_the_deadline_answers_before_the_client_kills_guard(project: Path) -> None:
    import time

    (project / "policy.py").write_text(POLICY + "\nimport time\ndef stuck(event):\n    time.sleep(120)\n")
    for mode, expected in (("fail_closed", "deny"), ("fail_open", None)):
        (project / "guard.yaml").write_text(
            f"hooks:\n  PreToolUse:\n    - matcher: Bash\n      timeout: 60\n      failure_mode: {mode}\n      callable: policy:stuck\n"
        )
        trust_config(project / "guard.yaml")
        started = time.monotonic()
        proc = run_guard(["hook", "--deadline", "3"], project, stdin=json.dumps(PRE), probe=True)
        assert time.monotonic() - started < 3.0, "guard answered after the client's timeout"
        out = json.loads(proc.stdout)
        assert out.get("hookSpecificOutput", {}).get("permissionDecision") == expected
        if expected is None:
            assert "deadline" in out["systemMessage"]


@pytest.mark.slow
def test_check_exit_codes_and_json(project: Path) -> None:
    deny = run_guard(
        ["check", "--tool", "Bash", "--input", '{"command": "git push --force"}', "--json"], project, probe=True
    )
    assert deny.returncode == 1
    body = json.loads(deny.stdout)
    assert body["decision"] == "deny" and body["hooks"][0]["type"] == "callable"
    allow = run_guard(["check", "--tool", "Bash", "--input", '{"command": "git status"}'], project, probe=True)
    assert allow.returncode == 0 and "decision: allow" in allow.stdout
    bad = run_guard(["check", "--tool", "Bash", "--input", "{oops"], project, probe=True)
    assert bad.returncode == 3 and "--input is not valid JSON" in bad.stderr


def test_check_without_a_model_names_the_variables(project: Path) -> None:
    proc = run_guard(
        ["check", "--rule", "Deny deleting files", "--tool", "Bash", "--input", '{"command": "rm -rf ~"}'],
        project,
        probe=True,
    )
    assert proc.returncode == 3
    assert "GUARD_MODEL_QUICK" in proc.stderr


def _crash_in_process(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], failure_mode: str
) -> tuple[int, str, str]:
    import io

    from guard.cli.main import main
    from guard.runtime.deciders import LocalEngine

    (project / "guard.yaml").write_text(
        f"hooks:\n  PreToolUse:\n    - matcher: Bash\n      failure_mode: {failure_mode}\n      callable: policy:no_force_push\n"
    )
    trust_config(project / "guard.yaml")
    monkeypatch.syspath_prepend(str(project))

    def broken(self: LocalEngine, *args: object) -> None:
        raise RuntimeError("bug in guard")

    monkeypatch.setattr(LocalEngine, "decide", broken)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(json.dumps(PRE).encode())))
    code = main(["hook"])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_an_internal_error_denies_when_a_matching_hook_is_fail_closed(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _crash_in_process(project, monkeypatch, capsys, "fail_closed")
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "internal error: RuntimeError" in json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]


def test_an_internal_error_with_fail_open_hooks_is_a_visible_allow(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _crash_in_process(project, monkeypatch, capsys, "fail_open")
    assert code == 0 and "bug in guard" in json.loads(out)["systemMessage"] and "bug in guard" in err


def test_guard_hook_called_in_process_returns_while_another_thread_runs(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the process's own entry ends the process past a hung thread: a test run or an embedding program calling
    ``main(["hook"])`` gets the exit code back (it once ended the whole test session with exit 0, mid-run)."""
    import threading

    release = threading.Event()
    waiting = threading.Thread(target=release.wait, name="still-running")  # not a daemon: what a hung hook leaves
    waiting.start()
    try:
        code, out, _ = _crash_in_process(project, monkeypatch, capsys, "fail_closed")
        assert code == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    finally:
        release.set()
        waiting.join()


@pytest.mark.parametrize("args", [["hook", "--format", "windsurf"], ["hook", "--bogus"], ["hook", "--deadline", "abc"]])
def test_a_broken_hook_command_blocks_instead_of_letting_calls_through(project: Path, args: list[str]) -> None:
    """A typo in the installed command line: exit 2, which every client reads as "block", with the reason on stderr."""
    proc = run_guard(args, project, stdin=json.dumps(PRE))
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.strip()


@pytest.mark.slow
def test_a_locked_decision_cache_does_not_outlast_the_deadline(project: Path) -> None:
    """An agent holding a write lock on the cache must not make guard miss the client's timeout (the client would run the call)."""
    import sqlite3
    import time

    (project / "guard.yaml").write_text(
        "models: {quick: openai/stub-quick}\ncache: {url: 'sqlite:///cache.db'}\n"
        "hooks:\n  PreToolUse:\n    - {id: strict, matcher: Bash, depth: quick, failure_mode: fail_closed, rule: Deny deletes.}\n"
    )
    trust_config(project / "guard.yaml")
    run_guard(
        ["hook"], project, stdin=json.dumps(PRE), env={"GUARD_API_BASE": "http://127.0.0.1:9/v1"}, probe=True
    )  # creates cache.db
    lock = sqlite3.connect(project / "cache.db", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        proc = run_guard(
            ["hook", "--deadline", "4"],
            project,
            stdin=json.dumps(PRE),
            env={"GUARD_API_BASE": "http://127.0.0.1:9/v1"},
            probe=True,
        )
        took = time.monotonic() - started
    finally:
        lock.rollback()
    assert took < 4.0, f"guard answered after the client's timeout ({took:.1f}s)"
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr


@pytest.mark.slow
def test_a_locked_audit_log_does_not_turn_a_deny_into_the_failure_policy(project: Path, isolated_home: Path) -> None:
    """The decision is made, its audit row cannot be written before the deadline: the watchdog answers that decision, not fail_open's allow."""
    import sqlite3

    run_guard(["hook"], project, stdin=json.dumps(PRE), probe=True)  # creates the audit log
    (log,) = (isolated_home.parent / "home" / ".local" / "state" / "guard").glob("projects/*/audit.db")
    lock = sqlite3.connect(log, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        proc = run_guard(["hook", "--deadline", "4"], project, stdin=json.dumps(PRE), probe=True)
    finally:
        lock.rollback()
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stdout + proc.stderr
