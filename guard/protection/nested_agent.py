"""A second agent the agent starts from a tool call must run under the same hooks and sandbox as its own.

``claude -p …``, ``codex exec …``, ``gemini -p …`` or ``copilot -p …`` run in a Bash call is a second agent: its tool
calls go through the hooks its settings load, the user's and the project's, so guard judges them as it judges the first
agent's (tried with each real CLI: Claude Code 2.1.332, Codex 0.171, Gemini CLI 0.61, Copilot CLI 1.0.102). Some of
their options and variables change which settings load, and with them guard's hooks and the sandbox profile ``guard
install`` wrote: ``claude --settings '{"disableAllHooks": true}'`` or ``CLAUDE_CODE_SIMPLE=1``, ``codex exec
--disable hooks`` or ``-c features.hooks=false`` (``-s``, ``-c sandbox_mode=…`` put guard's profile aside), ``gemini``
with ``GEMINI_CLI_HOME``, ``copilot`` with ``COPILOT_HOME`` or ``--config-dir`` (another user settings folder). Started
that way, the second agent ran a call the project's rule denies, with no hook at all.

So a session is allowed only with options known to leave its hooks alone (an allowlist per client, from the real CLI's
own parser: an option a client adds later is refused until it is listed here); its variables (``CODEX_…``) only when
listed, and never with another ``HOME`` or ``XDG_CONFIG_HOME``, an earlier command of the line that changes the shell's
state (``export``, ``source``), nor in another folder than the call's (whose project settings may hold no guard hook).
Its management commands (``claude mcp add``, ``codex features enable``, ``gemini hooks disable``, ``copilot plugin
install``) are refused too: they change what every later session loads and runs. A client started through a program
that runs a command or code it is given (``sudo``, ``ssh``, ``sh -c``) is refused: guard cannot read its options there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from guard.protection.self_invocation import CODE_RUNNERS, COMMAND_RUNNERS, code_words

if TYPE_CHECKING:
    from guard.protection.naming import Unit

__all__ = ["AGENTS", "AgentCli", "unhooked_agent"]

#: Variables that move every client's user settings (and with them a user-scope install of guard's hooks).
_HOME_VARIABLES = ("HOME", "XDG_CONFIG_HOME")
#: Programs that start a package's program named among their arguments (``npx @openai/codex``, ``pnpm dlx …``,
#: ``node …/bin/codex.js``), and the words of theirs that come before it.
_LAUNCHERS = frozenset({"npx", "pnpx", "bunx", "npm", "pnpm", "yarn", "bun", "node", "nodejs", "deno", "corepack"})
_LAUNCHER_WORDS = frozenset({"exec", "x", "dlx", "run", "--"})


@dataclass(frozen=True)
class AgentCli:
    """One agent CLI as its own option parser reads it: what keeps guard's hooks, what is refused.

    ``options``: the options known to leave its hooks and sandbox alone, and whether each takes a value (None: an
    optional one); ``sessions``: the commands that start a session or print, whose own options follow;
    ``commands``: its management commands; ``prefixes``: the namespace of its variables, of which ``variables`` are
    known to leave hooks alone; ``config``: the options that set one configuration key (``codex -c KEY=VALUE``), and
    ``keys``: the keys they may set; ``prints``: the options that, alone, print its version or help and end it before
    any settings, hook or session (each real CLI run so, with a project's settings starting hooks, ran none).
    """

    name: str
    programs: frozenset[str]
    packages: tuple[str, ...]
    options: Mapping[str, bool | None]
    commands: frozenset[str]
    prefixes: tuple[str, ...]
    variables: frozenset[str] = frozenset()
    sessions: frozenset[str] = frozenset()
    config: frozenset[str] = frozenset()
    keys: frozenset[str] = frozenset()
    prints: frozenset[str] = frozenset({"-v", "--version", "-h", "--help"})

    def names(self, arg: str) -> bool:
        """Whether ``arg`` names this client's program or package (``codex``, ``@openai/codex@0.171``, a path into it)."""
        base = os.path.basename(arg)
        return (
            base in self.programs
            or any(arg == package or arg.startswith(package + "@") or f"{package}/" in arg for package in self.packages)
            or (base.endswith((".js", ".cjs", ".mjs")) and base.rsplit(".", 1)[0] in self.programs)
        )


def _flags(*names: str) -> dict[str, bool | None]:
    return dict.fromkeys(names, False)


def _valued(*names: str) -> dict[str, bool | None]:
    return dict.fromkeys(names, True)


def _optional(*names: str) -> dict[str, bool | None]:
    return dict.fromkeys(names, None)


#: Claude Code 2.1.332 (``claude --help``, tests/e2e/test_claude_nested.py).
CLAUDE = AgentCli(
    name="Claude Code",
    programs=frozenset({"claude", "claude.exe"}),
    packages=("@anthropic-ai/claude-code",),
    options={
        **_flags("-p", "--print", "--dangerously-skip-permissions", "--allow-dangerously-skip-permissions"),
        **_flags("--strict-mcp-config", "--verbose", "--include-partial-messages", "--include-hook-events"),
        **_flags("--replay-user-messages", "--no-session-persistence", "-c", "--continue", "--fork-session"),
        **_flags("-v", "--version", "-h", "--help"),
        **_valued("--output-format", "--input-format", "--allowedTools", "--allowed-tools", "--disallowedTools"),
        **_valued("--disallowed-tools", "--tools", "--model", "--fallback-model", "--effort", "--max-budget-usd"),
        **_valued("--max-turns", "--system-prompt", "--append-system-prompt", "--json-schema", "--permission-mode"),
        **_valued("--add-dir", "--mcp-config", "--agent", "--agents", "--session-id", "-n", "--name"),
        **_optional("-r", "--resume", "-d", "--debug"),
    },
    commands=frozenset(
        "agents attach auth auto-mode doctor gateway import install logs mcp plugin plugins purge respawn rm "
        "setup-token stop kill ultrareview update upgrade".split()
    ),
    prefixes=("CLAUDE_",),  # CLAUDE_CONFIG_DIR, CLAUDE_CODE_SIMPLE (--bare), CLAUDE_CODE_MANAGED_SETTINGS_PATH …
    variables=frozenset({"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_MAX_OUTPUT_TOKENS"}),
)

#: Codex 0.171 (``codex --help``, ``codex exec --help``, ``codex features list``; tests/e2e/test_agents_nested.py).
#: Left out: ``-c`` other keys, ``--enable``/``--disable`` (``--disable hooks``), ``-p/--profile`` (another config
#: file), ``-s/--sandbox``, ``--dangerously-bypass-approvals-and-sandbox``, ``--approve-for-me`` and ``--add-dir``
#: (another sandbox than guard's profile), ``--ignore-user-config`` (and with it the project's trust record),
#: ``--ignore-rules``, ``--trust``, ``--dangerously-bypass-hook-trust`` (hooks nobody reviewed), ``-C/--cd`` and
#: ``--worktree`` (another folder's settings), ``--remote`` (another machine's).
CODEX = AgentCli(
    name="Codex",
    programs=frozenset({"codex"}),
    packages=("@openai/codex",),
    options={
        **_flags("--strict-config", "--oss", "--search", "--no-alt-screen", "--no-daemon", "-h", "--help"),
        **_flags("-V", "--version", "--skip-git-repo-check", "--ephemeral", "--json", "--last", "--all"),
        **_valued("-c", "--config", "-i", "--image", "-m", "--model", "--local-provider", "-a", "--ask-for-approval"),
        **_valued("--thread-source", "--cyber-access-program", "--output-schema", "--color"),
        **_valued("-o", "--output-last-message"),
    },
    sessions=frozenset({"exec", "e", "review", "resume", "fork", "help"}),
    commands=frozenset(
        "agents login logout mcp plugin app-server remote-control completion update doctor sandbox debug apply a "
        "queue archive delete migrate-rollouts migrate-nfs-db unarchive cloud exec-server features mcp-server".split()
    ),
    prefixes=("CODEX_",),  # CODEX_HOME, CODEX_SQLITE_HOME, CODEX_EXEC_SERVER_URL …
    variables=frozenset({"CODEX_API_KEY"}),
    config=frozenset({"-c", "--config"}),
    keys=frozenset({"model", "model_reasoning_effort", "model_reasoning_summary", "model_verbosity"}),
    prints=frozenset({"-V", "--version", "-h", "--help"}),
)

#: Gemini CLI 0.61 (``gemini --help``; tests/e2e/test_agents_nested.py). Left out: ``-e/--extensions``,
#: ``--policy``/``--admin-policy``, ``-s/--sandbox`` (the session runs again in a container, without the hook's
#: program), ``-w/--worktree``, ``--acp``, ``--skip-trust`` (a folder the user did not trust).
GEMINI = AgentCli(
    name="Gemini CLI",
    programs=frozenset({"gemini"}),
    packages=("@google/gemini-cli",),
    options={
        **_flags("-d", "--debug", "-y", "--yolo", "-l", "--list-extensions", "--list-sessions", "--screen-reader"),
        **_flags("--raw-output", "--accept-raw-output-risk", "-v", "--version", "-h", "--help"),
        **_valued("-m", "--model", "-p", "--prompt", "-i", "--prompt-interactive", "--approval-mode"),
        **_valued("--allowed-mcp-server-names", "--allowed-tools", "-r", "--resume", "--session-id", "-o"),
        **_valued("--output-format", "--include-directories", "--session-file"),
    },
    commands=frozenset("mcp extensions extension skills skill hooks hook gemma".split()),
    prefixes=("GEMINI_",),  # GEMINI_CLI_HOME, GEMINI_CLI_SYSTEM_SETTINGS_PATH, GEMINI_SANDBOX …
    variables=frozenset({"GEMINI_API_KEY", "GEMINI_MODEL"}),
)

#: Copilot CLI 1.0.102 (``copilot --help``, ``copilot help environment``; tests/e2e/test_agents_nested.py). Left
#: out: ``--config-dir`` (hidden, another settings folder), ``--add-dir`` and ``--plugin-dir`` (config loaded as
#: trusted), ``--additional-mcp-config``, ``--enable-mcp-server``, ``--extension-sdk-path``, ``-C``, ``--bash-env``,
#: ``--experimental``, ``--acp``, ``--remote``, ``--connect``, ``--environment-host``, ``--log-dir``.
COPILOT = AgentCli(
    name="Copilot CLI",
    programs=frozenset({"copilot"}),
    packages=("@github/copilot",),
    options={
        **_flags("-v", "--version", "--fleet", "--trust-folder", "-s", "--silent", "--disable-client-telemetry"),
        **_flags("--enable-memory", "--continue", "--allow-all-tools", "--allow-all-paths", "--disallow-temp-dir"),
        **_flags("--banner", "--screen-reader", "--plain-diff", "--disable-builtin-mcps", "--allow-all-urls"),
        **_flags("--allow-all", "--yolo", "--autopilot", "--plan", "--no-custom-instructions", "--no-auto-update"),
        **_flags("--no-ask-user", "--no-color", "--no-experimental", "--no-bash-env", "--no-mouse", "--no-remote"),
        **_flags("--no-remote-export", "-h", "--help"),
        **_valued("-i", "--interactive", "-p", "--prompt", "--model", "--reasoning-effort", "--context"),
        **_valued("--auto-tier", "--agent", "-n", "--name", "--session-id", "--log-level", "--stream"),
        **_valued("--output-format", "--attachment", "--disable-mcp-server", "--max-autopilot-continues", "--mode"),
        **_valued("--max-ai-credits", "--usage-output-file"),
        **_optional("-r", "--resume", "--share", "--allow-tool", "--deny-tool", "--available-tools"),
        **_optional("--excluded-tools", "--secret-env-vars", "--allow-url", "--deny-url"),
    },
    sessions=frozenset({"help", "version"}),
    commands=frozenset(
        "app login init config update workflow sessions memories plugin mcp skill instruction lsp sandbox "
        "completion".split()
    ),
    prefixes=("COPILOT_",),  # COPILOT_HOME, COPILOT_PROVIDER_API_KEY_COMMAND (a command run with no hook) …
    variables=frozenset(
        {"COPILOT_MODEL", "COPILOT_OFFLINE", "COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_TYPE"}
        | {"COPILOT_PROVIDER_API_KEY", "COPILOT_GITHUB_TOKEN", "COPILOT_ALLOW_ALL"}
    ),
)

AGENTS = (CLAUDE, CODEX, GEMINI, COPILOT)


def _session_args(unit: Unit, agent: AgentCli) -> list[str] | None:
    """The arguments of the ``agent`` session ``unit`` runs (``codex …``, ``npx @openai/codex …``, ``node
    …/bin/codex.js …``), or None."""
    if agent.names(unit.program or ""):
        return list(unit.args)
    if os.path.basename(unit.program or "") not in _LAUNCHERS:
        return None
    for at, arg in enumerate(unit.args):
        if arg.startswith("-") and arg != "--" or arg in _LAUNCHER_WORDS:
            continue
        return list(unit.args[at + 1 :]) if agent.names(arg) else None
    return None


def _variables(agent: AgentCli) -> re.Pattern[str]:
    """The variables of ``agent``'s namespace and the home folders, where a word sets or names them (not ``$HOME``)."""
    names = "|".join([*(re.escape(prefix) + r"\w*" for prefix in agent.prefixes), *_HOME_VARIABLES])
    return re.compile(rf"(?<![\w${{]){'(' + names + ')'}\b")


def _through(unit: Unit) -> AgentCli | None:
    """The client a program that runs a command or code it is given starts (``sudo codex``, ``sh -c 'gemini …'``)."""
    program = os.path.basename(unit.program or "")
    if program in _LAUNCHERS - CODE_RUNNERS or (program not in CODE_RUNNERS and program not in COMMAND_RUNNERS):
        return None  # a launcher's session is :func:`_session_args`'s to read: npm i @openai/codex starts nothing
    words = [word for text in unit.texts[1:] for word in code_words(text)]
    return next((agent for agent in AGENTS if any(agent.names(word) for word in words)), None)


def unhooked_agent(unit: Unit, said: Iterable[str], cwd: str, changed: str | None) -> str | None:
    """Why the agent session ``unit`` starts may run without guard's hooks or sandbox, or None (not one, or one that
    keeps them).

    ``said``: the words of the line's commands before and including this one (where a variable is set); ``cwd``: the
    call's folder; ``changed``: why an earlier command of the line may change the shell's state, if it may.
    """
    for agent in AGENTS:
        args = _session_args(unit, agent)
        if args is not None:
            if len(args) == 1 and args[0] in agent.prints:
                return None  # claude --version: no session starts, in whatever folder and with whatever variables
            moved = os.path.normpath(unit.cwd) != os.path.normpath(cwd)
            return _unhooked(agent, args, [*said, *unit.texts], moved, changed)
    through = _through(unit)
    if through is not None:
        return (
            f"starts {through.name} through {os.path.basename(unit.program or '')}, where guard cannot read which "
            "settings it loads"
        )
    return None


def _unhooked(agent: AgentCli, args: list[str], said: list[str], moved: bool, changed: str | None) -> str | None:
    """Why ``agent`` started with ``args`` may run without guard's hooks, or None."""
    where = f"(its options that keep them: guard/protection/nested_agent.py, {agent.name})"
    pattern = _variables(agent)
    for name in (found for text in said for found in pattern.findall(text)):
        if name not in agent.variables:
            return f"starts {agent.name} with {name}, which may load other settings, without guard's hooks {where}"
    if changed:
        return f"starts {agent.name} after a command that may change which settings it loads ({changed})"
    if moved:
        return f"starts {agent.name} in another folder, whose settings may not hold guard's hooks"
    rest = iter(args)
    first = True
    for arg in rest:
        if arg == "--":
            return None
        if not arg.startswith("-") or arg == "-":
            if first and arg in agent.commands:
                return f"runs {agent.name}'s `{arg}` command, which changes what every later session loads and runs"
            first = first and arg in agent.sessions
            continue
        name, equals, value = arg.partition("=")
        if name not in agent.options:
            return f"starts a {agent.name} session with {name}, which may run it without guard's hooks {where}"
        if agent.options[name] and not equals:
            value = next(rest, "")
        key = value.partition("=")[0].strip()
        if name in agent.config and key not in agent.keys:
            return f"starts a {agent.name} session with {name} {key}, which may run it without guard's hooks {where}"
    return None
