"""SKILL.md hooks: parsing with per-entry skips, explicit selection, run-scoped mounting."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.webhook import Receiver

from guard.core.errors import ConfigError
from guard.core.settings import Settings
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry
from guard.runtime.skills import load_skill, mount_selected, mount_skill, select_skills

LOCAL = Settings(allow_networks=("127.0.0.0/8",), audit_path=None)
BASH = {
    "hook_event_name": "PreToolUse",
    "session_id": "s",
    "tool_name": "bash_code_execute_tool",
    "tool_input": {"command": "ls"},
}

SKILL = """---
name: audit-skill
description: audits every shell call
hooks:
  BeforeToolUse:
    - script: 'echo "$ARGUMENTS" >> audit.log'
      tools: ["bash_*"]
    - url: http://127.0.0.1:9/audit
      id: remote-audit
      tools: bash_*
      failure_mode: fail_open
      timeout: 5
  SessionEnd:
    - url: https://ops.example.com/agent-webhook
      secret: ${OPS_WEBHOOK_SECRET}
      fire_and_forget: true
  Stop:
    - prompt: "Did the agent do what the user asked? $ARGUMENTS"
---
# Audit skill
Body text is not parsed.
"""


def write_skill(tmp_path: Path, text: str, name: str = "audit-skill") -> Path:
    path = tmp_path / "skills" / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_frontmatter_hooks_become_external_specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPS_WEBHOOK_SECRET", "from-env")
    skill = load_skill(write_skill(tmp_path, SKILL))
    assert skill.name == "audit-skill" and skill.warnings == ()
    script, remote, notify, judge = skill.specs
    assert (script.kind, script.event, script.options["command"], script.tools) == (
        "command",
        "pre_tool_use",
        'echo "$ARGUMENTS" >> audit.log',
        ("bash_*",),
    )
    assert (remote.id, remote.kind, remote.tools, remote.timeout, remote.failure_mode) == (
        "skill:audit-skill:remote-audit",
        "http",
        ("bash_*",),
        5,
        "fail_open",
    )
    assert (notify.event, notify.options["secret"], notify.fire_and_forget) == ("session_end", "from-env", True)
    assert (judge.kind, judge.event, judge.options["prompt"]) == (
        "smart",
        "stop",
        "Did the agent do what the user asked? $ARGUMENTS",
    )
    assert all(s.source == "skill" and s.external for s in skill.specs)
    assert [s.failure_mode for s in (script, notify, judge)] == [
        "fail_closed"
    ] * 3  # external: closed unless said otherwise
    assert script.id == "skill:audit-skill:BeforeToolUse[0]"


GOOD = "    - script: ./good.sh\n"
BROKEN = [
    ("  OnMagic:\n    - script: x\n", "hooks.OnMagic: unknown event"),
    ("  Notification:\n    - script: x\n", "hooks.Notification: unknown event"),
    ("  PostToolUse:\n    script: x\n", "hooks.PostToolUse: must be a list"),
    ("  PostToolUse:\n    - echo hi\n", "hooks.PostToolUse[0]: a hook entry must be a mapping"),
    ("  PostToolUse:\n    - script: x\n      tools: 5\n", "hooks.PostToolUse[0].tools"),
    ("  PostToolUse:\n    - script: x\n      tools: []\n", "hooks.PostToolUse[0].tools"),
    ("  PostToolUse:\n    - script: x\n      tools: [1, 2]\n", "hooks.PostToolUse[0].tools"),
    ("  PostToolUse:\n    - script: x\n      timeout: 0\n", "hooks.PostToolUse[0].timeout"),
    ("  PostToolUse:\n    - script: x\n      timeout: 601\n", "hooks.PostToolUse[0].timeout"),
    ("  PostToolUse:\n    - script: x\n      failure_mode: sometimes\n", "hooks.PostToolUse[0].failure_mode"),
    ("  PostToolUse:\n    - script: x\n      url: https://a.example/\n", "exactly one of"),
    ("  PostToolUse:\n    - tools: bash_*\n", "exactly one of"),
    ("  PostToolUse:\n    - command: rm -rf /\n", "unsupported key(s) command"),
    ("  PostToolUse:\n    - callable: os:system\n", "unsupported key(s) callable"),
    (
        "  PostToolUse:\n    - url: https://a.example/\n      headers: {X-Token: '${GITHUB_TOKEN}'}\n",
        "unsupported key(s) headers",
    ),
    ("  PostToolUse:\n    - url: https://a.example/?k=${GITHUB_TOKEN}\n", "not substituted in a skill's url"),
    (
        "  PostToolUse:\n    - url: https://a.example/\n      secret: ${NOT_SET_ANYWHERE}\n",
        "NOT_SET_ANYWHERE is not set",
    ),
    ("  PostToolUse:\n    - url: https://a.example/\n      secret: pre${HOME}\n", "exactly ${VAR}"),
]


@pytest.mark.parametrize(("broken", "message"), BROKEN, ids=[m for _, m in BROKEN])
def test_a_broken_hook_is_skipped_and_the_others_still_load(
    tmp_path: Path, guard_log: pytest.LogCaptureFixture, broken: str, message: str
) -> None:
    path = write_skill(tmp_path, f"---\nname: s\nhooks:\n{broken}  PreToolUse:\n{GOOD}---\n")
    skill = load_skill(path)
    assert [(s.event, s.options["command"]) for s in skill.specs] == [
        ("pre_tool_use", "./good.sh")
    ]  # nothing widened, nothing lost
    (warning,) = skill.warnings
    assert message in warning and str(path) in warning and warning.endswith("skipped")
    assert any(message in r.getMessage() and r.levelno == logging.WARNING for r in guard_log.records)


def test_hooks_that_are_not_a_mapping_load_nothing(tmp_path: Path) -> None:
    skill = load_skill(write_skill(tmp_path, "---\nname: s\nhooks:\n  - script: x\n---\n"))
    assert skill.specs == () and "hooks: must map event names" in skill.warnings[0]


def test_a_skill_without_frontmatter_or_hooks_has_no_hooks(tmp_path: Path) -> None:
    assert load_skill(write_skill(tmp_path, "# just docs\n")).specs == ()
    assert load_skill(write_skill(tmp_path, "---\nname: plain\n---\nbody\n", "plain")).specs == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("---\nname: s\nhooks: [unclosed\n---\n", "invalid YAML frontmatter at line"),
        ("---\nname: s\n", "never ends"),
        ("---\n- a\n---\n", "must be a mapping"),
    ],
)
def test_unreadable_frontmatter_is_a_config_error_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = write_skill(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as info:
        load_skill(path)
    assert str(path) in str(info.value)


AVAILABLE: dict[str, str | Path] = {"audit": "a/SKILL.md", "lint": "l/SKILL.md"}


@pytest.mark.parametrize(
    ("prompt", "chosen"),
    [
        ("[use audit] clean up the repo", ["audit"]),
        ("  [use audit][use lint] go", ["audit", "lint"]),
        ("[use audit] [use audit] twice", ["audit"]),
        ("please [use audit] now", []),  # only the start of the message counts
        ("> quoted\n[use audit]", []),
        ("[use unknown] x", []),
        ("[useaudit] x", []),
        ("[use audit x", []),
        ("", []),
    ],
)
def test_only_a_leading_use_tag_selects_a_skill(prompt: str, chosen: list[str]) -> None:
    assert select_skills(prompt, AVAILABLE) == chosen


def test_mounting_needs_an_open_run(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="registry.run"):
        mount_skill(Registry(), write_skill(tmp_path, SKILL.replace("${OPS_WEBHOOK_SECRET}", "literal")))


def url_skill(tmp_path: Path, name: str, url: str, failure_mode: str | None = "fail_open") -> Path:
    mode = f"      failure_mode: {failure_mode}\n" if failure_mode else ""
    text = f"---\nname: {name}\nhooks:\n  PreToolUse:\n    - url: {url}\n      tools: bash_*\n{mode}---\n"
    return write_skill(tmp_path, text, name)


async def test_concurrent_runs_never_see_each_others_skill_hooks(
    tmp_path: Path, make_receiver: Callable[..., Receiver]
) -> None:
    receivers = {
        name: make_receiver(reply=(200, json.dumps({"decision": "allow", "reason": name}).encode(), {}))
        for name in ("one", "two")
    }
    available = {name: url_skill(tmp_path, name, r.url()) for name, r in receivers.items()}
    registry = Registry()
    engine = Engine(LOCAL, registry)
    both_mounted = asyncio.Barrier(2)

    async def run(name: str) -> list[str]:
        seen = []
        with registry.run():
            mount_selected(registry, f"[use {name}] do the thing", available)
            await both_mounted.wait()  # the other run has mounted its skill by now
            for _ in range(3):
                decision = await engine.decide(BASH)
                seen += [h.id for h in decision.hooks]
                await asyncio.sleep(0)
        return seen

    one, two = await asyncio.gather(run("one"), run("two"))
    assert one == ["skill:one:PreToolUse[0]"] * 3
    assert two == ["skill:two:PreToolUse[0]"] * 3
    assert [len(r.requests) for r in receivers.values()] == [3, 3]

    assert registry.specs() == []  # released when the runs ended
    assert (await engine.decide(BASH)).hooks == []
    assert [len(r.requests) for r in receivers.values()] == [3, 3]


async def test_a_skill_the_model_loads_itself_registers_nothing(
    tmp_path: Path, make_receiver: Callable[..., Receiver]
) -> None:
    receiver = make_receiver()
    url_skill(tmp_path, "sneaky", receiver.url())
    registry = Registry()
    engine = Engine(LOCAL, registry)
    with registry.run():
        model_loads = {**BASH, "tool_name": "Skill", "tool_input": {"skill": "sneaky"}}
        await engine.decide(model_loads)
        await engine.decide(
            {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "tell me about [use sneaky]"}
        )
        assert registry.specs() == []
        assert (await engine.decide(BASH)).hooks == []
    assert receiver.connections == 0


@pytest.mark.parametrize(
    ("failure_mode", "decision"), [(None, "deny"), ("fail_closed", "deny"), ("fail_open", "allow")]
)
async def test_skill_hooks_fail_closed_unless_they_say_otherwise(
    tmp_path: Path, failure_mode: str | None, decision: str
) -> None:
    registry = Registry()
    engine = Engine(Settings(audit_path=None), registry)  # no allow-list: the local URL is refused
    with registry.run():
        mount_skill(registry, url_skill(tmp_path, "strict", "http://127.0.0.1:9/x", failure_mode))
        result = await engine.decide(BASH)
    assert result.decision == decision and "loopback" in (result.hooks[0].error or "")


async def test_skill_scripts_get_data_not_code_and_the_stricter_analysis(tmp_path: Path) -> None:
    text = """---
name: shell-skill
hooks:
  PreToolUse:
    - script: 'printf "%s" "$ARGUMENTS" > seen.json'
    - script: 'eval "echo hi"; touch evaluated'
      failure_mode: fail_open
---
"""
    registry = Registry()
    engine = Engine(Settings(audit_path=None), registry)
    event = {**BASH, "cwd": str(tmp_path), "tool_input": {"command": "$(touch pwned) `touch pwned2`"}}
    skill = write_skill(tmp_path, text, "shell-skill")
    with registry.run():
        mount_skill(registry, skill)
        decision = await engine.decide(event)
    ran, refused = decision.hooks
    # a skill's script runs in the skill's own folder, not the event's cwd
    assert ran.error is None and json.loads((skill.parent / "seen.json").read_text()) == event
    assert "eval" in (refused.error or "") and refused.decision is None  # refused for a skill, never run
    assert not any(
        (folder / name).exists() for folder in (tmp_path, skill.parent) for name in ("pwned", "pwned2", "evaluated")
    )
