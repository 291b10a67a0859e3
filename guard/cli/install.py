"""``guard install CLIENT``: put ``guard hook`` into an agent client's settings (or take it out)."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from guard.adapters.installers import CLAUDE, CODEX, installable, profile
from guard.cli.init import write_starter_files
from guard.cli.trust import adopt_config
from guard.cli.user_consent import refusal as agent_refusal
from guard.config.loading import load_config
from guard.config.search import find_config
from guard.core.errors import GuardError, UnknownName
from guard.core.events.names import client_event_name
from guard.core.extras import DISTRIBUTION, MissingExtra, require
from guard.core.settings import CLAUDE_BIN_ENV, LoadedConfig, from_env
from guard.sandbox import claude
from guard.sandbox.levels import CANNOT, configure
from guard.sandbox.paths import make_store, protected_paths
from guard.setup import curl_client, team_hook
from guard.setup.curl_client import MIN_TIMEOUT_S
from guard.setup.install import (
    DEFAULT_TIMEOUT_S,
    default_command,
    guard_program,
    install,
    needed_timeout,
    plugin_commands,
    plugin_guard,
)
from guard.setup.team_hook import personal_command

if TYPE_CHECKING:
    from guard.sandbox import SandboxChange

__all__ = ["register", "run"]

_BROKEN = "the config does not load (every call it guards would be blocked)"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "install",
        help="write guard's hook entry into an agent client's settings",
        description="Add `guard hook` as a command hook in the settings file of Claude Code, Devin, Codex, "
        "Gemini CLI, Copilot CLI, Cursor, or a client an installed plugin adds. Existing hooks and keys are kept; "
        "running it twice changes nothing.",
    )
    parser.add_argument(
        "client", help="the agent client to hook into: claude, codex, copilot, cursor, devin, gemini, or a plugin's"
    )
    parser.add_argument(
        "--scope",
        choices=("project", "user", "policy"),
        default="project",
        help="project: the settings in the current directory (default); user: your home directory; "
        "policy: machine-wide, for an admin (root only): copilot's policy hooks, claude's managed settings",
    )
    parser.add_argument(
        "--policy",
        dest="scope",
        action="store_const",
        const="policy",
        help="copilot and claude: install machine-wide (copilot: /etc/github-copilot/policy.d/guard.json; claude: its "
        "managed-settings.json with allowManagedHooksOnly), which no user or project setting switches off; needs root",
    )
    parser.add_argument("--uninstall", action="store_true", help="remove guard's entry (and nothing else)")
    defaults = ", ".join(client_event_name(event) for event in CODEX.default_events)
    parser.add_argument(
        "--events",
        nargs="+",
        metavar="EVENT",
        help="events to hook (any spelling guard accepts, e.g. PreToolUse or pre_tool_use); "
        f"default: {defaults} (in each client's own names; claude also PermissionDenied)",
    )
    parser.add_argument(
        "--command",
        help="the hook command (default: this guard's absolute path, hook --format CLIENT --deadline SECONDS)",
    )
    parser.add_argument(
        "--timeout",
        type=int,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"the client's timeout for the hook (default {DEFAULT_TIMEOUT_S})",
    )
    parser.add_argument(
        "--plugin",
        action="store_true",
        help="claude only: install guard as a Claude Code plugin (claude plugin marketplace add + install) "
        "instead of editing settings.json; its hook runs `guard` from PATH",
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="leave the client's sandbox as it is (claude, codex): guard's protection is then best effort. "
        "By default install also configures it, so guard's files are out of the agent's reach",
    )
    parser.add_argument(
        "--client",
        dest="hook_client",
        choices=("auto", "guard", "curl"),
        default="auto",
        help="claude only: the hook program. curl: a shell script asking the warm guard serve over its Unix "
        "socket with curl (no interpreter starts; a cache hit costs about what python -c pass does), else "
        "running guard hook; needs the sandbox settings install writes. guard: guard hook. auto (default): "
        "curl where it can be installed (claude with the sandbox, curl on PATH, the serve extra), else guard",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the resulting file instead of writing it")
    parser.add_argument(
        "--force",
        action="store_true",
        help="install even when the config here does not load (every guarded call would be blocked)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    refused = agent_refusal("guard install")
    if refused:  # it writes the client's hook settings and records trust: the agent must not do either
        print(f"guard install: error: {refused}", file=sys.stderr)
        return 1
    refused = _client_refusal(args.client)
    if refused:
        print(f"guard install: error: {refused}", file=sys.stderr)
        return 2
    if not 1 <= args.timeout <= 600:
        print("guard install: error: --timeout must be between 1 and 600 seconds", file=sys.stderr)
        return 1
    not_curl = None
    if args.hook_client == "auto":
        not_curl = None if args.uninstall else _curl_refusal(args, by_default=True)
        args.hook_client = "guard" if args.uninstall or not_curl else "curl"
    refused = _curl_refusal(args) if args.hook_client == "curl" else None
    if refused:
        print(f"guard install: error: {refused}; nothing was written", file=sys.stderr)
        return 1
    team = _shares_settings(args)
    command = args.command or default_command(
        args.client, args.timeout, project=Path.cwd() if args.scope == "project" else None
    )
    if not (args.uninstall or args.dry_run or args.plugin) and args.scope == "project":
        _write_starter_if_none()
    warnings = [] if args.uninstall else _config_warnings(args.timeout)
    refusal = next((w for w in warnings if w.startswith(_BROKEN)), None)
    if refusal and not args.force:
        print(
            f"guard install: error: {refusal}; nothing was written.\n"
            f"Fix it (guard doctor lists every problem) or pass --force to install anyway.",
            file=sys.stderr,
        )
        return 1
    if args.plugin:
        return _run_plugin(args)
    refused = _policy_refusal(args.client) if args.scope == "policy" else None
    if refused:
        print(f"guard install: error: {refused}; nothing was written", file=sys.stderr)
        return 1
    # a policy install is every user's: the sandbox's paths are one user's, so each user's own install keeps those
    sandboxing = not args.uninstall and not args.no_sandbox and args.scope != "policy"
    refused = _sandbox_refusal(args.client) if sandboxing else None
    if refused:
        print(f"guard install: error: {refused}; nothing was written", file=sys.stderr)
        return 1
    personal = None
    try:
        # a settings file it cannot merge into stops the install first
        sandbox = None if args.scope == "policy" else _sandbox(args, remove=not sandboxing, dry_run=True)
        event_commands = None
        if team:
            command, event_commands = (
                team_hook.launcher("PreToolUse", args.timeout),
                {e: team_hook.launcher(e, args.timeout) for e in CLAUDE.events},
            )
            personal = None if args.uninstall else _personal_command(args, write=not args.dry_run)
            team_hook.write_personal(
                Path.cwd(), personal, dry_run=True
            )  # a local file it cannot merge into stops it too
        result = install(
            args.client,
            scope=args.scope,
            events=args.events,
            command=command,
            timeout_s=args.timeout,
            uninstall=args.uninstall,
            dry_run=args.dry_run,
            event_commands=event_commands,
        )
        if not args.dry_run and args.scope != "policy":
            sandbox = _sandbox(args, remove=not sandboxing, dry_run=False)
            if team:
                _write_personal(personal)
    except GuardError as exc:
        print(f"guard install: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"guard install: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if args.dry_run:
        if result.changed and result.text is None:
            sys.stdout.write(f"({result.path} would be removed: nothing but guard's entry is in it)\n")
        else:
            sys.stdout.write(result.text if result.changed and result.text else "(nothing would change)\n")
        if sandbox is not None and sandbox.changed:  # stdout stays the hook file alone, for a pipe
            sys.stderr.write(
                f"and {sandbox.path} would be:\n" + (sandbox.text or "(removed: nothing of yours is in it)\n")
            )
        return 0
    _report_sandbox(args, sandbox, sandboxing)
    if args.client == "claude" and not (args.uninstall or args.plugin or args.command):
        _report_hook_program(args.hook_client, not_curl)
    verb = "removed guard from" if args.uninstall else "installed guard in"
    if result.changed:
        print(f"{verb} {result.path} for {', '.join(result.events)}")
    else:
        print(
            f"guard is {'not installed in' if args.uninstall else 'already installed in'} {result.path} (nothing changed)"
        )
    if args.uninstall:
        return 0
    adopt_config()
    for warning in warnings:
        loud = "WARNING (--force)" if warning.startswith(_BROKEN) else "warning"
        print(f"{loud}: {warning}", file=sys.stderr)
    if not team:
        _warn_if_not_runnable(command, args.client)
    installer = profile(args.client)
    if installer is not None and installer.install_note and result.changed:
        print(f"note: {installer.install_note}")
    return 0


def _report_hook_program(program: str, not_curl: str | None) -> None:
    if program == "curl":
        print(
            "hook program: the curl client, which asks the warm guard serve over its Unix socket and runs guard hook when "
            "that cannot answer (--client guard installs guard hook alone; docs/clients.md)"
        )
    elif not_curl:
        print(f"hook program: guard hook (the faster curl client is not installed: {not_curl})")


def _curl_refusal(args: argparse.Namespace, *, by_default: bool = False) -> str | None:
    """Why ``--client curl`` cannot be installed as asked, or None.

    ``by_default``: whether it would be installed without being asked for (``--client auto``), which also
    needs the serve extra: without guard serve every call would pay curl's start before ``guard hook``'s.
    """
    if by_default:
        try:
            require("serve", "--client curl")
        except MissingExtra as exc:
            return str(exc)

    if args.client != "claude" or args.plugin or args.command:
        return "--client curl is for claude's settings hooks, without --plugin or --command"
    if args.scope != "project":
        return (
            "--client curl is for --scope project: it asks the service of the config found here, and a user or policy "
            "hook runs in every project"
        )
    if args.no_sandbox:
        return (
            "--client curl needs the sandbox settings (they keep the agent from reading its credential and from "
            "listening on its socket); drop --no-sandbox"
        )
    if args.timeout < MIN_TIMEOUT_S:
        return f"--client curl needs --timeout {MIN_TIMEOUT_S} or more (curl's share, then guard hook's)"
    if shutil.which("curl") is None:
        return "--client curl needs curl on PATH"
    return None


def _shares_settings(args: argparse.Namespace) -> bool:
    """Whether the hook goes into a file a team commits: Claude Code's project settings (unless ``--command`` names one)."""
    return args.client == "claude" and args.scope == "project" and not (args.command or args.plugin)


def _personal_command(args: argparse.Namespace, *, write: bool) -> str:
    """This user's ``GUARD_HOOK``: the curl client (writing its credential) or ``guard hook``, by absolute path."""
    if args.hook_client != "curl":
        return personal_command(guard_program(), args.timeout)
    loaded = _loaded()
    if write:
        curl_client.write_credential(loaded)
    return curl_client.personal_command(guard_program(), loaded, args.timeout)


def _write_personal(value: str | None) -> None:
    """``GUARD_HOOK`` into (or out of) the project's local settings, which are kept out of git."""
    path, changed = team_hook.write_personal(Path.cwd(), value)
    if value is None:
        if changed:
            print(f"removed {team_hook.VARIABLE} from {path}")
        return
    if changed:
        print(
            f"set {team_hook.VARIABLE} in {path}: the program this machine runs for the launcher in .claude/settings.json"
        )
    ignore = team_hook.ignore_local(Path.cwd())
    if ignore is not None:
        print(f"added {path.name} to {ignore}, so git leaves this machine's paths out of the repository")


def _client_refusal(client: str) -> str | None:
    """Why ``client`` cannot be installed (guard's clients and every installed plugin's with an installer can), or None."""

    try:
        if profile(client) is not None:
            return None
    except UnknownName:
        pass  # not a client: the choices follow
    return (
        f"argument client: {client!r} is not a client guard can install; choose one of {', '.join(sorted(installable()))}, "
        "or install a plugin that adds it to the entry-point group 'guard.clients' with an installer"
    )


def _policy_refusal(client: str) -> str | None:
    """Why a machine-wide policy hook cannot be installed here, or None."""

    found = profile(client)
    if found is None or found.policy_file is None:
        return f"--policy is for copilot and claude ({client} has no policy-level hooks guard can write)"
    if os.geteuid() != 0:
        return "a policy hook is machine-wide and must be owned by root: run it with sudo"
    return None


def _sandbox_refusal(client: str) -> str | None:
    """Why the client's sandbox cannot hold here (a tool it needs is missing), or None."""
    if client != "claude":
        return None
    missing = claude.missing_tools()
    if not missing:
        return None
    return (
        f"Claude Code's sandbox, which keeps guard's files out of the agent's reach, needs {' and '.join(missing)} here "
        "(Debian/Ubuntu: apt-get install bubblewrap socat). Install them, or pass --no-sandbox for best-effort protection"
    )


def _sandbox(args: argparse.Namespace, *, remove: bool, dry_run: bool) -> SandboxChange | None:
    """Write guard's settings into the client's sandbox (or with ``remove`` take out what guard wrote there)."""

    if not remove and not dry_run:
        make_store()
    return configure(
        args.client,
        args.scope,
        protected_paths(_loaded()),
        project_dir=Path.cwd(),
        home=Path.home(),
        uninstall=remove,
        dry_run=dry_run,
    )


def _report_sandbox(args: argparse.Namespace, change: SandboxChange | None, sandboxing: bool) -> None:
    if change is None:
        if sandboxing and args.client in CANNOT:
            print(
                f"note: protection level unsandboxed: {CANNOT[args.client]}. guard refuses the calls it recognises (best effort)"
            )
        return
    for note in change.notes:
        print(f"note: {note}")
    if change.changed:
        what = "configured the sandbox in" if sandboxing else "removed guard's sandbox settings from"
        print(f"{what} {change.path}")
    if sandboxing:
        print(
            f"protection level sandboxed: {args.client}'s sandbox keeps guard's files out of what the agent may write, and its "
            "secret out of what it may read (writes outside the project need your approval; --no-sandbox opts out). "
            f"guard doctor checks it"
        )


def _loaded() -> LoadedConfig:
    """The config the hook will find here; its files only when it does not load (the sandbox still protects them)."""
    found = find_config()
    if found is None:
        return LoadedConfig()
    try:
        return load_config(str(found), use_snapshot=False)
    except GuardError:
        return LoadedConfig(sources=[str(found)])


def _run_plugin(args: argparse.Namespace) -> int:
    """``--plugin``: Claude Code installs guard's plugin itself, through its own ``claude plugin`` commands."""
    if args.client != "claude":
        print(f"guard install: error: --plugin is for claude only (there is no {args.client} plugin)", file=sys.stderr)
        return 1
    claude = from_env(CLAUDE_BIN_ENV) or shutil.which("claude")
    commands = plugin_commands(args.scope, claude=claude or "claude", uninstall=args.uninstall)
    if args.dry_run:
        print("\n".join(shlex.join(c) for c in commands))
        return 0
    if claude is None:
        print(
            "guard install: error: the claude CLI is not on PATH (or $GUARD_CLAUDE_BIN); run these yourself:\n"
            + "\n".join(shlex.join(c) for c in commands),
            file=sys.stderr,
        )
        return 1
    for command in commands:
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            print(f"guard install: error: {shlex.join(command)}: {exc}", file=sys.stderr)
            return 1
        if done.returncode != 0:
            print(
                f"guard install: error: {shlex.join(command)} failed: {(done.stderr or done.stdout).strip()}",
                file=sys.stderr,
            )
            return 1
    print(
        f"{'removed the guard plugin from' if args.uninstall else 'installed the guard plugin in'} Claude Code ({args.scope} scope)"
    )
    if not args.uninstall and plugin_guard(os.environ, Path.home()) is None:
        print(
            f"warning: the plugin finds no guard here ($GUARD_BIN, PATH, ~/.local/bin/guard), so it blocks every tool call "
            f"until it does. Install guard on PATH (pipx install {DISTRIBUTION}), set GUARD_BIN, or use `guard install claude` "
            "without --plugin",
            file=sys.stderr,
        )
    return 0


def _config_warnings(timeout_s: int) -> list[str]:
    """What is wrong with the config the hook will find here; a load failure starts with ``_BROKEN``.

    Installing a hook over a broken config would block every guarded call, so it
    is refused (or with ``--force`` announced) now, naming the file, key and line,
    rather than discovered on the agent's first tool call.
    """
    found = find_config()
    if found is None:
        return [
            "no guard.yaml here (nor .guard/guard.yaml or $GUARD_CONFIG): the hook has no rules to apply until you write one"
        ]
    try:
        loaded = load_config(str(found), use_snapshot=False)
    except GuardError as exc:
        return [f"{_BROKEN}: {exc}"]
    need = needed_timeout([spec.timeout for spec in loaded.specs])
    if need <= timeout_s:
        return []
    longest = max(spec.timeout for spec in loaded.specs)
    return [
        f"a hook in {found} may run {longest:g} s but the client gives guard {timeout_s} s; pass --timeout {need} or more so guard answers before the client kills it"
    ]


def _write_starter_if_none() -> None:
    """No config here: write guard init's starter and its labeled calls, which the install then trusts (at a terminal)."""
    if find_config() is None:
        write_starter_files(Path.cwd(), "guard install")


def _warn_if_not_runnable(command: str, client: str) -> None:
    """A hook the client cannot start fails open, silently; say so now rather than never."""

    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return
    suggestion = shlex.join([*guard_program(), "hook", "--format", client])
    if shutil.which(program) is None:
        print(
            f"warning: {program!r} is not on PATH here; the client could not run the hook and every call "
            f"would pass unchecked. Pass the full path, e.g. --command {shlex.quote(suggestion)}",
            file=sys.stderr,
        )
    elif not os.path.isabs(program):
        print(
            f"warning: {program!r} is found through PATH; a client started with another PATH cannot run the hook. "
            f"The default command uses the absolute path ({suggestion})",
            file=sys.stderr,
        )
