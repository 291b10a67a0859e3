"""A decision-cache hit never answers for the self-protection rule: a write to guard.yaml is refused even when the cache allows it.

The fast path of ``guard hook`` answers from cached verdicts without the engine; what
a user relies on is that the protection rule still judges the call there, so a cached
"allow" (stored while the rule was off, or by a judge that erred) cannot let the agent
rewrite the config it is guarded by.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import trust_config
from fixtures.processes import run_guard

from guard.testing.openai_stub import Reply, StubServer

SOURCE_ROOT = str(Path(__import__("guard").__file__).resolve().parents[1])
CONFIG = (
    "models: {quick: openai/stub-quick}\ncache:\n  url: sqlite:///cache.db\n"
    "hooks:\n  PreToolUse:\n    - id: anything-goes\n      matcher: Bash\n      depth: quick\n      timeout: 60\n"
    "      rule: Deny commands that delete the user's photos.\n"
)


def _seed_allow(event: dict[str, object], api_base: str) -> None:
    """Store an allow for ``event`` under the rule's own cache key, as an earlier judgement would have."""
    from guard.cache import open_cache
    from guard.judge.keys import smart_cache_key
    from guard.runtime.deciders import in_process
    from guard.runtime.gate import ConfigFile, Gate

    os.environ["GUARD_API_BASE"] = api_base  # the key names the model's endpoint, as the hook process will see it
    try:
        gate = Gate(ConfigFile(pinned=True), deciders=in_process())
        spec = next(s for s in gate.registry.specs() if s.kind == "smart")
        cache = open_cache(gate.settings)
        assert cache is not None
        cache.set(
            smart_cache_key(spec, gate.settings, dict(event)),
            {
                "decision": "allow",
                "reason": "harmless",
                "confidence": 0.99,
                "tier": "quick",
                "model": "openai/stub-quick",
            },
        )
    finally:
        del os.environ["GUARD_API_BASE"]


def test_a_cached_allow_does_not_let_a_write_to_guard_yaml_through(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(CONFIG)
    trust_config(isolated_home / "guard.yaml")
    event = {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "cwd": str(isolated_home),
        "tool_input": {"command": "printf 'hooks: {}\\n' > guard.yaml"},
    }
    with StubServer() as stub:
        stub.default = Reply.verdict("allow", "harmless", confidence=0.99)
        _seed_allow(event, stub.url)
        env = {**os.environ, "PYTHONPATH": SOURCE_ROOT, "GUARD_API_BASE": stub.url}
        proc = run_guard(["hook"], isolated_home, stdin=json.dumps(event), env=env, inherit_env=False)
        control = {**event, "tool_input": {"command": "printf 'hello\\n' > notes.txt"}}
        _seed_allow(control, stub.url)
        allowed = run_guard(["hook"], isolated_home, stdin=json.dumps(control), env=env, inherit_env=False)
        assert stub.calls == 0, "the cached verdicts were not used: this test would not exercise the fast path"
    output = json.loads(proc.stdout or "{}").get("hookSpecificOutput", {})
    assert output.get("permissionDecision") == "deny", (
        f"the cached allow let a write to guard.yaml through: {proc.stdout!r} {proc.stderr}"
    )
    assert "guard self-protection" in output["permissionDecisionReason"]
    assert json.loads(allowed.stdout or "{}").get("hookSpecificOutput", {}).get("permissionDecision") != "deny", (
        allowed.stdout
    )
