"""The end-to-end harness does what its skip hints say."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_binary_variable_a_skip_hint_names_is_honoured(tmp_path: Path) -> None:
    """The hint said to set GUARD_E2E_CLAUDE, and conftest.py deleted it before any test could read it."""
    missing = tmp_path / "no-such-claude"
    env = {**os.environ, "GUARD_E2E_CLAUDE": str(missing)}
    env.pop("GUARD_E2E_REQUIRE", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "tests/integrations/test_integrations_claude_plugin.py",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert "claude CLI not found" in done.stdout and "GUARD_E2E_CLAUDE" in done.stdout, done.stdout[-2000:]
