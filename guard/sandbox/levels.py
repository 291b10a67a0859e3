"""Each client's protection level here, and the one entry point ``guard install`` and ``guard doctor`` use per client.

**sandboxed**: the client's sandbox, as configured, keeps every path guard
protects out of what the agent may write and the secret out of what it may read.
**unsandboxed**: guard refuses what it recognises, and nothing more holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from guard.sandbox import SandboxChange, claude, codex
from guard.sandbox.paths import ProtectedPaths

__all__ = ["CANNOT", "SANDBOXES", "Level", "configure", "level"]

#: Clients whose own sandbox guard configures.
SANDBOXES = {"claude": claude, "codex": codex}
#: Why the other clients stay unsandboxed (what guard found in each).
CANNOT = {
    "gemini": "Gemini CLI's sandbox (tools.sandbox: docker or podman, sandbox-exec on macOS) runs the whole CLI, guard's hooks "
    "included, inside it, so it cannot keep guard's files from the agent while guard writes them; its tool sandboxing "
    "(security.toolSandboxing, bubblewrap) keeps writes in the workspace but cannot deny reading guard's secret",
    "devin": "Devin has no sandbox guard can configure",
    "copilot": "Copilot CLI has no sandbox guard can configure",
    "cursor": "Cursor's sandbox is set in its own settings, not in a file guard can configure",
}


@dataclass(frozen=True, slots=True)
class Level:
    """``sandboxed`` or not, and why not (each reason names what to change)."""

    client: str
    reasons: tuple[str, ...]

    @property
    def sandboxed(self) -> bool:
        return not self.reasons

    @property
    def name(self) -> str:
        return "sandboxed" if self.sandboxed else "unsandboxed"


def configure(
    client: str,
    scope: str,
    paths: ProtectedPaths,
    *,
    project_dir: Path,
    home: Path,
    uninstall: bool = False,
    dry_run: bool = False,
) -> SandboxChange | None:
    """Write (or remove) guard's settings in ``client``'s sandbox; None for a client without one."""
    module = SANDBOXES.get(client)
    if module is None:
        return None
    change: SandboxChange = module.apply(
        scope, paths, project_dir=project_dir, home=home, uninstall=uninstall, dry_run=dry_run
    )
    return change


def level(client: str, paths: ProtectedPaths, *, project_dir: Path, home: Path) -> Level:
    """``client``'s protection level as its settings here stand (the settings only: :mod:`guard.sandbox.probe` tries it)."""
    module = SANDBOXES.get(client)
    if module is None:
        return Level(client, (CANNOT.get(client, f"{client} has no sandbox guard knows"),))
    return Level(client, tuple(module.gaps(paths, project_dir, home)))
