"""An SDK integration enforces what ``guard hook`` enforces: the config its user trusted, never a guard.yaml nobody reviewed.

The agent an SDK runs can write files (guard.yaml among them), and a cloned repository's
guard.yaml can name hooks that run code: an integration once enforced whatever was on disk,
without a word. It denies every tool call until the config is trusted, saying how;
``pinned=False`` is the documented opt-out for a program with no person to trust it.
"""

from __future__ import annotations

from pathlib import Path

from conftest import trust_config
from fixtures.integration import guard_yaml

from guard.integrations.tool_calls import ToolCallGate


def test_an_untrusted_config_denies_every_tool_call_and_says_how_to_trust_it(
    isolated_home: Path, policy: object
) -> None:
    config = isolated_home / "guard.yaml"
    config.write_text(guard_yaml("shell"))

    untrusted = ToolCallGate(str(config)).judge_sync("shell", {"command": "ls"})
    assert not untrusted.allowed and "guard trust" in (untrusted.message or ""), untrusted

    opted_out = ToolCallGate(str(config), pinned=False).judge_sync("shell", {"command": "ls"})
    assert opted_out.allowed, opted_out  # the file as it is on disk, as asked

    trust_config(config)
    gate = ToolCallGate(str(config))
    assert gate.judge_sync("shell", {"command": "ls"}).allowed
    denied = gate.judge_sync("shell", {"command": "rm -rf /srv"})
    assert not denied.allowed and "deleting folders is not allowed" in (denied.message or "")

    config.write_text(guard_yaml("shell").replace("shell_policy", "broken"))  # the agent edits the config it runs under
    still = ToolCallGate(str(config)).judge_sync("shell", {"command": "rm -rf /srv"})
    assert not still.allowed and "deleting folders is not allowed" in (still.message or ""), (
        still
    )  # the trusted copy holds
