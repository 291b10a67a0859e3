"""``guard hook`` and ``guard check`` as a user runs them: fresh processes, stdin in, stdout out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PRE = {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git push --force origin main"}, "cwd": "/tmp"}

POLICY = """
import guard

def no_force_push(event):
    if "--force" in event.tool_input.get("command", ""):
        return guard.deny("force-push rewrites shared history")

def dry_run(event):
    return guard.rewrite({**event.tool_input, "command": event.tool_input["command"] + " --dry-run"})
"""

PROBE = (
    "import sys, json\n"
    "from guard.cli.main import main\n"
    "rc = main(sys.argv[1:])\n"
    "sys.stderr.write('MODULES ' + json.dumps(sorted(m for m in ('pydantic', 'asyncio', 'litellm', 'yaml', 'httpx', 'pandas') if m in sys.modules)) + '\\n')\n"
    "sys.exit(rc)\n"
)


def guard_run(args: list[str], stdin: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(cwd), **env}
    return subprocess.run([sys.executable, "-c", PROBE, *args], input=stdin, capture_output=True, text=True, cwd=cwd, env=environ, timeout=60)


def modules(proc: subprocess.CompletedProcess[str]) -> list[str]:
    line = [l for l in proc.stderr.splitlines() if l.startswith("MODULES ")][-1]
    return json.loads(line[len("MODULES "):])


@pytest.fixture
def project(isolated_home: Path) -> Path:
    (isolated_home / "policy.py").write_text(POLICY)
    (isolated_home / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - id: no-force-push\n      matcher: Bash\n      callable: policy:no_force_push\n"
    )
    return isolated_home


def test_callable_hook_denies_in_claude_format(project: Path) -> None:
    proc = guard_run(["hook", "--format", "claude"], json.dumps(PRE), project)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out == {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "force-push rewrites shared history"}


def test_devin_format(project: Path) -> None:
    proc = guard_run(["hook", "--format", "devin"], json.dumps({**PRE, "tool_name": "Bash"}), project)
    assert json.loads(proc.stdout) == {"decision": "block", "reason": "force-push rewrites shared history"}


def test_no_matching_hook_prints_nothing_and_loads_nothing_heavy(project: Path) -> None:
    event = json.dumps({**PRE, "tool_name": "Read", "tool_input": {"file_path": "README.md"}})
    guard_run(["hook"], event, project)  # first run compiles the config snapshot
    proc = guard_run(["hook"], event, project)
    assert proc.returncode == 0 and proc.stdout == ""
    assert modules(proc) == []  # no pydantic, asyncio, litellm, yaml, httpx, pandas on the no-match path


def test_rewrite_through_the_cli_returns_the_whole_input(project: Path) -> None:
    (project / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - matcher: Bash\n      callable: policy:dry_run\n")
    proc = guard_run(["hook"], json.dumps({**PRE, "tool_input": {"command": "make deploy", "description": "d"}}), project)
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["updatedInput"] == {"command": "make deploy --dry-run", "description": "d"}


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", json.dumps({"tool_name": "Bash"}), json.dumps({"hook_event_name": 3})])
def test_malformed_event_exits_1_with_a_message_and_no_traceback(project: Path, stdin: str) -> None:
    proc = guard_run(["hook"], stdin, project)
    assert proc.returncode == 1
    assert "guard hook: malformed event:" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_malformed_event_blocks_with_fail_closed(project: Path) -> None:
    assert guard_run(["hook", "--fail-closed"], "nope", project).returncode == 2
    assert guard_run(["hook"], "nope", project, GUARD_FAIL_CLOSED="1").returncode == 2


def test_bad_config_is_a_clear_error(project: Path) -> None:
    (project / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - matcher: Bash\n      timeout: 0\n      command: x\n")
    proc = guard_run(["hook"], json.dumps(PRE), project)
    assert proc.returncode == 1 and "guard.yaml: hooks.PreToolUse[0].timeout" in proc.stderr and "Traceback" not in proc.stderr


def test_check_exit_codes_and_json(project: Path) -> None:
    deny = guard_run(["check", "--tool", "Bash", "--input", '{"command": "git push --force"}', "--json"], "", project)
    assert deny.returncode == 1
    body = json.loads(deny.stdout)
    assert body["decision"] == "deny" and body["hooks"][0]["type"] == "callable"
    allow = guard_run(["check", "--tool", "Bash", "--input", '{"command": "git status"}'], "", project)
    assert allow.returncode == 0 and "decision: allow" in allow.stdout
    bad = guard_run(["check", "--tool", "Bash", "--input", "{oops"], "", project)
    assert bad.returncode == 3 and "--input is not valid JSON" in bad.stderr


def test_check_without_a_model_names_the_variables(project: Path) -> None:
    proc = guard_run(["check", "--rule", "Deny deleting files", "--tool", "Bash", "--input", '{"command": "rm -rf ~"}'], "", project)
    assert proc.returncode == 3
    assert "GUARD_MODEL_QUICK" in proc.stderr


def _crash_in_process(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], failure_mode: str) -> tuple[int, str, str]:
    import io

    from guard.cli.main import main
    from guard.engine import Engine

    (project / "guard.yaml").write_text(f"hooks:\n  PreToolUse:\n    - matcher: Bash\n      failure_mode: {failure_mode}\n      callable: policy:no_force_push\n")
    monkeypatch.syspath_prepend(str(project))

    def broken(self: Engine, event: object) -> None:
        raise RuntimeError("bug in guard")

    monkeypatch.setattr(Engine, "decide_sync", broken)
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(PRE)))
    code = main(["hook"])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_an_internal_error_denies_when_a_matching_hook_is_fail_closed(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _crash_in_process(project, monkeypatch, capsys, "fail_closed")
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "internal error: RuntimeError" in err


def test_an_internal_error_with_fail_open_hooks_is_a_visible_non_blocking_error(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _crash_in_process(project, monkeypatch, capsys, "fail_open")
    assert code == 1 and out == "" and "bug in guard" in err


def test_a_cache_hit_loads_nothing_heavy(isolated_home: Path) -> None:
    from guard.testing.openai_stub import Reply, StubServer

    (isolated_home / "guard.yaml").write_text(
        "models: {quick: openai/stub-quick}\n"
        "hooks:\n  PreToolUse:\n    - id: no-delete\n      matcher: Bash\n      depth: quick\n      timeout: 60\n"
        "      rule: Deny shell commands that delete files outside the project.\n"
    )
    event = json.dumps({**PRE, "tool_input": {"command": "rm -rf ~/photos"}})
    with StubServer() as stub:
        stub.default = Reply.verdict("deny", "deletes a home folder", confidence=0.95)
        miss = guard_run(["hook"], event, isolated_home, GUARD_API_BASE=stub.url)
        hit = guard_run(["hook"], json.dumps({**json.loads(event), "session_id": "another-session"}), isolated_home, GUARD_API_BASE=stub.url)
        assert stub.calls == 1  # the second call (another session, same tool call) was a cache hit
    for proc in (miss, hit):
        assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    assert "litellm" in modules(miss)
    assert modules(hit) == []  # no litellm, pydantic, asyncio, yaml, httpx or pandas on a cache hit
