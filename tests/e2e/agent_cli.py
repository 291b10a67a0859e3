"""Run a real agent CLI (Claude Code, Gemini CLI) headless against a local API stub.

Proof that guard works in a client has to come from the client itself. This
module finds each binary, builds an environment that can never reach the
internet or the developer's own login (a throwaway HOME, the stub as the API,
inherited vendor variables dropped), and runs one non-interactive turn.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixtures.sandbox_strays import strays_removed

__all__ = ["CLAUDE", "CODEX", "COPILOT", "GEMINI", "AgentCLI", "AgentRun"]

_REPO = Path(__file__).resolve().parents[2]


@dataclass
class AgentRun:
    """One finished headless turn: exit code, parsed JSON output, raw output and wall time."""

    returncode: int
    result: dict[str, Any] | None
    stdout: str
    stderr: str
    wall_s: float

    def describe(self) -> str:
        """Everything a failing assertion should show."""
        return f"exit {self.returncode}\nstdout: {self.stdout[-3000:]}\nstderr: {self.stderr[-3000:]}"


@dataclass(frozen=True)
class AgentCLI:
    """How to find, configure and run one client headless."""

    name: str
    npm_package: str
    binary: str  # name in node_modules/.bin and on PATH
    binary_env: str  # variable that may point at the binary
    drop_prefixes: tuple[str, ...]  # inherited variables that could carry a real login
    api_env: tuple[tuple[str, str], ...]  # fixed variables (keys, switches)
    base_url_env: str | None  # the variable that takes the stub's URL (None: it goes in the arguments)
    headless_args: tuple[str, ...]  # formatted with {prompt} and {base_url}
    home_files: tuple[tuple[str, str], ...] = ()  # files the throwaway HOME needs (path, content)
    # a TMPDIR beside the throwaway HOME, not above it: Codex refuses to make its sandbox helper (codex-linux-sandbox)
    # under the temp dir, and with a system bwrap on PATH its sandbox then cannot start. A real HOME is never under /tmp
    own_tmpdir: bool = False

    @property
    def install_hint(self) -> str:
        return (
            f"install it with `npm install --prefix .e2e {self.npm_package}` in the repository "
            f"(or point {self.binary_env} at a {self.binary} binary)"
        )

    def find(self) -> Path | None:
        """``$<binary_env>``, else the repository's ``.e2e`` install, else the binary on PATH."""
        explicit = os.environ.get(self.binary_env)
        if explicit:
            return Path(explicit) if Path(explicit).is_file() else None
        local = _REPO / ".e2e" / "node_modules" / ".bin" / self.binary
        if local.is_file():
            return local
        found = shutil.which(self.binary)
        return Path(found) if found else None

    def env(self, base_url: str, home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The client's environment. This interpreter's scripts directory goes first on PATH,
        so the ``guard hook`` in the client's settings runs the guard under test."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(self.drop_prefixes)}
        env.update(self.api_env)
        if self.base_url_env:
            env[self.base_url_env] = base_url
        env["HOME"] = str(home)
        env["PATH"] = os.pathsep.join([sysconfig.get_path("scripts"), env.get("PATH", "")])
        env.update(extra or {})
        return env

    def run(
        self,
        binary: Path,
        prompt: str,
        *,
        cwd: Path,
        base_url: str,
        home: Path,
        env: Mapping[str, str] | None = None,
        timeout_s: float = 300,
    ) -> AgentRun:
        """One headless turn in ``cwd`` with JSON output."""
        for relative, content in self.home_files:
            path = home / relative
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content)
        environ = self.env(base_url, home, env)
        if self.own_tmpdir:
            environ["TMPDIR"] = str(home.parent / "tmpdir")
            Path(environ["TMPDIR"]).mkdir(exist_ok=True)
        start = time.perf_counter()
        argv = [str(binary), *(arg.format(prompt=prompt, base_url=base_url) for arg in self.headless_args)]
        with strays_removed():
            proc = subprocess.run(
                argv, cwd=cwd, env=environ, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL
            )
        wall = time.perf_counter() - start
        try:
            result = json.loads(proc.stdout) if proc.stdout.strip() else None
        except json.JSONDecodeError:
            result = None
        return AgentRun(proc.returncode, result if isinstance(result, dict) else None, proc.stdout, proc.stderr, wall)


CLAUDE = AgentCLI(
    name="claude",
    npm_package="@anthropic-ai/claude-code",
    binary="claude",
    binary_env="GUARD_E2E_CLAUDE",
    drop_prefixes=("ANTHROPIC_", "CLAUDE"),
    api_env=(
        ("ANTHROPIC_API_KEY", "sk-ant-test"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("DISABLE_TELEMETRY", "1"),
        ("DISABLE_ERROR_REPORTING", "1"),
    ),
    base_url_env="ANTHROPIC_BASE_URL",
    # as root --dangerously-skip-permissions is refused: allow the tool by name instead
    headless_args=("-p", "{prompt}", "--output-format", "json", "--allowedTools", "Bash"),
)

GEMINI = AgentCLI(
    name="gemini",
    npm_package="@google/gemini-cli",
    binary="gemini",
    binary_env="GUARD_E2E_GEMINI",
    drop_prefixes=("GEMINI_", "GOOGLE_"),
    api_env=(("GEMINI_API_KEY", "stub-key"), ("GEMINI_CLI_TRUST_WORKSPACE", "true")),
    base_url_env="GOOGLE_GEMINI_BASE_URL",  # plain http is accepted for 127.0.0.1
    headless_args=("-p", "{prompt}", "--output-format", "json", "--approval-mode", "yolo"),
    home_files=((".gemini/settings.json", json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}})),),
)

CODEX = AgentCLI(
    name="codex",
    npm_package="@openai/codex",
    binary="codex",
    binary_env="GUARD_E2E_CODEX",
    drop_prefixes=("OPENAI_", "CODEX_"),
    api_env=(("GUARD_E2E_STUB_KEY", "sk-test"),),
    base_url_env=None,
    # Codex speaks only the Responses API to a custom provider. --trust accepts the project's
    # .codex/ layer and --dangerously-bypass-hook-trust stands in for the one-time hook review
    # a person does in the Codex TUI; without them the project's hooks are silently skipped.
    # No --sandbox: it would select the older sandbox settings over the permission profile guard install writes.
    headless_args=(
        "exec",
        "--skip-git-repo-check",
        "--json",
        "--trust",
        "--dangerously-bypass-hook-trust",
        "-c",
        'model_provider="stub"',
        "-c",
        'model_providers.stub={{name="stub", base_url="{base_url}/v1", wire_api="responses", '
        'env_key="GUARD_E2E_STUB_KEY"}}',
        "-m",
        "stub-model",
        "{prompt}",
    ),
    own_tmpdir=True,
)

COPILOT = AgentCLI(
    name="copilot",
    npm_package="@github/copilot",
    binary="copilot",
    binary_env="GUARD_E2E_COPILOT",
    drop_prefixes=("COPILOT_", "GITHUB_", "GH_"),
    # BYOK: an Anthropic-compatible provider (the stub) and no GitHub login; offline keeps it off GitHub's servers
    api_env=(
        ("COPILOT_PROVIDER_TYPE", "anthropic"),
        ("COPILOT_PROVIDER_API_KEY", "sk-ant-test"),
        ("COPILOT_MODEL", "claude-sonnet-4"),
        ("COPILOT_OFFLINE", "true"),
    ),
    base_url_env="COPILOT_PROVIDER_BASE_URL",
    # prints JSONL (one event a line), so AgentRun.result stays None; the stub's requests are what is asserted
    headless_args=("-p", "{prompt}", "--allow-all-tools", "--output-format", "json"),
)
