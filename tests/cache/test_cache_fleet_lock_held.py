"""A lock on the fleet's cache key that someone else holds does not stand in for a judgement.

Whoever reaches the team's Redis (the agent on a developer's machine reads its URL in guard.yaml) can take the lock
of a call's cache key and renew it. Every ``guard hook`` then waited for a holder that never judges, until its
hook's timeout, and a ``fail_open`` hook let the call through unjudged. A real ``guard hook`` and a real redis-server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.judge import bash_event
from fixtures.processes import run_guard

from guard.testing.openai_stub import Reply, StubServer

RULE = "Deny shell commands that delete files outside the project."

pytestmark = [pytest.mark.redis, pytest.mark.slow]


def test_a_lock_held_by_someone_else_leaves_the_call_judged(redis_cache_url: str, isolated_home: Path) -> None:
    import redis

    hook = {
        "id": "no-delete",
        "matcher": "Bash",
        "depth": "quick",
        "timeout": 8,
        "failure_mode": "fail_open",
        "rule": RULE,
    }
    config = {
        "models": {"quick": "openai/stub-judge"},
        "cache": {"url": redis_cache_url},
        "hooks": {"PreToolUse": [hook]},
    }
    (isolated_home / "guard.yaml").write_text(json.dumps(config))  # YAML reads JSON
    trust_config(isolated_home / "guard.yaml")
    client = redis.Redis.from_url(redis_cache_url)
    with StubServer(default=Reply.verdict("deny", "deletes the home directory", confidence=0.95)) as stub:
        env = {"GUARD_API_BASE": stub.url}
        event = json.dumps(bash_event("rm -rf ~/victim"))
        first = run_guard(["hook", "--format", "claude"], isolated_home, stdin=event, env=env)
        assert json.loads(first.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", first.stderr
        [entry] = client.keys("guard:entry:*")
        # what the agent does with the URL: drop the verdict, and hold the key's lock
        client.delete(entry)
        client.set(entry.replace(b":entry:", b":lock:"), b"held-by-the-agent", ex=600)
        again = run_guard(["hook", "--format", "claude"], isolated_home, stdin=event, env=env)
    client.close()
    said = json.loads(again.stdout or "{}")
    assert said.get("hookSpecificOutput", {}).get("permissionDecision") == "deny" and stub.calls == 2, said
