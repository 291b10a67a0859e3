"""A first run that explains itself: no key, a mistyped provider, an endpoint nobody answers at.

Each problem is named once, with what to set, by ``guard check``, ``guard hook`` and
``guard doctor`` as real processes, and without importing LiteLLM: every process here
runs with an import trap that makes ``import litellm`` take 60 s, so a run that loaded
it for the message (as the first run did, in seconds to a minute) would time out.
Measured on the 2-core test machine: about 1 s each, most of it Python starting.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.cache import free_port
from fixtures.importers import trapped_env
from fixtures.processes import run_guard

from guard.testing.openai_stub import Reply, StubServer

#: The README's rule, on the quick tier (depth auto would name the thorough tier's model too).
CONFIG = """models:
  quick: openai/gpt-4.1-mini
hooks:
  PreToolUse:
    - id: no-destructive-shell
      matcher: Bash
      rule: Deny shell commands that delete or overwrite files outside the project directory.
      depth: quick
      failure_mode: fail_closed
"""
CALL = {
    "hook_event_name": "PreToolUse",
    "session_id": "s1",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf ~/old-project"},
}
NO_LITELLM = {"litellm": 60.0}

#: problem -> (extra environment, what the message must say)
PROBLEMS = {
    "missing key": ({}, ["no API key for openai", "set OPENAI_API_KEY"]),
    "unknown provider": (
        {"GUARD_MODEL_QUICK": "opnai/gpt-4.1-mini"},
        ["unknown provider 'opnai'", "did you mean openai/gpt-4.1-mini", "set GUARD_MODEL_QUICK"],
    ),
    "unreachable endpoint": (
        {"GUARD_API_BASE": "http://127.0.0.1:{port}/v1"},
        ["nothing answers at http://127.0.0.1:{port}/v1", "GUARD_API_BASE"],
    ),
}
COMMANDS = {
    "check": (["check", "--tool", "Bash", "--input", json.dumps(CALL["tool_input"])], 3),
    "hook": (["hook", "--format", "claude", "--deadline", "30"], 0),
    "doctor": (["doctor", "--model-timeout", "5"], 1),
}


def run(
    args: list[str], cwd: Path, env: dict[str, str], stdin: str = "", timeout: float = 45
) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = run_guard(args, cwd, stdin=stdin, env=env, inherit_env=False, timeout=timeout)
    return done, time.monotonic() - started


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_a_first_run_problem_is_named_once_with_what_to_set(
    problem: str, command: str, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (isolated_home / "guard.yaml").write_text(CONFIG)
    trust_config(isolated_home / "guard.yaml")
    port = free_port()
    extra, wanted = PROBLEMS[problem]
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    env = {**trapped_env(isolated_home, slow=NO_LITELLM), **{k: v.format(port=port) for k, v in extra.items()}}
    args, code = COMMANDS[command]
    done, took = run(args, isolated_home, env, stdin=json.dumps({**CALL, "cwd": str(isolated_home)}))
    output = done.stdout + done.stderr
    assert done.returncode == code, output
    for phrase in (w.format(port=port) for w in wanted):
        assert phrase in output, output
    assert output.count(wanted[0].format(port=port)) == 1, output  # once, not three times
    assert "Traceback" not in output and "timed out" not in output, output
    assert took < 15, f"{took:.1f}s"  # no LiteLLM import (60 s here), no back-off past one quick retry
    if command == "hook":
        assert (
            json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
        )  # fail_closed: blocked, and why


@pytest.mark.slow
def test_importing_the_model_client_does_not_count_against_the_hooks_timeout(isolated_home: Path) -> None:
    """The first run said "timed out after 10s": LiteLLM's import (54 s under load) ran on the hook's clock.

    Here the import takes 8 s more than it does (the trap) against a 5 s hook timeout; LiteLLM's
    first call still loads a few modules of its own (about a second on a loaded machine), inside it.
    """
    with StubServer() as stub:
        stub.enqueue(Reply.verdict("deny", "deletes the home folder"))
        (isolated_home / "guard.yaml").write_text(
            f"models:\n  quick: openai/stub\n  api_base: {stub.url}\nhooks:\n  PreToolUse:\n"
            "    - id: slow-start\n      rule: Deny deleting files.\n      depth: quick\n      timeout: 5\n      failure_mode: fail_closed\n"
        )
        trust_config(isolated_home / "guard.yaml")
        env = {
            **trapped_env(isolated_home, slow={"litellm": 8.0}),
            "GUARD_TRANSPORT": "litellm",
        }  # every model through LiteLLM
        done, _ = run(
            ["check", "--tool", "Bash", "--input", '{"command": "rm -rf /srv/data"}'], isolated_home, env, timeout=180
        )
        assert stub.calls == 1
    assert done.returncode == 1, done.stdout + done.stderr  # judged: deny, not a timeout's failure
    assert "deletes the home folder" in done.stdout and "timed out" not in done.stdout + done.stderr


@pytest.mark.slow
def test_a_refused_key_is_final_at_once(isolated_home: Path) -> None:
    """A 401 took 20 s against an 8 s hook timeout: the key hint loaded LiteLLM on the event loop, past every timeout."""
    with StubServer(default=Reply.error(401, "Incorrect API key provided")) as stub:
        url = stub.url
        (isolated_home / "guard.yaml").write_text(
            f"models:\n  quick: openai/gpt-4.1-mini\n  api_base: {stub.url}\nhooks:\n  PreToolUse:\n"
            "    - id: r\n      rule: Deny deleting files.\n      depth: quick\n      timeout: 8\n      failure_mode: fail_closed\n"
        )
        trust_config(isolated_home / "guard.yaml")
        env = {**trapped_env(isolated_home, slow=NO_LITELLM), "OPENAI_API_KEY": "sk-wrong"}
        done, took = run(
            ["hook", "--format", "claude"], isolated_home, env, stdin=json.dumps({**CALL, "cwd": str(isolated_home)})
        )
        assert stub.calls == 1  # not retried
    reason = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "authentication failed" in reason and "refused OPENAI_API_KEY" in reason and url in reason, reason
    assert took < 8, f"{took:.1f}s"


@pytest.mark.slow
def test_guard_check_leaves_no_background_service(isolated_home: Path) -> None:
    """Five services of 55-224 MB each were left behind, guard check's among them."""
    with StubServer(default=Reply.verdict("allow", "fine")) as stub:
        (isolated_home / "guard.yaml").write_text(
            f"models:\n  quick: openai/stub\n  api_base: {stub.url}\nserver:\n  url: auto\nhooks:\n  PreToolUse:\n    - id: r\n      rule: Deny deleting files.\n      depth: quick\n"
        )
        trust_config(isolated_home / "guard.yaml")
        done, _ = run(
            ["check", "--tool", "Bash", "--input", '{"command": "ls"}'], isolated_home, trapped_env(isolated_home)
        )
    assert done.returncode == 0, done.stdout + done.stderr
    serve = isolated_home.parent / "home" / ".cache" / "guard" / "serve"
    assert not list(serve.glob("*.json")), "guard check started a guard serve"
