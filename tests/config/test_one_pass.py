"""Loading the config is one pass in one direction (issue 38): locate → trust/pin → read (the trusted copy's snapshot, or
parse and validate) → assemble (org policy, tier timeouts, self-protection) → the registry; no step calls back into one
before it or into the pass that runs them, so each step is a function of what the one before returned.

Seen through a real ``guard hook`` process, whose calls between guard's modules the probe records.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.processes import PROBE_CALLS, calls, run_guard

#: The pass that runs the steps, then the steps in the order it runs them; modules of one step share a rank.
STEPS = {
    "guard.config.pinning": 0,
    "guard.config.search": 1,
    "guard.config.trust_store": 2,
    "guard.config.snapshot": 3,
    "guard.config.loading": 3,
    "guard.config.parse": 3,
    "guard.config.entries": 3,
    "guard.config.assembly": 4,
    "guard.config.hook_scripts": 4,
    "guard.protection.targets": 5,
}

CONFIG = """\
hooks:
  PreToolUse:
    - id: no-delete
      matcher: Bash
      rule: Deny shell commands that delete files outside the project.
    - id: lint
      matcher: Write
      command: python3 checks/lint.py
"""


#: The one function a step is given to call: the reader the pass hands the parser, by which a trusted copy and its
#: includes are read from guard's sealed store, never from the disk the agent writes (:func:`guard.config.parse.parse_config`).
GIVEN = frozenset({"reader"})


def _back_calls(made: dict[tuple[str, str], int]) -> list[str]:
    """The calls from a step into the pass or into an earlier step, but into a function the step was given."""
    found = []
    for caller, callee in made:
        (source, _, _), (target, _, function) = caller.rpartition("."), callee.rpartition(".")
        if source in STEPS and target in STEPS and STEPS[target] < STEPS[source] and function not in GIVEN:
            found.append(f"{caller} -> {callee}")
    return found


@pytest.mark.project(config=CONFIG, files={"checks/lint.py": "print('{}')\n"})
def test_the_config_pass_never_calls_back(project: Path) -> None:
    event = {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "cwd": str(project),
        "tool_input": {"file_path": "README.md"},
    }
    seen: dict[tuple[str, str], int] = {}
    for _ in range(2):  # the first call of a trusted config and a later one (its compiled snapshot)
        proc = run_guard(["hook"], project, stdin=json.dumps(event), env={PROBE_CALLS: "1"}, probe=True)
        assert proc.returncode == 0, proc.stderr
        seen.update(calls(proc))
    reached = {callee.rpartition(".")[0] for _, callee in seen}
    assert {
        "guard.config.search",
        "guard.config.trust_store",
        "guard.config.assembly",
        "guard.protection.targets",
    } <= reached
    assert _back_calls(seen) == []


def test_the_check_sees_a_call_back() -> None:
    made = {
        ("guard.config.pinning.load_trusted", "guard.config.assembly.with_org"): 1,
        ("guard.protection.targets.<listcomp>", "guard.config.assembly.loaded_scripts"): 1,
    }
    assert _back_calls(made) == ["guard.protection.targets.<listcomp> -> guard.config.assembly.loaded_scripts"]
