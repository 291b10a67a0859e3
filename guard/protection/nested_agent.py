"""A Claude Code session the agent starts from a tool call must run under the same hooks as its own.

``claude -p …`` run in a Bash call is a second agent: its tool calls go through the hooks its settings load, which
are the project's, so guard judges them as it judges the first agent's (tried with the real CLI, 2.1.332). Some of
its options and variables change which settings load, and with them guard's hooks: ``--settings
'{"disableAllHooks": true}'``, ``--setting-sources user``, ``--bare`` (skip hooks), ``--safe-mode``, a plugin from a
folder or URL, a cloud or remote session, a background session, a new worktree, ``CLAUDE_CONFIG_DIR`` (another user
settings folder). Started that way, the second agent ran a ``touch`` the project's rule denies, with no hook at all.

So a session is allowed only with options known to leave its hooks alone (an allowlist: an option Claude Code adds
later is refused until it is listed here), and its management commands (``claude mcp add`` writes the MCP servers it
starts unasked, ``claude plugin install`` adds code that runs with every session) are refused too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from guard.protection.naming import Unit

__all__ = ["unhooked_agent"]

#: Options of a Claude Code session that leave the hooks its settings load as they are, and whether each takes a
#: value (None: an optional one).
_KEEPS_HOOKS: dict[str, bool | None] = {
    "-p": False,
    "--print": False,
    "--output-format": True,
    "--input-format": True,
    "--allowedTools": True,
    "--allowed-tools": True,
    "--disallowedTools": True,
    "--disallowed-tools": True,
    "--tools": True,
    "--model": True,
    "--fallback-model": True,
    "--effort": True,
    "--max-budget-usd": True,
    "--max-turns": True,
    "--system-prompt": True,
    "--append-system-prompt": True,
    "--json-schema": True,
    "--permission-mode": True,
    "--dangerously-skip-permissions": False,
    "--allow-dangerously-skip-permissions": False,
    "--add-dir": True,
    "--mcp-config": True,
    "--strict-mcp-config": False,
    "--agent": True,
    "--agents": True,
    "--verbose": False,
    "--include-partial-messages": False,
    "--include-hook-events": False,
    "--replay-user-messages": False,
    "--no-session-persistence": False,
    "--session-id": True,
    "-n": True,
    "--name": True,
    "-c": False,
    "--continue": False,
    "-r": None,
    "--resume": None,
    "--fork-session": False,
    "-d": None,
    "--debug": None,
    "-v": False,
    "--version": False,
    "-h": False,
    "--help": False,
}
#: ``claude``'s commands (2.1.332), which manage what every later session loads and runs, not a session of their own.
_COMMANDS = frozenset(
    "agents attach auth auto-mode doctor gateway import install logs mcp plugin plugins purge respawn rm setup-token "
    "stop kill ultrareview update upgrade".split()
)
_PACKAGE = "@anthropic-ai/claude-code"
_VARIABLE = "CLAUDE_CONFIG_DIR"


def _session_args(unit: Unit) -> list[str] | None:
    """The arguments of the Claude Code ``unit`` runs (``claude …``, ``npx @anthropic-ai/claude-code …``), or None."""
    program = os.path.basename(unit.program or "")
    if program in ("claude", "claude.exe"):
        return list(unit.args)
    for at, arg in enumerate(unit.args):
        if arg == _PACKAGE or arg.startswith(_PACKAGE + "@") or arg.endswith("/claude-code/cli.js"):
            return list(unit.args[at + 1 :])
    return None


def unhooked_agent(unit: Unit, said: Iterable[str] = ()) -> str | None:
    """Why the Claude Code session ``unit`` starts may run without guard's hooks, or None (not one, or one that keeps them).

    ``said``: the words of the line's commands before and including this one, where an ``export`` of the settings
    folder's variable would be.
    """
    args = _session_args(unit)
    if args is None:
        return None
    if any(_VARIABLE in text for text in (*said, *unit.texts)):
        return f"starts Claude Code with {_VARIABLE}, another settings folder, where guard's hooks may not be"
    rest = iter(args)
    first = True
    for arg in rest:
        if arg == "--":
            return None
        if not arg.startswith("-") or arg == "-":
            if first and arg in _COMMANDS:
                return f"runs Claude Code's `{arg}` command, which changes what every later session loads and runs"
            first = False
            continue
        name, _, value = arg.partition("=")
        if name not in _KEEPS_HOOKS:
            return (
                f"starts a Claude Code session with {name}, which may run it without guard's hooks (its options that "
                "keep them: guard/protection/nested_agent.py)"
            )
        if _KEEPS_HOOKS[name] and not value:
            next(rest, None)
    return None
