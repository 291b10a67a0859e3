"""Cache statistics count each judged event's miss once (the engine's prepare and run share one lookup's count)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.judge import bash_event
from fixtures.processes import run_guard

from guard.testing.openai_stub import Reply, StubServer


@pytest.mark.slow
def test_a_miss_then_a_hit_count_one_miss_and_one_hit(stub: StubServer, isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(
        f"models: {{quick: openai/stub-quick}}\ncache: {{url: 'sqlite:///{isolated_home}/cache.db'}}\n"
        "hooks:\n  PreToolUse:\n    - id: no-delete\n      matcher: Bash\n      depth: quick\n      timeout: 60\n"
        "      rule: Deny shell commands that delete files outside the project.\n"
    )
    trust_config(isolated_home / "guard.yaml")
    stub.default = Reply.verdict("deny", "deletes a home folder", confidence=0.9)
    for _ in range(2):
        out = run_guard(["hook"], isolated_home, env={"GUARD_API_BASE": stub.url}, stdin=json.dumps(bash_event()))
        assert out.returncode == 0, out.stderr
    stats = run_guard(["cache", "stats", "--json"], isolated_home)
    assert stats.returncode == 0, stats.stderr
    counts = json.loads(stats.stdout)
    assert (counts["misses"], counts["hits"], stub.calls) == (1, 1, 1)
