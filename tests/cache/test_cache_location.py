"""The default decision cache is keyed by what was judged, not by where the config lives.

Through real ``guard hook`` and ``guard backtest`` processes against the loopback stub:
a renamed config finds its verdicts, and a backtest of a config that changes one rule
asks the model only about that rule.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.processes import run_guard

from guard.testing.openai_stub import Reply, StubServer

KEPT = "Never force-push to a shared branch."
OLD = "Never delete files outside the project."
NEW = "Never delete files outside the project or the temp folder."


def config(*rules: str) -> str:
    hooks = "".join(
        f"    - id: rule{n}\n      matcher: Bash\n      depth: quick\n      rule: {rule}\n"
        for n, rule in enumerate(rules)
    )
    return "models:\n  quick: openai/stub-judge\nhooks:\n  PreToolUse:\n" + hooks  # no cache.url: the default cache


def guard(
    args: list[str], project: Path, stub: StubServer, event: dict[str, object] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_guard(
        args, project, stdin=None if event is None else json.dumps(event), env={"GUARD_API_BASE": stub.url}
    )


def bash(command: str) -> dict[str, object]:
    return {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "cwd": "/home/u/app",
    }


def judged_rules(stub: StubServer) -> list[str]:
    """The rules the stub was asked to judge: one per request, or several in one (guard's together prompts list them as JSON)."""
    asked = [body["messages"][-1]["content"] for body in stub.requests]
    return [
        rule for text in asked for rule in (KEPT, OLD, NEW) if f"Rule: {rule}\n" in text or json.dumps(rule) in text
    ]


@pytest.mark.slow
def test_a_renamed_config_finds_its_verdicts(isolated_home: Path) -> None:
    with StubServer(default=Reply.verdict("deny", "deletes outside the project", confidence=0.95)) as stub:
        (isolated_home / "guard.yaml").write_text(config(OLD))
        trust_config(isolated_home / "guard.yaml")
        first = guard(["hook"], isolated_home, stub, bash("rm -rf /home/u/other"))
        assert "deletes outside the project" in first.stdout, first.stderr
        assert stub.calls == 1

        (isolated_home / "guard.yaml").rename(isolated_home / "team.yaml")
        trust_config(isolated_home / "team.yaml")
        again = guard(["hook", "--config", "team.yaml"], isolated_home, stub, bash("rm -rf /home/u/other"))
        assert json.loads(again.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", again.stderr
        assert stub.calls == 1  # the same rule judging the same call: the verdict is found, not asked for again


@pytest.mark.slow
def test_backtest_of_a_new_config_judges_only_the_rule_that_changed(isolated_home: Path) -> None:
    with StubServer(default=Reply.verdict("allow", "fine", confidence=0.95)) as stub:
        (isolated_home / "guard.yaml").write_text(config(KEPT, OLD))
        trust_config(isolated_home / "guard.yaml")
        for command in ("ls", "git push origin main", "rm -rf build"):
            assert guard(["hook"], isolated_home, stub, bash(command)).returncode == 0
        assert sorted(judged_rules(stub)) == sorted([KEPT, OLD] * 3)

        stub.requests.clear()
        (isolated_home / "new.yaml").write_text(config(KEPT, NEW))
        proc = guard(["backtest", "--config", "new.yaml", "--out", "bt"], isolated_home, stub)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert judged_rules(stub) == [NEW] * 3  # the unchanged rule's verdicts come from the cache
        assert "3 verdict(s) reused" in proc.stdout
