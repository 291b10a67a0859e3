"""What guard claims about a line without a model, in the world: the prover's proof, and two decisions built on it.

The prover (:func:`guard.protection.readonly.prove_script`) is what is verified. Two
effects are only escapes where guard relies on the proof without looking at paths
the way the line reads them (every escape also records whether the lanes and
self-protection let it through, its weight): reading guard's secret counts when self-protection
(:func:`guard.hooks.protect.judge`, which refuses any call that names the secret)
lets the line run, and printing the environment counts when the read-only lane
(:func:`guard.judge.read_only_lane.lane_result`, which keeps ``env`` and ``$VAR``
to the judge) allows it without a model. Whatever guard is first on ``sys.path``
is the one verified: the command-line run can put another worktree there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from .world import World

__all__ = ["Claims", "GuardClaims", "Verdict", "world_environment"]


class Verdict(Protocol):
    """A proof as the prover returns it."""

    @property
    def proven(self) -> bool: ...
    @property
    def reason(self) -> str: ...
    @property
    def written(self) -> tuple[str, ...]: ...
    @property
    def made(self) -> tuple[str, ...]: ...


class Claims(Protocol):
    """What the verifier asks guard about a line."""

    def proof(self, line: str, *, writes: bool) -> Verdict: ...
    def protect_allows(self, line: str) -> bool: ...
    def lane_allows(self, line: str, *, writes: bool = False) -> bool: ...


@contextmanager
def world_environment(world: World) -> Iterator[None]:
    """The world's environment in ``os.environ`` while guard decides (self-protection expands ``~`` from it)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(world.env())
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


class GuardClaims:
    """guard's own answers, asked the way its hooks ask them (a Bash call run in the world's project folder)."""

    def __init__(self, world: World) -> None:
        from guard.core.spec import HookSpec, ProtectSettings, SmartSettings
        from guard.protection.readonly import prove_script

        self.world = world
        self.env = world.env()
        self._prove = prove_script
        paths = world.protected()
        self._protect = HookSpec(
            id="guard.protect",
            kind="protect",
            event="pre_tool_use",
            source="builtin",
            options=ProtectSettings(paths=paths),
        )
        self._lanes = {
            writes: HookSpec(
                id="verifier.rule",
                kind="smart",
                event="pre_tool_use",
                options=SmartSettings(
                    rule="reads and project writes cannot break it",
                    skip_read_only=True,
                    skip_project_writes=writes,
                    paths=paths,
                ),
            )
            for writes in (False, True)
        }

    def proof(self, line: str, *, writes: bool) -> Verdict:
        """The prover's proof as the lanes ask for it: ``writes`` is the project-writes lane's (file utilities too)."""
        return self._prove(line, str(self.world.project), self.env, writes=writes, changes=writes)

    def _payload(self, line: str) -> dict[str, object]:
        return {
            "hook_event_name": "PreToolUse",
            "session_id": "verifier",
            "tool_name": "Bash",
            "tool_input": {"command": line},
            "cwd": str(self.world.project),
        }

    def protect_allows(self, line: str) -> bool:
        from guard.hooks.protect import judge

        with world_environment(self.world):
            return judge(self._protect, self._payload(line)).decision != "deny"

    def lane_allows(self, line: str, *, writes: bool = False) -> bool:
        """Whether a rule with ``skip_read_only`` (``skip_project_writes`` with ``writes``) allows the line without a model."""
        from guard.judge.read_only_lane import lane_result

        with world_environment(self.world):
            return lane_result(self._lanes[writes], self._payload(line), self.env) is not None
