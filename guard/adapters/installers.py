"""Where each client reads its hooks: the settings file, its layout, its event names and timeout unit.

A :class:`ClientProfile` is a client's installer: ``guard install`` writes guard's
entry by it and ``guard doctor`` reads the entries back and says what the client
does when guard fails. A :class:`~guard.adapters.Client` names its profile as
``"module:attribute"`` (guard's: ``guard.adapters.installers:CLAUDE``), so the
``guard hook`` path, which never installs, does not import this module.

Where each client reads hooks (from its documentation; see docs/clients.md for caveats):

=======  ==============================  ===================================  ===========
client   project scope                   user scope                           timeouts
=======  ==============================  ===================================  ===========
claude   .claude/settings.json           ~/.claude/settings.json              seconds
devin    .devin/hooks.v1.json (bare)     ~/.config/devin/config.json "hooks"  seconds
codex    .codex/hooks.json               ~/.codex/hooks.json                  seconds
gemini   .gemini/settings.json           ~/.gemini/settings.json              milliseconds
cursor   .cursor/hooks.json (flat)       ~/.cursor/hooks.json                 seconds
copilot  .github/hooks/guard.json        ~/.copilot/hooks/guard.json          seconds
=======  ==============================  ===================================  ===========
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guard.adapters import CLIENTS, Client, adapter
from guard.core.errors import ConfigError
from guard.core.events.names import client_event_name

__all__ = [
    "CLAUDE",
    "CLAUDE_MANAGED_FILE",
    "CODEX",
    "COPILOT",
    "COPILOT_POLICY_DIR",
    "CURSOR",
    "CURSOR_BLOCKING",
    "DEVIN",
    "GEMINI",
    "ClientProfile",
    "installable",
    "profile",
    "profile_for",
    "settings_path",
]

_GEMINI_NAMES = {
    "pre_tool_use": "BeforeTool",
    "post_tool_use": "AfterTool",
    "user_turn": "BeforeAgent",
    "stop": "AfterAgent",
    "session_start": "SessionStart",
    "session_end": "SessionEnd",
    "notification": "Notification",
    "pre_compact": "PreCompress",
}

#: Cursor's generic events (``preToolUse`` fires for every tool, the shell and MCP included).
_CURSOR_NAMES = {
    "pre_tool_use": "preToolUse",
    "post_tool_use": "postToolUse",
    "post_tool_use_failure": "postToolUseFailure",
    "user_turn": "beforeSubmitPrompt",
    "stop": "stop",
    "subagent_start": "subagentStart",
    "subagent_stop": "subagentStop",
    "session_start": "sessionStart",
    "session_end": "sessionEnd",
    "pre_compact": "preCompact",
}
#: Copilot CLI's events (only preToolUse can deny; guard hooks it alone by default).
_COPILOT_NAMES = {
    "pre_tool_use": "preToolUse",
    "post_tool_use": "postToolUse",
    "user_turn": "userPromptSubmitted",
    "stop": "agentStop",
    "subagent_stop": "subagentStop",
    "session_start": "sessionStart",
    "session_end": "sessionEnd",
}
#: Where Copilot CLI reads policy hooks on Linux and macOS (its hooks reference; Windows: %ProgramData%\GitHub\Copilot\policy.d).
COPILOT_POLICY_DIR = Path("/etc/github-copilot/policy.d")
#: Where Claude Code reads its managed settings (the settings docs; the 2.1.332 binary names the same folders).
CLAUDE_MANAGED_FILE = (
    Path("/Library/Application Support/ClaudeCode" if sys.platform == "darwin" else "/etc/claude-code")
    / "managed-settings.json"
)

#: Cursor events whose answer can stop something: their handler is ``failClosed``. guard answers every event itself,
#: its failure policy included (a fail_open hook's failure is an explicit allow), so a guard that Cursor could not
#: run or had to kill decided nothing, and must not read as "proceed".
CURSOR_BLOCKING = ("preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile", "beforeSubmitPrompt")


@dataclass(frozen=True)
class ClientProfile:
    """How one client lays out its hooks: files, event names, matcher and timeout units."""

    name: str
    project_file: str  # relative to the project directory
    user_file: str  # relative to the home directory (or the client's own config-dir variable)
    events: tuple[str, ...]  # client event names it documents
    default_events: tuple[str, ...]  # canonical names installed when --events is not given
    matcher: str | None  # None: leave it out (the client treats a missing matcher as "all tools")
    timeout_ms: bool = False
    user_dir_env: str | None = None  # e.g. CLAUDE_CONFIG_DIR replaces ~/.claude
    bare_project_file: bool = False  # the project file IS the hooks mapping (no top-level "hooks" key)
    handler_extra: tuple[tuple[str, Any], ...] = ()
    names: dict[str, str] | None = None  # canonical → client event name, when the client does not use Claude's
    flat: bool = False  # each event lists handlers directly (Cursor), not matcher groups with a "hooks" list
    file_keys: tuple[tuple[str, Any], ...] = ()  # top-level keys the file must carry (Cursor: "version": 1)
    typed: bool = True  # the handler says "type": "command"
    fail_closed_events: tuple[str, ...] = ()  # client events whose handler is written with "failClosed": true
    command_key: str = "command"  # the handler field holding the command (Copilot: "bash")
    timeout_key: str = "timeout"  # the handler field holding the timeout (Copilot: "timeoutSec")
    policy_file: Path | None = None  # a machine-wide file the client reads before every other (scope "policy")
    policy_keys: tuple[
        tuple[str, Any], ...
    ] = ()  # keys the policy file must carry (Claude Code: allowManagedHooksOnly)
    own_file: bool = (
        False  # the file is guard's alone (Copilot reads every *.json in its hooks folders): removed when emptied
    )
    #: What the client does when guard's hook program is missing, crashes or times out (``guard doctor`` says it).
    when_hook_fails: str = "not documented"
    #: What a user must still do or know once guard's entry is written (``guard install`` prints it).
    install_note: str | None = None

    def event_name(self, canonical: str) -> str:
        if self.names is not None:
            return self.names.get(canonical, canonical)
        return client_event_name(canonical)


#: session_start: there ``guard hook`` starts the warm service, so the session's first judged call finds it up.
_DEFAULT = ("pre_tool_use", "post_tool_use", "user_turn", "stop", "session_start")
#: permission_denied: Claude Code's own denials (auto mode, permission rules) go to the audit log and the session's history.
_CLAUDE_DEFAULT = (*_DEFAULT, "permission_denied")

CLAUDE = ClientProfile(
    name="claude",
    project_file=".claude/settings.json",
    user_file=".claude/settings.json",
    user_dir_env="CLAUDE_CONFIG_DIR",
    events=(
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PermissionRequest",
        "PermissionDenied",
        "UserPromptSubmit",
        "Stop",
        "StopFailure",
        "SubagentStart",
        "SubagentStop",
        "SessionStart",
        "SessionEnd",
        "Notification",
        "PreCompact",
        "PostCompact",
        "PostToolBatch",
        "TaskCreated",
        "TaskCompleted",
        "ConfigChange",
    ),
    default_events=_CLAUDE_DEFAULT,
    matcher="*",
    policy_file=CLAUDE_MANAGED_FILE,
    policy_keys=(("allowManagedHooksOnly", True),),
    # a hook that cannot start, crashes or times out blocks the call (Claude Code >= 2.1.295; ignored on Stop)
    handler_extra=(("onFailure", "block"),),
    when_hook_fails='blocks the call (onFailure: "block", Claude Code 2.1.295 and later)',
)

DEVIN = ClientProfile(
    name="devin",
    project_file=".devin/hooks.v1.json",
    user_file=".config/devin/config.json",
    bare_project_file=True,
    events=(
        "PreToolUse",
        "PostToolUse",
        "PermissionRequest",
        "UserPromptSubmit",
        "Stop",
        "SessionStart",
        "SessionEnd",
        "PostCompaction",
    ),
    default_events=_DEFAULT,
    matcher=None,  # Devin matchers are regexes; "*" would not compile
    when_hook_fails="not documented by Devin (untested here): guard's deadline answers before a timeout, nothing covers a missing program",
    install_note=(
        "Devin also runs the hooks in .claude/settings.json: with guard installed for both, its .claude entry "
        "steps aside under Devin and this entry judges each call once."
    ),
)

CODEX = ClientProfile(
    name="codex",
    project_file=".codex/hooks.json",
    user_file=".codex/hooks.json",
    user_dir_env="CODEX_HOME",
    events=(
        "PreToolUse",
        "PostToolUse",
        "PermissionRequest",
        "UserPromptSubmit",
        "Stop",
        "SessionStart",
        "PreCompact",
        "PostCompact",
    ),
    default_events=_DEFAULT,
    matcher=None,  # regex matchers; missing = every tool
    when_hook_fails="lets the call run: Codex has no fail-closed setting (openai/codex#41979); guard's deadline answers before a timeout",
    install_note=(
        "Codex runs a new or changed hook only after you trust it: start `codex` and accept 'Hooks need "
        "review' (or use /hooks). Project hooks (.codex/hooks.json) also need a trusted project."
    ),
)

GEMINI = ClientProfile(
    name="gemini",
    project_file=".gemini/settings.json",
    user_file=".gemini/settings.json",
    events=tuple(_GEMINI_NAMES.values()),
    default_events=_DEFAULT,
    matcher=None,  # regex for tools, exact string for lifecycle events; missing = all
    timeout_ms=True,
    handler_extra=(("name", "guard"),),
    names=_GEMINI_NAMES,
    when_hook_fails="lets the call run with a warning (an exit code other than 0 or 2 is a warning; no fail-closed setting); "
    "guard's deadline answers before a timeout",
    install_note='Older Gemini CLI releases run hooks only with `"tools": {"enableHooks": true}` in settings.json.',
)

CURSOR = ClientProfile(
    name="cursor",
    project_file=".cursor/hooks.json",
    user_file=".cursor/hooks.json",
    events=(
        *_CURSOR_NAMES.values(),
        "beforeShellExecution",
        "afterShellExecution",
        "beforeMCPExecution",
        "afterMCPExecution",
        "beforeReadFile",
        "afterFileEdit",
    ),
    default_events=_DEFAULT,
    matcher=None,  # a handler without a matcher runs for every tool
    names=_CURSOR_NAMES,
    flat=True,
    file_keys=(("version", 1),),
    typed=False,
    fail_closed_events=CURSOR_BLOCKING,
    when_hook_fails="blocks the call where guard wrote failClosed: true (tool calls, reads, prompts)",
    install_note=(
        "Cursor also loads .claude/settings.json hooks when its third-party hooks setting is on; install "
        "guard for one of the two per project. Restart Cursor (or reopen the project) to load hooks.json."
    ),
)

COPILOT = ClientProfile(
    name="copilot",
    project_file=".github/hooks/guard.json",
    user_file=".copilot/hooks/guard.json",
    user_dir_env="COPILOT_HOME",
    events=tuple(_COPILOT_NAMES.values()),
    # only preToolUse's answer is honoured, and an event without its name in the payload reads as preToolUse
    default_events=("pre_tool_use",),
    matcher=None,
    names=_COPILOT_NAMES,
    flat=True,
    file_keys=(("version", 1),),
    command_key="bash",
    timeout_key="timeoutSec",
    policy_file=COPILOT_POLICY_DIR / "guard.json",
    own_file=True,
    when_hook_fails="lets the call run (Copilot CLI ignores a hook that fails or times out; no fail-closed setting); "
    "guard's deadline answers before a timeout",
    install_note=(
        "Copilot CLI also runs the hooks in .claude/settings.json; install guard for one of the two per "
        "project. In -p mode it loads a repository's .github/hooks only for a trusted folder; user and policy "
        "hooks always load."
    ),
)


def profile(client: Client | str) -> ClientProfile | None:
    """The installer ``client`` names (a plugin's client too); None when guard cannot install it."""
    found = client if isinstance(client, Client) else adapter(client)
    if found.installer is None:
        return None
    module_name, _, attribute = found.installer.partition(":")
    loaded = getattr(importlib.import_module(module_name), attribute)
    if not isinstance(loaded, ClientProfile):
        raise TypeError(
            f"client {found.name!r}: its installer {found.installer!r} is not a guard.adapters.installers.ClientProfile"
        )
    return loaded


def installable() -> dict[str, ClientProfile]:
    """Every client guard can install, by name: its own and the installed plugins' (reads the entry points)."""
    found = {name: profile(name) for name in CLIENTS.names()}
    return {name: found_profile for name, found_profile in found.items() if found_profile is not None}


def profile_for(client: str) -> ClientProfile:
    """The installer of ``client``; UnknownName (a ConfigError) when nothing registers it, ConfigError when it has none."""
    found = profile(client)
    if found is None:
        raise ConfigError(f"client {client!r} names no installer: guard does not know where it reads hooks")
    return found


def settings_path(client: str, scope: str, *, project_dir: Path, home: Path) -> Path:
    """The file ``client`` reads hooks from at ``scope`` (``project``, ``user``, or for Copilot ``policy``)."""
    profile = profile_for(client)
    if scope == "project":
        return project_dir / profile.project_file
    if scope == "policy" and profile.policy_file is not None:
        return profile.policy_file
    if scope != "user":
        more = " or policy" if profile.policy_file is not None else ""
        raise ConfigError(f"unknown scope {scope!r} for {client}; use project, user{more}")
    if profile.user_dir_env and os.environ.get(profile.user_dir_env):
        # the variable replaces the client's folder in the home directory (~/.claude, ~/.codex, ~/.copilot)
        return Path(os.environ[profile.user_dir_env]).joinpath(*Path(profile.user_file).parts[1:])
    return home / profile.user_file
