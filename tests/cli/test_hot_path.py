"""The hot path: what a cache-hit ``guard hook`` loads, held to a budget and shown module by module in the architecture.

A smart rule's verdict on a Bash call, cached by an earlier call, read back in a project in the home, as a real
session's is. ``docs/architecture.md`` lists the modules it loads by package in pipeline order; the list is made by
``python3 tests/cli/test_hot_path.py`` and a test fails when it and the tree differ, so a module that joins the path is
a choice someone made and wrote down, not a side effect.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __name__ == "__main__":  # run as a script: the tests' shared modules and this checkout's guard
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import pytest
from fixtures.processes import PROBE_CALLS, calls, guard_modules, modules, run_guard, threads_started

ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAP_START, MAP_END = "<!-- hot path: made by python3 tests/cli/test_hot_path.py -->", "<!-- end of hot path -->"

#: guard's own modules a cache hit may import: the figure measured when the budget was set (issue 38 aims at 25), so a
#: change that spreads the hit path further fails here instead of going unseen.
HIT_MODULE_BUDGET = 63

#: The packages a hit passes through, in the order the pipeline reaches them (docs/architecture.md draws it).
PIPELINE = (
    "",  # guard itself
    "cli",
    "adapters",
    "core",
    "config",
    "storage",
    "runtime",
    "hooks",
    "protection",
    "command_analysis",
    "session",
    "judge",
    "cache",
    "audit",
)

CONFIG = (
    "models: {quick: openai/stub-quick}\n"
    "hooks:\n  PreToolUse:\n    - id: no-delete\n      matcher: Bash\n      depth: quick\n      timeout: 60\n"
    "      rule: Deny shell commands that delete files outside the project.\n"
)


def cache_hit(home: Path) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """(the miss, the hit): two real ``guard hook`` processes on the same Bash call from two sessions, in ``home``/app,
    a trusted config with one smart rule, the model the loopback stub (called once: the second is the cache's)."""
    from conftest import trust_config

    from guard.testing.openai_stub import Reply, StubServer

    project = home / "app"
    project.mkdir()
    (project / "guard.yaml").write_text(CONFIG)
    trust_config(project / "guard.yaml")
    event = {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "cwd": str(project),
        "tool_input": {"command": "rm -rf ~/photos"},
    }
    with StubServer() as stub:
        stub.default = Reply.verdict("deny", "deletes a home folder", confidence=0.95)
        env = {"GUARD_API_BASE": stub.url}
        miss = run_guard(["hook"], project, stdin=json.dumps(event), env=env, probe=True)
        hit = run_guard(["hook"], project, stdin=json.dumps({**event, "session_id": "s2"}), env=env, probe=True)
        assert stub.calls == 1, hit.stderr  # the second call (another session, same tool call) was a cache hit
    return miss, hit


def hot_path_map(loaded: list[str]) -> str:
    """The table docs/architecture.md shows: each package the hit passes through, what it is, the modules it loads."""
    by_package: dict[str, list[str]] = {}
    for name in loaded:
        parts = name.split(".")
        by_package.setdefault(parts[1] if len(parts) > 1 else "", []).append(".".join(parts[2:]))
    unplaced = set(by_package) - set(PIPELINE)
    assert not unplaced, f"place these packages in PIPELINE, in the order a hit reaches them: {sorted(unplaced)}"
    lines = [
        f"A cache hit loads **{len(loaded)}** of guard's own modules (budget {HIT_MODULE_BUDGET}; issue 38 aims at 25).",
        "",
        "| package | what it is | modules loaded on a hit |",
        "|---|---|---|",
    ]
    for package in (p for p in PIPELINE if p in by_package):
        init = ROOT / "guard" / package / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        summary = " ".join(doc.split("\n\n")[0].split()).replace(":mod:`", "`").replace("``", "`")
        shown = ", ".join(f"`{m or '__init__'}`" for m in sorted(by_package[package]))
        lines.append(f"| `guard/{package}{'/' if package else ''}` | {summary.split('. ')[0].rstrip('.')}. | {shown} |")
    return "\n".join(lines)


def _shown() -> str:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert MAP_START in text and MAP_END in text, "docs/architecture.md has no hot path map"
    return text.split(MAP_START, 1)[1].split(MAP_END, 1)[0].strip()


@pytest.mark.slow
def test_a_cache_hit_loads_nothing_heavy_and_only_the_modules_shown(isolated_home: Path) -> None:
    """Nothing heavy, no thread, at most HIT_MODULE_BUDGET of guard's modules, and the very modules the architecture
    page lists (regenerate it with ``python3 tests/cli/test_hot_path.py``)."""
    miss, hit = cache_hit(isolated_home)
    for proc in (miss, hit):
        assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    assert "httpx" not in modules(miss) and "litellm" not in modules(miss)  # openai/ models take guard's own wire
    assert modules(hit) == []  # none of HEAVY (a Bash call: the self-protection rule's shell analysis runs too)
    assert threads_started(hit) == [] and threads_started(miss) != []  # the watchdog guards the model call only
    loaded = guard_modules(hit)
    assert len(loaded) <= HIT_MODULE_BUDGET, loaded
    assert _shown() == hot_path_map(loaded), "docs/architecture.md: run python3 tests/cli/test_hot_path.py"


def write_hot_path_map() -> None:
    """Measure a hit in a home of its own, write the table into docs/architecture.md and print the hit's hops (the
    calls from one of guard's modules into another, which the page counts)."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        for name in [n for n in os.environ if n.startswith("GUARD_") and not n.startswith("GUARD_E2E_")]:
            del os.environ[name]
        os.environ["HOME"] = str(home)
        for variable, folder in (
            ("XDG_CACHE_HOME", ".cache"),
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_STATE_HOME", ".local/state"),
        ):
            os.environ[variable] = str(home / folder)
        os.environ[PROBE_CALLS] = "1"
        _, hit = cache_hit(home)
    made = calls(hit)
    print(f"a cache hit: {len(made)} distinct calls between guard's modules, {sum(made.values())} in all")
    text = ARCHITECTURE.read_text(encoding="utf-8")
    head, _, rest = text.partition(MAP_START)
    _, _, tail = rest.partition(MAP_END)
    ARCHITECTURE.write_text(f"{head}{MAP_START}\n{hot_path_map(guard_modules(hit))}\n{MAP_END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    write_hot_path_map()
