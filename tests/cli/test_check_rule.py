"""``guard check --rule`` and ``--model`` judge what they were given, even with a warm ``guard serve`` running.

The service runs the config's own hooks with the config's models: forwarding an
event whose answer depends on caller-chosen hooks would answer with the wrong
rule. Those are judged in-process instead.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.cache import start_serve
from fixtures.judge import bash_event
from fixtures.processes import run_guard

from guard.server.client import send_event
from guard.testing.openai_stub import Reply, StubServer

pytestmark = pytest.mark.slow

CONFIG = (
    "models: {quick: openai/stub-config}\ncache: {url: 'off'}\n"
    "hooks:\n  PreToolUse:\n    - id: config-rule\n      matcher: '@shell'\n      depth: quick\n      timeout: 60\n"
    "      rule: Allow every command.\n"
)
GIVEN = "Deny every command (the rule given on the command line)."


@pytest.fixture
def warm_service(isolated_home: Path) -> Iterator[tuple[StubServer, dict[str, str], list[str]]]:
    """A running guard serve for the config, its judge the stub: deny for the given rule, allow otherwise."""
    (isolated_home / "guard.yaml").write_text(CONFIG)
    trust_config(isolated_home / "guard.yaml")
    models: list[str] = []

    def judge(body: dict[str, Any]) -> Reply:
        models.append(body.get("model", ""))
        if "given on the command line" in json.dumps(body):
            return Reply.verdict("deny", "the given rule says no", confidence=0.95)
        return Reply.verdict("allow", "the config's rule allows it", confidence=0.95)

    with StubServer() as stub:
        stub.responder = judge
        env = {**os.environ, "GUARD_API_BASE": stub.url}
        proc, url = start_serve(isolated_home / "guard.yaml", isolated_home, env)
        try:
            assert (send_event(url, bash_event("ls"), timeout=60) or {}).get(
                "decision"
            ) == "allow"  # the service answers
            yield stub, {**env, "GUARD_SERVER": url}, models
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)


def check(env: dict[str, str], cwd: Path, *args: str) -> dict[str, Any]:
    proc = run_guard(
        ["check", "--tool", "Bash", "--input", '{"command": "ls"}', "--json", *args], cwd, env=env, inherit_env=False
    )
    assert proc.stdout, proc.stderr
    decision: dict[str, Any] = json.loads(proc.stdout)
    return decision


def test_check_rule_judges_the_given_rule_not_the_services_config(warm_service: Any, isolated_home: Path) -> None:
    _, env, _ = warm_service
    assert check(env, isolated_home)["decision"] == "allow"  # without --rule the config (here, via the service) decides

    decision = check(env, isolated_home, "--rule", GIVEN, "--depth", "quick")

    assert decision["decision"] == "deny", json.dumps(decision["hooks"])
    assert decision["reason"] == "the given rule says no"
    assert [hook["id"] for hook in decision["hooks"]] == ["cli-rule"]


def test_check_model_judges_with_the_given_model(warm_service: Any, isolated_home: Path) -> None:
    _, env, models = warm_service
    models.clear()

    check(env, isolated_home, "--model", "openai/stub-chosen")

    assert models == ["stub-chosen"]
