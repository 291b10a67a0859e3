"""A bare install meets the extras: each command that needs one says the exact install line, at once.

The commands run as real processes with the extra's modules made unimportable
(a ``sitecustomize`` that refuses them, as a venv without them would); the wheel
smoke test (``.ci/wheel-smoke.sh``) checks the same messages from a bare wheel.
"""

from __future__ import annotations

import ast
import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from fixtures.importers import trapped_env
from fixtures.judge import StubServer

from guard.core.extras import DISTRIBUTION, EXTRAS

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def run_without(
    modules: list[str], args: list[str], cwd: Path, *, python: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``guard ARGS`` (or ``python ARGS``) in a process where ``modules`` cannot be imported."""
    command = [sys.executable, *(python or ["-m", "guard.cli.main"]), *args]
    return subprocess.run(
        command, capture_output=True, text=True, cwd=cwd, env=trapped_env(cwd, refuse=modules), timeout=120
    )


def _assert_install_line(done: subprocess.CompletedProcess[str], extra: str) -> None:
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert f"pip install '{DISTRIBUTION}[{extra}]'" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_guard_eval_without_the_eval_extra_names_it_before_judging_a_case(isolated_home: Path) -> None:
    with StubServer() as stub:
        (isolated_home / "guard.yaml").write_text(
            f"models:\n  quick: openai/stub\n  api_base: {stub.url}\nhooks:\n  PreToolUse:\n    - id: r\n      rule: Deny rm\n      depth: quick\n"
        )
        (isolated_home / "mine.jsonl").write_text(
            '{"id": "a", "tool_name": "Bash", "tool_input": {"command": "rm -rf ~/"}, "label": "deny"}\n'
        )
        done = run_without(
            ["numpy"], ["eval", "mine.jsonl", "--config", "guard.yaml", "--out", "out", "--no-progress"], isolated_home
        )
        assert stub.calls == 0  # nothing was judged: the message comes first
    _assert_install_line(done, "eval")
    assert "numpy is not installed" in done.stderr
    assert not (isolated_home / "out" / "results.jsonl").exists()


@pytest.mark.parametrize(
    ("command", "blocked", "extra"),
    [
        (["serve", "--port", "0"], ["uvicorn"], "serve"),
        (["view", "--port", "0"], ["jinja2"], "view"),
        (["cache", "stats"], ["redis"], "redis"),
    ],
    ids=["serve", "view", "redis-cache"],
)
def test_a_command_without_its_extra_names_the_install_line(
    command: list[str], blocked: list[str], extra: str, isolated_home: Path
) -> None:
    (isolated_home / "guard.yaml").write_text(
        "cache:\n  url: redis://127.0.0.1:1/0\n" if extra == "redis" else "hooks: {}\n"
    )
    done = run_without(blocked, command, isolated_home)
    _assert_install_line(done, extra)


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        ("guard.integrations.claude_agent_sdk", "claude_agent_sdk", "claude-agent-sdk"),
        ("guard.integrations.openai_agents", "agents", "openai-agents"),
        ("guard.integrations.langchain", "langchain", "langchain"),
    ],
)
def test_an_sdk_integration_without_its_sdk_fails_on_import_with_the_install_line(
    module: str, blocked: str, extra: str, isolated_home: Path
) -> None:
    probe = f"import {module}"
    done = run_without([blocked], [], isolated_home, python=["-c", probe])
    assert done.returncode == 1
    assert f"pip install '{DISTRIBUTION}[{extra}]'" in done.stderr, done.stderr
    assert "MissingExtra" in done.stderr  # an ImportError subclass: `except ImportError` still catches it


def test_the_distribution_name_is_the_one_messages_use() -> None:
    assert PYPROJECT["project"]["name"] == DISTRIBUTION
    declared = set(PYPROJECT["project"]["optional-dependencies"]) - {
        "dev",
        "docs",
    }  # tools for working on guard: no guard command needs them
    assert declared == set(EXTRAS)


def _distribution(requirement: str) -> str:
    name = requirement.split(";")[0]
    for mark in "[<>=!~ ":
        name = name.split(mark)[0]
    return name.strip().lower().replace("_", "-")


@pytest.mark.slow
def test_every_module_an_extra_checks_for_comes_with_that_extra() -> None:
    owners = importlib.metadata.packages_distributions()
    for extra, modules in EXTRAS.items():
        declared = {_distribution(r) for r in PYPROJECT["project"]["optional-dependencies"][extra]}
        for module in modules:
            found = (
                owners.get(module) or owners[module.split(".")[0]]
            )  # the map names top-level packages (opentelemetry, not opentelemetry.sdk)
            assert {d.lower() for d in found} & declared, (
                f"{module} is checked for the {extra} extra but not declared in it"
            )


@pytest.mark.slow
def test_every_third_party_import_is_declared() -> None:
    """numpy was imported by guard eval and declared nowhere: a bare install died after judging every case."""
    owners = importlib.metadata.packages_distributions()
    project = PYPROJECT["project"]
    declared = {_distribution(r) for r in project["dependencies"]}
    declared |= {
        _distribution(r) for extra, reqs in project["optional-dependencies"].items() if extra != "dev" for r in reqs
    }
    undeclared = []
    for path in sorted((ROOT / "guard").rglob("*.py")):
        if path.name == "pytest_plugin.py":
            continue  # loaded by pytest only, which is there by definition
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                else []
            )
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in ("guard", "__future__"):
                    continue
                if not {d.lower().replace("_", "-") for d in owners.get(top, [])} & declared:
                    undeclared.append(f"{path.relative_to(ROOT)} imports {top}")
    assert undeclared == []
