"""``guard check`` says when nothing judged a call: an --event no hook could be under is an error, a tool no hook matches a note.

A user who typed ``--event PreTool`` (or ``pretooluse``) was shown ``decision: allow``, exit 0, for ``rm -rf ~/x``:
no hook is under a misspelt event, so nothing ran and nothing said so. A tool no hook matches is allowed, as the
hook allows it, and says that nothing judged it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.cli import GuardCli

pytestmark = pytest.mark.project(
    config=(
        "custom_events: [deploy]\nhooks:\n"
        "  PreToolUse:\n    - id: no-rm\n      matcher: Bash\n      command: \"grep -q 'rm -rf' && exit 2 || exit 0\"\n"
        "  deploy:\n    - id: no-deploy-rm\n      command: \"grep -q 'rm -rf' && exit 2 || exit 0\"\n"
    )
)

CALL = ["check", "--tool", "Bash", "--input", '{"command": "rm -rf ~/x"}']


@pytest.mark.parametrize(
    ("event", "meant"), [("pretooluse", "pre_tool_use"), ("PreTooluse", "PreToolUse"), ("PreTool", None)]
)
def test_a_misspelt_event_is_an_error_not_an_allow(
    guard_cli: GuardCli, project: Path, event: str, meant: str | None
) -> None:
    out = guard_cli([*CALL, "--event", event], project)
    assert out.returncode == 3 and "decision" not in out.stdout, out
    assert (
        f"--event {event!r} is not an event guard knows, nor a custom event the config's hooks are under" in out.stderr
    )
    assert (f"did you mean {meant}?" if meant else "PreToolUse, PostToolUse") in out.stderr, out.stderr


@pytest.mark.parametrize("event", ["PreToolUse", "pre_tool_use", "BeforeTool", "deploy"])
def test_an_event_by_any_of_its_names_or_a_declared_custom_one_is_judged(
    guard_cli: GuardCli, project: Path, event: str
) -> None:
    out = guard_cli([*CALL, "--event", event], project)
    assert out.returncode == 1 and "decision: deny" in out.stdout, out


def test_a_tool_no_hook_matches_is_allowed_and_says_nothing_judged_it(guard_cli: GuardCli, project: Path) -> None:
    out = guard_cli(["check", "--tool", "Bsh", "--input", '{"command": "rm -rf ~/x"}'], project)
    assert out.returncode == 0 and "decision: allow" in out.stdout, out
    assert "no hook runs for Bsh at PreToolUse, so nothing judged this call" in out.stderr, out.stderr
    judged = guard_cli(CALL, project)
    assert judged.returncode == 1 and "nothing judged" not in judged.stderr, judged
