"""``guard doctor`` looks at the model of every kind a model judges (``Kind.judged``), a plugin's as guard's smart hooks."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.cli import GuardCli

from guard.core.kinds import KINDS, Kind

#: A plugin's kind that a model judges, registered for this test as an entry point would register it.
JUDGED = Kind("judged_by_a_model", "guard.hooks.smart:SmartHook", judged=True)


def test_doctor_checks_the_model_of_a_judged_plugin_kind(
    guard_cli: GuardCli, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said "guard is ready" with "no smart hook needs" a model, while a hook of such a kind could judge nothing."""
    monkeypatch.setattr(KINDS, "_targets", dict(KINDS._targets))  # the registration ends with this test
    KINDS.register(JUDGED.name, f"{__name__}:JUDGED")
    (isolated_home / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - kind: judged_by_a_model\n      matcher: Bash\n"
    )
    done = guard_cli(["doctor"], isolated_home)
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAIL") and "model" in line]
    assert any("no model for the quick tier" in line for line in failed), done.stdout + done.stderr
    assert done.returncode == 1 and "guard is ready" not in done.stdout
