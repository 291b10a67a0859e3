"""A guarded project for the agent-SDK integration tests: a guard.yaml with a deny rule and a rewrite rule.

The rules are callable hooks (deterministic, no model); ``judged`` records every
call guard decided, so a test can tell "guard allowed it" from "guard never saw it".
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

POLICY = '''
import guard

judged = []

def shell_policy(event):
    judged.append(dict(event.tool_input))
    text = " ".join(str(v) for v in event.tool_input.values())
    if "rm -rf" in text:
        return guard.deny("deleting folders is not allowed in this project")
    if "APPROVE-ME" in text:
        return guard.ask("a person signs off on releases")
    if "REWRITE-ME" in text:
        return guard.rewrite({k: v.replace("REWRITE-ME", "rewritten-by-guard") if isinstance(v, str) else v for k, v in event.tool_input.items()})

def broken(event):
    raise RuntimeError("the policy service is down")
'''


def guard_yaml(matcher: str, *, failure_mode: str = "fail_open", callable_name: str = "shell_policy") -> str:
    return (
        "audit: {path: audit.db}\n"
        f"hooks:\n  PreToolUse:\n    - id: shell-policy\n      matcher: {matcher}\n      failure_mode: {failure_mode}\n"
        f"      callable: guard_test_policy:{callable_name}\n"
    )


@pytest.fixture
def policy(isolated_home: Path) -> Iterator[object]:
    """The policy module, importable by guard.yaml, fresh for each test."""
    (isolated_home / "guard_test_policy.py").write_text(POLICY)
    sys.path.insert(0, str(isolated_home))
    sys.modules.pop("guard_test_policy", None)
    import guard_test_policy

    yield guard_test_policy
    sys.path.remove(str(isolated_home))
    sys.modules.pop("guard_test_policy", None)
