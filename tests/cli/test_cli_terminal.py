"""The CLI at a terminal (a real pseudo-terminal) and in a pipe: tables and colour for a person, stable plain lines for scripts."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.processes import run_guard
from test_cli_output import closed_pipe_run

from guard.audit import AuditLog
from guard.core.decision import Decision, HookResult
from guard.testing.openai_stub import Reply, StubServer

ESC = "\x1b["
CONFIG = "audit:\n  path: state/audit.db\ncache:\n  url: sqlite:///state/cache.db\n"


def in_terminal(args: list[str], cwd: Path, **env: str) -> tuple[int, str]:
    """``guard ARGS`` with stdout on a pseudo-terminal, as a person runs it; (exit code, what the terminal showed)."""
    leader, follower = pty.openpty()
    environ = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "200", **env}
    environ.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "guard.cli.main", *args], stdout=follower, stderr=subprocess.PIPE, cwd=cwd, env=environ
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the process closed its end
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    proc.wait(timeout=120)
    return proc.returncode, shown.decode("utf-8", "replace")


def piped(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_guard(args, cwd, timeout=120)


@pytest.fixture
def logged(isolated_home: Path) -> Path:
    """Two decisions in the audit log, the deny first, the allow newest."""
    (isolated_home / "guard.yaml").write_text(CONFIG)
    log = AuditLog(isolated_home / "state" / "audit.db")
    deny = [
        HookResult(
            id="no-rm",
            type="smart",
            decision="deny",
            reason="deletes home",
            tier="quick",
            model="openai/stub",
            latency_ms=412.0,
        )
    ]
    log.record(
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf ~"}},
        Decision("deny", "deletes home", hooks=deny),
        latency_ms=415.0,
    )
    allow = [HookResult(id="no-rm", type="smart", decision="allow", cached=True)]
    log.record({"hook_event_name": "PreToolUse", "tool_name": "Read"}, Decision(hooks=allow), latency_ms=2.0)
    return isolated_home


def test_guard_log_at_a_terminal_is_a_coloured_table_newest_first(logged: Path) -> None:
    code, shown = in_terminal(["log"], logged)
    assert code == 0 and ESC in shown, shown
    assert "\x1b[1;31mdeny" in shown and "\x1b[32mallow" in shown  # the verdicts in colour
    assert shown.index("Read") < shown.index("Bash")  # newest first
    plain = piped(["log"], logged)
    assert ESC not in plain.stdout and plain.stdout.splitlines()[0].startswith("#2 ")


def test_guard_log_json_is_one_object_per_line_so_head_gets_the_newest(logged: Path) -> None:
    done = piped(["log", "--json"], logged)
    first = done.stdout.splitlines()[0]
    assert json.loads(first)["tool"] == "Read"  # `guard log --json | head -1` printed "["
    assert closed_pipe_run(["log", "--json"], logged).returncode == 141  # and a reader leaving early costs no traceback
    oldest = piped(["log", "--json", "--reverse"], logged).stdout.splitlines()[0]
    assert json.loads(oldest)["tool"] == "Bash"


def test_guard_log_usage_does_not_make_the_subcommand_look_required(isolated_home: Path) -> None:
    usage = piped(["log", "--help"], isolated_home).stdout.splitlines()[0]
    assert usage.endswith("[label ID VERDICT | verify | ship]") and "SUBCOMMAND" not in usage


def test_guard_log_ship_with_the_audit_log_off_says_so(isolated_home: Path) -> None:
    """A store configured while the log itself is off: there is nothing to ship, said in one line, not a traceback."""
    (isolated_home / "guard.yaml").write_text("audit:\n  enabled: false\n  url: postgresql://localhost/guard\n")
    shipped = piped(["log", "ship"], isolated_home)
    assert shipped.returncode == 1, shipped.stderr
    assert shipped.stderr.strip() == "guard: the audit log is off (audit.enabled: false): there is nothing to ship"


def test_a_hostile_reason_cannot_drive_the_terminal(isolated_home: Path) -> None:
    """The reason and the tool input come from the agent: no escape sequence or rich markup of theirs reaches the terminal."""
    (isolated_home / "guard.yaml").write_text(CONFIG)
    hostile = "\x1b]0;pwned\x07\x1b[2J[bold]not bold[/bold]"
    AuditLog(isolated_home / "state" / "audit.db").record(
        {"hook_event_name": "PreToolUse", "tool_name": "Bash"},
        Decision("deny", hostile, hooks=[HookResult(id="r", type="command", decision="deny", reason=hostile)]),
        latency_ms=1.0,
    )
    code, shown = in_terminal(["log"], isolated_home)
    assert code == 0
    assert "\x1b]0;pwned" not in shown and "\x1b[2J" not in shown
    assert "\\x1b]0;pwned" in shown and "[bold]not bold[/bold]" in shown


@pytest.mark.slow
def test_doctor_check_and_cache_stats_colour_a_terminal_only(isolated_home: Path) -> None:
    with StubServer(default=Reply.verdict("deny", "deletes the home folder")) as stub:
        (isolated_home / "guard.yaml").write_text(
            CONFIG
            + f"models:\n  quick: openai/stub\n  api_base: {stub.url}\nhooks:\n  PreToolUse:\n    - id: r\n      rule: Deny deleting files.\n      depth: quick\n"
        )
        check = ["check", "--tool", "Bash", "--input", '{"command": "rm -rf /srv"}']
        code, shown = in_terminal(check, isolated_home)
        assert code == 1 and "\x1b[1;31mdeny" in shown, shown
        assert ESC not in piped(check, isolated_home).stdout
        code, shown = in_terminal(["doctor"], isolated_home)
        assert "\x1b[32mok" in shown and "\x1b[33mWARN" in shown, shown
        assert ESC not in piped(["doctor"], isolated_home).stdout
    code, shown = in_terminal(["cache", "stats"], isolated_home)
    assert code == 0 and ESC in shown and "hit ratio" in shown
    assert ESC not in piped(["cache", "stats"], isolated_home).stdout
