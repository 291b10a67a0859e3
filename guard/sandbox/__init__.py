"""The client's own sandbox as the boundary around guard: what ``guard install`` writes there, and what ``guard doctor`` checks.

guard's hook refuses the tool calls it recognises as touching guard's files;
what it cannot see (a path built at run time, code decoded and run) it cannot
refuse. Where the client confines its agent's commands itself, that confinement
holds whatever the command looks like, so guard configures it:

- **sandboxed**: the client's sandbox keeps every path guard protects out of
  what the agent's commands (and its file tools) may write, and guard's secret
  out of what they may read. Checked by the operating system.
- **unsandboxed**: best effort: guard refuses what it recognises.

Claude Code (its sandbox: bubblewrap + socat on Linux, Seatbelt on macOS, and
permission deny rules for its file tools) and Codex CLI (a permission profile
on its workspace sandbox) can be sandboxed; Gemini CLI, Devin and Copilot
cannot hold guard's files out of reach (see :mod:`guard.sandbox.levels`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["SandboxChange"]


@dataclass(frozen=True, slots=True)
class SandboxChange:
    """What an install or uninstall did (or would do) to one client's sandbox settings file."""

    path: Path
    changed: bool
    text: str | None = None
    notes: tuple[str, ...] = ()
