"""``guard init`` and ``guard install`` with no config: a starter whose rules see every route, trusted only by a person.

What a user relies on: the starter's rules reach a shell call, a file write and an
edit in any client (not only Claude Code's ``Bash``); an existing config is never
replaced; and an agent that runs ``guard init`` cannot swap the enforced config.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.processes import run_guard
from fixtures.terminal import at_terminal

from guard.testing.openai_stub import Reply, StubServer

SOURCE_ROOT = str(Path(__import__("guard").__file__).resolve().parents[1])


def guard(*args: str, cwd: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    """A fresh guard process with no controlling terminal (as an agent's tool call runs it)."""
    return run_guard(list(args), cwd, stdin=stdin, env=env, no_terminal=True)


def event(client: str, tool: str, tool_input: dict[str, Any], cwd: Path) -> str:
    name = "BeforeTool" if client == "gemini" else "PreToolUse"
    return json.dumps(
        {"session_id": "s1", "hook_event_name": name, "cwd": str(cwd), "tool_name": tool, "tool_input": tool_input}
    )


@pytest.fixture
def judge() -> Iterator[StubServer]:
    with StubServer() as stub:
        stub.default = Reply.verdict("deny", "the starter rule refuses this", confidence=0.95)
        yield stub


@pytest.mark.slow
def test_init_writes_a_starter_that_loads_and_needs_a_person_to_trust_it(isolated_home: Path) -> None:
    done = guard("init", cwd=isolated_home)

    assert done.returncode == 0, done.stderr
    assert "@shell|@write|@edit|@mcp" in (isolated_home / "guard.yaml").read_text()
    assert "not trusted yet" in done.stderr  # no terminal: an agent's `guard init` cannot trust what it wrote
    hook = guard("hook", cwd=isolated_home, stdin=event("claude", "Bash", {"command": "ls"}, isolated_home))
    assert "until you trust its config" in json.loads(hook.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    doctor = guard("doctor", "--model-timeout", "1", cwd=isolated_home)
    assert "config: 2 hooks from" in doctor.stdout and "matcher:" not in doctor.stdout, doctor.stdout


def test_init_never_replaces_a_config_and_is_refused_under_an_agent(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text("hooks: {}\n")
    kept = guard("init", cwd=isolated_home)
    assert kept.returncode == 1 and "never replaces a config" in kept.stderr
    assert (isolated_home / "guard.yaml").read_text() == "hooks: {}\n"

    (isolated_home / "guard.yaml").unlink()
    refused = guard("init", cwd=isolated_home, CLAUDECODE="1")
    assert (
        refused.returncode == 1
        and "needs you, not an agent" in refused.stderr
        and not (isolated_home / "guard.yaml").exists()
    )


def test_an_agent_cannot_swap_the_trusted_config_by_deleting_it_and_running_init(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - id: users-rule\n      matcher: '@shell'\n"
        "      command: 'echo the user said no >&2; exit 2'\n"
    )
    trust_config(isolated_home / "guard.yaml")
    (isolated_home / "guard.yaml").unlink()

    assert guard("init", cwd=isolated_home).returncode == 0

    hook = guard("hook", cwd=isolated_home, stdin=event("claude", "Bash", {"command": "ls"}, isolated_home))
    out = json.loads(hook.stdout)["hookSpecificOutput"]
    assert (
        out["permissionDecision"] == "deny" and "the user said no" in out["permissionDecisionReason"]
    )  # the trusted copy holds


@pytest.mark.parametrize(
    ("client", "tool", "tool_input"),
    [
        ("claude", "Write", {"file_path": "/etc/hosts", "content": ""}),
        ("gemini", "run_shell_command", {"command": "rm -rf ~/photos"}),
        ("claude", "Edit", {"file_path": "/etc/hosts", "old_string": "a", "new_string": ""}),
        ("claude", "mcp__filesystem__write_file", {"path": "/etc/hosts", "content": ""}),
    ],
    ids=["claude-write", "gemini-shell", "claude-edit", "mcp-write"],
)
@pytest.mark.slow
def test_install_with_no_config_writes_and_trusts_a_starter_that_judges_every_route(
    client: str, tool: str, tool_input: dict[str, Any], isolated_home: Path, judge: StubServer
) -> None:
    code, shown = at_terminal(
        [sys.executable, "-m", "guard.cli.main", "install", "claude", "--no-sandbox"],
        answer=None,
        cwd=isolated_home,
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
    )  # at the user's terminal: install trusts what it wrote
    assert code == 0, shown
    assert "wrote" in shown and "trusted" in shown and "is not trusted" not in shown, shown
    assert "@fetch" in shown and (isolated_home / "guard-cases.jsonl").exists(), (
        "install writes guard init's starter as init does: its labeled calls too, its routes named as they are"
    )

    hook = guard(
        "hook",
        "--format",
        client,
        cwd=isolated_home,
        stdin=event(client, tool, tool_input, isolated_home),
        GUARD_API_BASE=judge.url,
    )

    out = json.loads(hook.stdout)
    reason = out["reason"] if client == "gemini" else out["hookSpecificOutput"]["permissionDecisionReason"]
    assert "the starter rule refuses this" in reason and judge.calls >= 1


@pytest.mark.slow
def test_the_starter_judges_a_shell_read_for_secrets_only(isolated_home: Path, judge: StubServer) -> None:
    """A proven read cannot delete or overwrite, so no-destructive-changes skips it; it can print a secret, so
    no-secret-leaks judges it, in a request of its own; a write is judged by both rules, in one request."""
    assert guard("init", cwd=isolated_home).returncode == 0
    trust_config(isolated_home / "guard.yaml")
    (isolated_home / "notes.txt").write_text("notes\n")
    for command, rules in (
        ("cat notes.txt", {"no-secret-leaks"}),
        ("rm notes.txt", {"no-secret-leaks", "no-destructive-changes"}),
    ):
        asked = judge.calls
        hook = guard(
            "hook",
            cwd=isolated_home,
            stdin=event("claude", "Bash", {"command": command}, isolated_home),
            GUARD_API_BASE=judge.url,
        )
        assert json.loads(hook.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", hook.stdout
        assert judge.calls == asked + 1, command
        shown = json.dumps(judge.requests[-1]["messages"])
        judged = {
            rule
            for rule, words in (("no-secret-leaks", "send credentials"), ("no-destructive-changes", "uncommitted work"))
            if words in shown
        }
        assert judged == rules, command


@pytest.mark.slow
def test_init_writes_labeled_cases_that_guard_eval_scores_on_day_one(isolated_home: Path, judge: StubServer) -> None:
    """The contract's ``guard init`` writes a small dataset of its own cases: a new user can measure the starter before trusting it."""
    done = guard("init", cwd=isolated_home)
    assert done.returncode == 0 and (isolated_home / "guard-cases.jsonl").exists(), done.stderr
    check = guard("datasets", "check", "--strict", "guard-cases.jsonl", cwd=isolated_home)
    assert check.returncode == 0 and "rules guard.yaml" in check.stdout, check.stdout + check.stderr
    judge.default = Reply.verdict("allow", "fine", confidence=0.95)
    scored = guard(
        "eval",
        "guard-cases.jsonl",
        "--depth",
        "quick",
        "--out",
        "out",
        cwd=isolated_home,
        GUARD_API_BASE=judge.url,
        GUARD_MODEL_QUICK="stub",
        GUARD_MODEL_THOROUGH="stub",
    )
    assert scored.returncode in (0, 100), (
        scored.stdout + scored.stderr
    )  # an allow-everything judge may fail a gate, never error
    rows = [json.loads(line) for line in (isolated_home / "out" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and not any(row.get("error") for row in rows)
    # no-destructive-changes skips proven reads (a read cannot delete or overwrite): git status && git diff --stat is
    # decided in the read-only lane; every other case, no-secret-leaks' read of .env.example too, is judged
    lane = {row["case_id"] for row in rows if row.get("tier") == "read_only"}
    assert lane == {"starter-0007"} and judge.calls == 11
    again = guard("init", cwd=isolated_home)
    assert again.returncode == 1 and len((isolated_home / "guard-cases.jsonl").read_text().splitlines()) == 12
