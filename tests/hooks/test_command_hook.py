"""Command hooks at run time: payload as data, exit codes, replies, refusal, output cap, cwd."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guard.core.errors import HookError, HookRefused
from guard.core.events.model import Event, parse_event
from guard.core.hook import HookContext
from guard.core.settings import Settings
from guard.core.spec import HookSpec
from guard.hooks.command import CommandHook
from guard.hooks.command_output import OUTPUT_CAP
from guard.hooks.command_payload import ENV_LIMIT, TRUNCATED_KEY, encode_payload
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry


def make_hook(command: str, base_dir: Path, *, source: str = "config", event: str = "pre_tool_use") -> CommandHook:
    spec = HookSpec(id="cmd", kind="command", event=event, options={"command": command}, source=source)
    return CommandHook(spec, HookContext(Settings(base_dir=str(base_dir), audit_path=None)))


def bash_event(command: str = "ls", **extra: Any) -> Event:
    return parse_event(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "s1",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            **extra,
        }
    )


# --- $ARGUMENTS is data, never code ----------------------------------------------------------

BREAKOUTS = [
    "$(touch {m})",
    "`touch {m}`",
    '"; touch {m}; echo "',
    "'; touch {m}; echo '",
    "\ntouch {m}\n",
    "x;touch {m}",
    "${{IFS}}touch${{IFS}}{m}",
    "$(touch${{IFS}}{m})",
    "| touch {m}",
    "&& touch {m} &&",
    '\\"$(touch {m})\\"',
]

DATA_COMMANDS = [
    "printf '%s' $ARGUMENTS > seen.txt",
    'printf "%s" $ARGUMENTS > seen.txt',
    'echo "$ARGUMENTS" > seen.txt',
    "echo $ARGUMENTS > seen.txt",
    "printf '%s' \"$HOOK_PAYLOAD\" > seen.txt",
    "for word in $ARGUMENTS; do printf '%s' \"$word\"; done > seen.txt",
    "cat > seen.txt",
]


@pytest.mark.parametrize("command", DATA_COMMANDS)
@pytest.mark.parametrize("breakout", BREAKOUTS)
async def test_tool_input_never_executes(command: str, breakout: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    attack = breakout.format(m=marker)
    event = bash_event(attack, session_id=attack, custom_field=attack, cwd=str(tmp_path))
    result = await make_hook(command, tmp_path).run(event)
    assert not marker.exists(), f"{command!r} executed {attack!r}"
    seen = (tmp_path / "seen.txt").read_text()
    assert "touch" in seen, "the payload reached the command as text"
    assert result.decision is None


async def test_single_quoted_arguments_stay_literal(tmp_path: Path) -> None:
    event = parse_event({"hook_event_name": "UserPromptSubmit", "prompt": "hi"})
    result = await make_hook("echo '$ARGUMENTS'", tmp_path, event="user_turn").run(event)
    assert result.additional_context == "$ARGUMENTS"


async def test_environment_and_stdin(tmp_path: Path) -> None:
    command = 'cat > stdin.json; printf %s "$HOOK_PAYLOAD" > payload.json; printf %s "$ARGUMENTS" > arguments.json; printf %s "$HOOK_EVENT" > event.txt'
    event = bash_event("ls -la", cwd=str(tmp_path))
    await make_hook(command, tmp_path).run(event)
    expected = event.payload()
    assert json.loads((tmp_path / "stdin.json").read_text()) == expected
    assert json.loads((tmp_path / "payload.json").read_text()) == expected
    assert (tmp_path / "arguments.json").read_text() == (tmp_path / "payload.json").read_text()
    assert (tmp_path / "event.txt").read_text() == "pre_tool_use"


async def test_big_payload_env_is_cut_but_stdin_is_whole(tmp_path: Path) -> None:
    big = "A" * (ENV_LIMIT + 5000)
    event = parse_event(
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": "x", "content": big},
            "cwd": str(tmp_path),
        }
    )
    await make_hook('cat > stdin.json; printf %s "$HOOK_PAYLOAD" > env.json', tmp_path).run(event)
    stdin = (tmp_path / "stdin.json").read_text()
    env = (tmp_path / "env.json").read_bytes()
    assert stdin == encode_payload(event.payload())
    assert json.loads(stdin)["tool_input"]["content"] == big
    assert len(env) <= ENV_LIMIT
    assert json.loads(env)[TRUNCATED_KEY] is True


async def test_hook_that_ignores_a_big_stdin_still_runs(tmp_path: Path) -> None:
    event = parse_event(
        {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"content": "B" * 500_000}}
    )
    result = await make_hook("echo nope >&2; exit 2", tmp_path).run(event)
    assert (result.decision, result.reason) == ("deny", "nope")


# --- exit codes and replies --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "decision", "reason"),
    [
        (
            """echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "claude says no"}}'""",
            "deny",
            "claude says no",
        ),
        ("""echo '{"decision": "block", "reason": "top-level block"}'""", "deny", "top-level block"),
        ("""printf '\\n  {"decision": "ask", "reason": "canonical ask"}'""", "ask", "canonical ask"),
        ("""echo '{"decision": "approve"}'""", "allow", None),
        ("""echo '{"continue": false, "stopReason": "halt"}'""", "deny", "halt"),
        ("echo 'plain text is ignored on pre_tool_use'", None, None),
        ("true", None, None),
        ("echo 'blocked: rm outside project' >&2; exit 2", "deny", "blocked: rm outside project"),
        ("""echo '{"decision": "approve"}'; echo 'stderr wins' >&2; exit 2""", "deny", "stderr wins"),
        ("exit 2", "deny", "command hook cmd exited 2 (blocked) without a reason on stderr"),
    ],
)
async def test_exit_code_semantics(command: str, decision: str | None, reason: str | None, tmp_path: Path) -> None:
    result = await make_hook(command, tmp_path).run(bash_event())
    assert (result.id, result.type, result.decision, result.reason) == ("cmd", "command", decision, reason)


async def test_rewrite_reply(tmp_path: Path) -> None:
    reply = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "ls --dry-run"},
        }
    }
    result = await make_hook(f"echo '{json.dumps(reply)}'", tmp_path).run(bash_event())
    assert (result.decision, result.updated_input) == ("allow", {"command": "ls --dry-run"})


@pytest.mark.parametrize(
    ("hook_event", "event_name"), [("UserPromptSubmit", "user_turn"), ("SessionStart", "session_start")]
)
async def test_plain_stdout_is_context_for_prompt_and_session_start(
    hook_event: str, event_name: str, tmp_path: Path
) -> None:
    event = parse_event({"hook_event_name": hook_event, "prompt": "hi"})
    result = await make_hook("echo 'branch: main'", tmp_path, event=event_name).run(event)
    assert (result.decision, result.additional_context) == (None, "branch: main")


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("echo 'it broke' >&2; exit 1", "command hook cmd exited 1: it broke"),
        ("exit 7", "command hook cmd exited 7"),
        ("kill -TERM $$", "command hook cmd was killed by signal 15"),
        ("""echo '{"decision": "block"'""", "reply is not valid JSON"),
        ("""echo '{"decision": "perhaps"}'""", "unknown decision"),
    ],
)
async def test_failures_raise_for_the_engine(command: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(HookError) as caught:
        await make_hook(command, tmp_path).run(bash_event())
    assert message in str(caught.value)
    assert not isinstance(caught.value, HookRefused)


# --- refusal by the static analyser ------------------------------------------------------------


async def test_refused_command_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    hook = make_hook(f"touch {marker}; python3 -c 'pass'", tmp_path)
    with pytest.raises(HookRefused, match="refused for every source: python -c: inline interpreter code"):
        await hook.run(bash_event())
    assert not marker.exists()


async def test_external_hooks_get_the_stricter_set(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    command = f"touch {marker}; eval true"
    with pytest.raises(HookRefused, match=r"\(from skill\) needs a person's approval: eval"):
        await make_hook(command, tmp_path, source="skill").run(bash_event())
    assert not marker.exists()
    await make_hook(command, tmp_path, source="config").run(bash_event())
    assert marker.exists()


@pytest.mark.parametrize(("failure_mode", "decision"), [("fail_open", "allow"), ("fail_closed", "deny")])
async def test_refusal_is_a_failure_for_the_engine(failure_mode: str, decision: str) -> None:
    spec = HookSpec(
        id="bad", kind="command", event="pre_tool_use", options={"command": "sudo true"}, failure_mode=failure_mode
    )
    result = await Engine(Settings(audit_path=None), Registry([spec])).decide(bash_event().payload())
    assert result.decision == decision
    assert "sudo: runs with raised privileges" in (result.hooks[0].error or "")


async def test_missing_command_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(HookError, match="has no command"):
        await make_hook("   ", tmp_path).run(bash_event())


# --- output cap --------------------------------------------------------------------------------


async def test_output_at_the_cap_is_returned_whole(tmp_path: Path) -> None:
    command = f"head -c {OUTPUT_CAP} /dev/zero | tr '\\0' a >&2; exit 2"
    result = await make_hook(command, tmp_path).run(bash_event())
    assert result.reason == "a" * OUTPUT_CAP
    assert "output_file" not in result.details


async def test_long_stderr_reason_goes_to_a_file(tmp_path: Path) -> None:
    command = f"head -c {OUTPUT_CAP + 1} /dev/zero | tr '\\0' r >&2; exit 2"
    result = await make_hook(command, tmp_path).run(bash_event())
    path = Path(result.details["output_file"])
    assert path.parent == tmp_path / ".guard" / "hook-output"
    assert path.read_text() == "r" * (OUTPUT_CAP + 1)
    assert result.reason is not None and len(result.reason) < OUTPUT_CAP
    assert result.reason.startswith("rrrr") and str(path) in result.reason


async def test_long_context_goes_to_a_file(tmp_path: Path) -> None:
    event = parse_event({"hook_event_name": "UserPromptSubmit", "prompt": "hi"})
    result = await make_hook("head -c 50000 /dev/zero | tr '\\0' c", tmp_path, event="user_turn").run(event)
    path = Path(result.details["output_file"])
    assert path.read_text() == "c" * 50000
    assert result.additional_context is not None and str(path) in result.additional_context
    assert len(result.additional_context) < OUTPUT_CAP


async def test_long_json_reason_goes_to_a_file(tmp_path: Path) -> None:
    reason = "j" * 20000
    (tmp_path / "reply.json").write_text(json.dumps({"decision": "block", "reason": reason}))
    result = await make_hook(f"cat {tmp_path / 'reply.json'}", tmp_path).run(bash_event())
    assert result.decision == "deny"
    assert Path(result.details["output_file"]).read_text() == reason


async def test_long_error_output_goes_to_a_file(tmp_path: Path) -> None:
    with pytest.raises(HookError) as caught:
        await make_hook("head -c 30000 /dev/zero | tr '\\0' e >&2; exit 1", tmp_path).run(bash_event())
    message = str(caught.value)
    assert "whole stderr in" in message and len(message) < OUTPUT_CAP
    files = list((tmp_path / ".guard" / "hook-output").iterdir())
    assert [f.read_text() for f in files] == ["e" * 30000]


# --- working directory -------------------------------------------------------------------------


async def test_runs_in_the_declaring_folder_never_the_events_cwd(tmp_path: Path) -> None:
    declared = tmp_path / "declared"
    declared.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    spec = HookSpec(id="cmd", kind="command", event="session_start", options={"command": "pwd"}, workdir=str(declared))
    hook = CommandHook(spec, HookContext(Settings(base_dir=str(tmp_path), audit_path=None)))
    result = await hook.run(parse_event({"hook_event_name": "SessionStart", "cwd": str(elsewhere)}))
    assert result.additional_context == str(declared)


async def test_a_hook_built_in_python_runs_in_the_settings_base(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = await make_hook("pwd", tmp_path, event="session_start").run(
        parse_event({"hook_event_name": "SessionStart", "cwd": str(elsewhere)})
    )
    assert result.additional_context == str(tmp_path)
