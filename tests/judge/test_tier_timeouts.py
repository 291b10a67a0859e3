"""Per-tier timeouts (``models.timeouts``, ``GUARD_TIMEOUT_QUICK`` / ``_THOROUGH``): a slow local model gets the time it needs, through ``guard hook``.

The hook below says ``timeout: 1``; the stub takes 2 s, as a CPU model takes longer than a
hosted one. Without a tier timeout the judge gives up and the hook's failure mode decides;
with one, the hook's budget grows to fit it and the verdict is the model's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.judge import bash_event
from fixtures.processes import run_guard

from guard.testing.openai_stub import Reply, StubServer

pytestmark = pytest.mark.slow


def _project(home: Path, stub: StubServer, timeouts: str = "") -> Path:
    config = home / "guard.yaml"
    config.write_text(
        f"models: {{quick: openai/local-quick, thorough: openai/local-thorough, api_base: '{stub.url}'{timeouts}}}\ncache: {{url: 'off'}}\n"
        "hooks:\n  PreToolUse:\n    - id: no-delete\n      matcher: Bash\n      depth: quick\n      timeout: 1\n      failure_mode: fail_closed\n"
        "      rule: Deny shell commands that delete files outside the project.\n"
    )
    trust_config(config)
    return config


def _hook(home: Path, **env: str) -> tuple[str, str]:
    out = run_guard(["hook"], home, env=env, stdin=json.dumps(bash_event("rm -rf ./build")))
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)["hookSpecificOutput"]
    return answer["permissionDecision"], answer.get("permissionDecisionReason", "")


def test_a_tier_timeout_gives_a_slow_model_the_time_it_needs(stub: StubServer, isolated_home: Path) -> None:
    stub.default = Reply.verdict(
        "deny", "the model's verdict: build output is regenerated, but ask first", confidence=0.95, delay=2
    )
    _project(isolated_home, stub)
    decision, reason = _hook(isolated_home)
    assert (
        decision == "deny" and "did not answer within" in reason and "the model's verdict" not in reason
    )  # fail_closed: the 1 s budget ran out
    _project(isolated_home, stub, ", timeouts: {quick: 6}")
    decision, reason = _hook(isolated_home)
    assert decision == "deny" and "the model's verdict" in reason
    _project(isolated_home, stub)
    decision, reason = _hook(isolated_home, GUARD_TIMEOUT_QUICK="6")
    assert decision == "deny" and "the model's verdict" in reason


def test_a_bad_tier_timeout_variable_is_named_and_blocks(stub: StubServer, isolated_home: Path) -> None:
    _project(isolated_home, stub)
    out = run_guard(
        ["hook"], isolated_home, env={"GUARD_TIMEOUT_QUICK": "a minute"}, stdin=json.dumps(bash_event("rm -rf ./build"))
    )
    assert (
        "GUARD_TIMEOUT_QUICK" in out.stdout + out.stderr
        and "'a minute' is not a number of seconds" in out.stdout + out.stderr
    )
    assert "allow" not in out.stdout and stub.calls == 0
