"""Fixtures that run real agent CLIs against two stubs: the agent's own API, and OpenAI for guard's judge.

Each test gets a throwaway project with a guard.yaml, guard installed by the real
``guard install <client> --scope project``, and a HOME of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.processes import SOURCE_ROOT

import guard
from guard.testing.agent_script import Reply, ScriptedAgentServer
from guard.testing.anthropic_stub import AnthropicStub
from guard.testing.gemini_stub import GeminiStub
from guard.testing.openai_stub import Reply as JudgeReply
from guard.testing.openai_stub import StubServer
from guard.testing.responses_stub import ResponsesStub

from .agent_cli import CLAUDE, CODEX, GEMINI, AgentCLI, AgentRun

JUDGE_MODEL = "openai/stub-judge"


def _binary(cli: AgentCLI) -> Path:
    """The client's binary; skipped when absent unless GUARD_E2E_REQUIRE=1 (CI) makes that a failure."""
    binary = cli.find()
    if binary is None:
        message = f"{cli.name} CLI not found: {cli.install_hint}"
        if os.environ.get("GUARD_E2E_REQUIRE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return binary


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return _binary(CLAUDE)


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    return _binary(GEMINI)


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return _binary(CODEX)


def smart_rule(event: str, rule: str, *, matcher: str | None = None, hook_id: str = "rule") -> str:
    """guard.yaml with one smart rule, no decision cache (each test sees the judge asked)."""
    lines = ['cache:\n  url: "off"', "hooks:", f"  {event}:", f"    - id: {hook_id}"]
    if matcher:
        lines.append(f"      matcher: {matcher}")
    lines += [
        f"      rule: {rule}",
        "      depth: quick",
        "      failure_mode: fail_closed",
        # a judge call in a fresh process imports LiteLLM first: seconds on a busy CI box
        "      timeout: 120",
    ]
    return "\n".join(lines) + "\n"


def judge_says(deny_when: str, reason: str) -> Callable[[dict[str, Any]], JudgeReply]:
    """A judge that denies (with ``reason``) exactly when the judged event mentions ``deny_when``."""

    def respond(body: dict[str, Any]) -> JudgeReply:
        text = " ".join(str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user")
        if deny_when in text:
            return JudgeReply.verdict("deny", reason, confidence=0.97)
        return JudgeReply.verdict("allow", "harmless", confidence=0.97)

    return respond


@dataclass
class AgentProject:
    """A project directory wired for one e2e test: guard.yaml, the installed hook, the judge stub."""

    cli: AgentCLI
    binary: Path
    stub: type[ScriptedAgentServer]
    dir: Path
    home: Path
    judge: StubServer
    env: dict[str, str] = field(default_factory=dict)

    def configure(
        self, guard_yaml: str, *install_args: str, timeout: str = "180", **modules: str
    ) -> subprocess.CompletedProcess[str]:
        """Write guard.yaml (and Python hook modules by name), run `guard install <client>`, and trust the config as the user would."""
        (self.dir / "guard.yaml").write_text(guard_yaml)
        for name, source in modules.items():
            (self.dir / f"{name}.py").write_text(source)
        done = self.install(*install_args, timeout=timeout)
        trust_config(self.dir / "guard.yaml")  # the user's `guard trust` at their terminal (install has none here)
        return done

    def install(self, *args: str, timeout: str = "180") -> subprocess.CompletedProcess[str]:
        """`guard install <client> --scope project` of the tree under test, in the project, with the agent's HOME.

        A generous hook timeout: a judge call in a fresh process imports LiteLLM first. The agent's HOME, so the
        sandbox guard configures protects the state and secret the hooks under the agent will use.
        """
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "guard.cli.main",
                "install",
                self.cli.name,
                "--scope",
                "project",
                "--timeout",
                timeout,
                *args,
            ],
            cwd=self.dir,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "HOME": str(self.home), "PYTHONPATH": SOURCE_ROOT},
        )
        assert done.returncode == 0, done.stderr
        return done

    def doctor(self, **env: str) -> str:
        """What `guard doctor` of the tree under test says in the project, with the agent's HOME (and ``env``)."""
        done = subprocess.run(
            [sys.executable, "-m", "guard.cli.main", "doctor", "--model-timeout", "1"],
            cwd=self.dir,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "HOME": str(self.home), "PYTHONPATH": SOURCE_ROOT, **env},
        )
        return done.stdout

    def run(self, *turns: Reply, prompt: str = "do the task", cwd: Path | None = None) -> tuple[AgentRun, Any]:
        """One headless session answered by ``turns``, started in the project (or ``cwd``)."""
        with self.stub(turns) as agent:
            run = self.cli.run(
                self.binary,
                prompt,
                cwd=cwd or self.dir,
                base_url=agent.base_url,
                home=self.home,
                env=self.env,
                timeout_s=600,
            )
        assert run.returncode == 0, run.describe()
        return run, agent

    def judged(self, needle: str) -> bool:
        """Whether the judge was asked about something mentioning ``needle``."""
        return any(needle in str(body.get("messages")) for body in self.judge.requests)


def _project(cli: AgentCLI, binary: Path, stub: type[ScriptedAgentServer], tmp_path: Path) -> Iterator[AgentProject]:
    home, root = tmp_path / "agent-home", tmp_path / "project"
    home.mkdir()
    root.mkdir()
    with StubServer() as judge:
        yield AgentProject(
            cli=cli,
            binary=binary,
            stub=stub,
            dir=root,
            home=home,
            judge=judge,
            env={
                "GUARD_API_BASE": judge.url,
                "GUARD_MODEL_QUICK": JUDGE_MODEL,
                "GUARD_MODEL_THOROUGH": JUDGE_MODEL,
                "OPENAI_API_KEY": "sk-test",
                # callable hooks written into the project are importable; guard itself is the tree under test
                "PYTHONPATH": os.pathsep.join([str(root), str(Path(guard.__file__).resolve().parents[1])]),
            },
        )


@pytest.fixture
def claude_project(claude_bin: Path, tmp_path: Path, sandbox_tools: None) -> Iterator[AgentProject]:
    """A Claude Code project (guard install claude configures its sandbox: bubblewrap and socat)."""
    yield from _project(CLAUDE, claude_bin, AnthropicStub, tmp_path)


@pytest.fixture
def gemini_project(gemini_bin: Path, tmp_path: Path) -> Iterator[AgentProject]:
    """A Gemini CLI project."""
    yield from _project(GEMINI, gemini_bin, GeminiStub, tmp_path)


@pytest.fixture
def codex_project(codex_bin: Path, tmp_path: Path) -> Iterator[AgentProject]:
    """A Codex CLI project."""
    yield from _project(CODEX, codex_bin, ResponsesStub, tmp_path)
