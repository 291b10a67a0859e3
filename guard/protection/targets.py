"""What the self-protection rule protects: every file that decides what guard enforces, or that guard's seals rely on.

==============================  ================================================================
label                           paths
==============================  ================================================================
guard's secret (read too)       ``$XDG_CONFIG_HOME/guard/`` (the secret, ``$GUARD_SECRET_FILE``);
                                it derives every seal and the service's token
guard's trusted configs         ``$XDG_STATE_HOME/guard/trusted/`` (what ``guard trust`` recorded)
guard's state                   ``$XDG_CACHE_HOME/guard/``, ``$XDG_STATE_HOME/guard/`` (decision
                                cache, audit log, sessions.db, config snapshots, the service's
                                state files) and the configured cache and audit files
guard's config                  the config and its includes, and ``guard.yaml`` / ``.guard/`` in
                                each project folder (a new file there would shadow the config)
a script guard's hooks run      each script a command hook runs (:mod:`guard.config.hook_scripts`)
                                and its folder, unless that holds the project (:mod:`guard.config.assembly`)
the agent client's settings     ``.claude/settings.json``, ``.claude/settings.local.json``,
                                ``.gemini/``, ``.codex/``, ``.github/hooks/``, ``.cursor/``,
                                ``.devin/`` in the project folder and every folder above it, and by
                                name at any depth below the project folder (a git worktree's or a nested
                                project's, which a session started there reads: :func:`project_folders`);
                                ``~/.claude/settings*.json`` and ``~/.claude/plugins/``
                                (``$CLAUDE_CONFIG_DIR``), ``~/.gemini/``, ``~/.codex/``
                                (``$CODEX_HOME``), ``~/.copilot/``, ``~/.cursor/``,
                                ``~/.config/devin/``
the client's transcript         the session transcript guard reads the user's words from
the shell's start-up files      ``~/.bashrc``, ``~/.profile``, ``~/.zshrc`` and the like, ``$BASH_ENV``,
                                ``$ENV``, and what Claude Code runs in ``~/.claude/``: its
                                ``shell-snapshots/`` (sourced before every Bash call), the
                                ``session-env/`` scripts run ahead of Bash commands, ``jobs/``,
                                ``daemon/`` and ``daemon.json``: an alias or function there changes
                                what a command proven to only read really runs
what the agent client starts    Claude Code's ``~/.claude.json`` (``$CLAUDE_CONFIG_DIR``): the MCP servers it
by itself                       starts with each session, unasked
guard's installation            guard's package folder, the interpreter's prefixes (its standard
                                library, its site-packages) and the user's site-packages when this
                                interpreter reads it (a ``.pth`` file there runs in every hook)
the org policy                  ``/etc/guard/`` and the org key, policy and signature guard
                                enforces (:mod:`guard.config.org_policy`)
a folder of the shell's PATH     each folder of ``$PATH`` in the home (not in a project) that comes before
                                ``/usr/bin`` or ``/bin`` (``~/.local/bin``, ``~/.pyenv/shims``), and
                                ``~/bin`` and ``~/.local/bin`` always (a login shell's ``~/.profile`` puts
                                them first): a program there answers for ``sh`` or ``python3`` in every
                                command hook and shell
guard's service (a URL)         ``server.url`` when it names one (not a path: the rule refuses
                                requests to it, :mod:`guard.protection.self_invocation`)
==============================  ================================================================

A call that names a read-protected path (:data:`READ_PROTECTED_LABELS`: the
secret) is refused even when it only reads; every other path is write-protected
(a call naming it runs only when it is proven to read). Client settings are looked
for in the project, never only beside the config, which may live elsewhere
(``$GUARD_CONFIG``): the project is the hook's working directory, the
``*_PROJECT_DIR`` the clients set, the config's project and (per event, see
:func:`event_paths`) the event's ``cwd``. Paths only: no subprocess, and no file
system calls but ``lexists``/``realpath`` for symlinked files — this runs on
every ``guard hook``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from guard.core.settings import CONFIG_ENV, SYSTEM_DIR, from_env, locate, user_dir
from guard.core.spec import HookSpec, ProtectSettings
from guard.storage.secret import secret_path

if TYPE_CHECKING:
    from guard.core.settings import LoadedConfig

__all__ = [
    "AUTOSTART",
    "CLIENT",
    "CLIENT_NAMES",
    "CONFIG",
    "INSTALL",
    "ORG",
    "PATH_FOLDER",
    "READ_PROTECTED_LABELS",
    "SCRIPT",
    "SECRET",
    "SERVICE",
    "SHELL",
    "STATE",
    "TRANSCRIPT",
    "TRUSTED",
    "HOOK_ID",
    "event_paths",
    "installation",
    "project_folders",
    "protect_spec",
    "protected_paths",
    "worktree_settings",
]

#: The self-protection hook's id (:func:`protect_spec`).
HOOK_ID = "guard.protect"

#: Labels of protected paths, as the deny reason names them.
CONFIG, STATE, CLIENT, SECRET = "guard's config", "guard's state", "the agent client's hook settings", "guard's secret"
TRUSTED, SCRIPT, TRANSCRIPT, INSTALL = (
    "guard's trusted configs",
    "a script guard's hooks run",
    "the client's transcript",
    "guard's installation",
)
ORG = "the org policy"
SHELL = "the shell's start-up files"
AUTOSTART = "what the agent client starts by itself"
PATH_FOLDER = "a folder of the shell's PATH"
#: The entry that holds the service's URL rather than a path.
SERVICE = "guard's service"
#: A call that names one of these is refused even if it only reads.
READ_PROTECTED_LABELS = frozenset({SECRET})

#: Where the clients read hooks and settings, relative to a project folder (and to every folder above it).
_PROJECT_CLIENT = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".gemini",
    ".codex",
    ".github/hooks",
    ".cursor",
    ".devin",
)
#: Each of :data:`_PROJECT_CLIENT` as the names of its path: what self-protection matches below a project folder.
CLIENT_NAMES = tuple(tuple(name.split("/")) for name in _PROJECT_CLIENT)
#: A config file here would be what ``guard hook`` finds (``.guard`` holds ``.guard/guard.yaml``).
_PROJECT_CONFIG = ("guard.yaml", ".guard")
#: Variables the clients set to the project folder for their hooks.
_PROJECT_ENV = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "DEVIN_PROJECT_DIR")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_client(env: Mapping[str, str]) -> Iterator[str]:
    home = os.path.expanduser("~")
    claude = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    yield from (os.path.join(claude, name) for name in ("settings.json", "settings.local.json", "plugins"))
    yield os.path.join(env.get("GEMINI_CLI_HOME") or home, ".gemini")
    yield env.get("CODEX_HOME") or os.path.join(home, ".codex")
    yield env.get("COPILOT_HOME") or os.path.join(home, ".copilot")
    yield os.path.join(home, ".cursor")
    yield os.path.join(env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "devin")


#: What bash, sh, zsh and fish read as they start (login, interactive, or every ``zsh``), in the home.
_SHELL_STARTUP = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshenv",
    ".zprofile",
    ".zshrc",
    ".zlogin",
    ".config/fish",
)


#: What Claude Code runs or acts on without asking anyone, in its config folder (its own file tools refuse to write them,
#: 2.1.332): the shell snapshot sourced before every Bash call, the scripts hooks leave in ``session-env`` that run
#: ahead of Bash commands, its background jobs and daemon and the daemon's settings.
_CLAUDE_RUNS = ("shell-snapshots", "session-env", "jobs", "daemon", "daemon.json")


def _client_starts(env: Mapping[str, str]) -> Iterator[str]:
    """Claude Code's ``.claude.json``: the MCP servers of the user and local scopes, whose commands it starts as a
    session starts without asking anyone (``~/.claude.json``, or in ``$CLAUDE_CONFIG_DIR``)."""
    folder = env.get("CLAUDE_CONFIG_DIR")
    yield os.path.join(folder, ".claude.json") if folder else os.path.join(os.path.expanduser("~"), ".claude.json")


def _shell_startup(env: Mapping[str, str]) -> Iterator[str]:
    home = os.path.expanduser("~")
    yield from (os.path.join(home, name) for name in _SHELL_STARTUP)
    yield os.path.join(env.get("ZDOTDIR") or home, ".zshrc")
    claude = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    yield from (os.path.join(claude, name) for name in _CLAUDE_RUNS)
    yield from (env[name] for name in ("BASH_ENV", "ENV") if os.path.isabs(env.get(name) or ""))


#: What Debian's and Ubuntu's ``~/.profile`` put first on PATH once the folder exists: a login shell (Codex runs
#: ``bash -lc``, a user's terminal) finds a program there before the system's, though the hook's PATH may not list it.
_LOGIN_PATH = ("bin", ".local/bin")


def _path_folders(env: Mapping[str, str], projects: Iterable[str]) -> Iterator[str]:
    """The folders of ``$PATH`` in the home, outside the projects, that come before the system's (the last of
    ``/usr/bin``, ``/bin``), and those a login shell puts first once they exist (:data:`_LOGIN_PATH`), whatever the
    hook's own PATH. Those in a project are not: command hooks run without them
    (:func:`guard.hooks.command.search_path`), and the read-only lane proves only programs of the system's folders."""
    entries = env.get("PATH", "").split(os.pathsep)[:64]
    system = [at for at, entry in enumerate(entries) if os.path.normpath(entry or ".") in ("/usr/bin", "/bin")]
    home = _within(os.path.expanduser("~"))
    inside = tuple(_within(project) for project in projects if project)
    login = [os.path.join(home, name) for name in _LOGIN_PATH]
    for entry in [*entries[: system[-1] if system else len(entries)], *login]:
        folder = _within(entry) if os.path.isabs(entry) else ""
        if folder.startswith(home) and folder != home and not folder.startswith(inside):
            yield entry


def _within(folder: str) -> str:
    """``folder`` resolved, ending in ``/``: a prefix of every path inside it."""
    return os.path.realpath(folder).rstrip(os.sep) + os.sep


def _folders_up(folder: str) -> Iterator[str]:
    """``folder`` and each folder above it, short of ``/``."""
    folder = os.path.abspath(folder)
    while True:
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        yield folder
        folder = parent


def _project(roots: Iterable[str]) -> Iterator[tuple[str, str]]:
    seen: set[str] = set()
    for root in roots:
        yield from ((CONFIG, os.path.join(os.path.abspath(root), name)) for name in _PROJECT_CONFIG)
        for folder in _folders_up(root):
            if folder in seen:
                continue
            seen.add(folder)
            yield from ((CLIENT, os.path.join(folder, name)) for name in _PROJECT_CLIENT)


def project_folders(entries: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """The project folders of protected ``entries``: each holds both config names :func:`_project` lists there.

    Below these, client settings are protected by name at any depth (:data:`CLIENT_NAMES`): Claude Code's worktrees
    (``.claude/worktrees/<name>``, ``claude --worktree``) and any git worktree or nested project read their own
    ``.claude/settings.json`` when a session starts there, so one the agent rewrote from the project would start
    that session without guard's hooks.
    """
    config = {path for label, path in entries if label == CONFIG}
    first, second = _PROJECT_CONFIG
    return tuple(
        sorted(
            os.path.dirname(path)
            for path in config
            if os.path.basename(path) == first and os.path.join(os.path.dirname(path), second) in config
        )
    )


#: Worktrees listed one by one; past this many, the worktrees folder is protected whole (a sorted cut-off let the agent
#: push a real worktree out of the list by making folders that sort before it).
_MAX_WORKTREES = 256


def worktree_settings(folders: Iterable[str]) -> Iterator[tuple[str, str]]:
    """The client settings of each Claude Code worktree there is in ``folders`` (``.claude/worktrees/<name>``), named
    exactly: by name (:data:`CLIENT_NAMES`) only a path that spells one out counted, so a command writing a tree into
    the worktree (``tar x -C``, ``rsync``, ``cp -r src/.``) or sweeping one (``find -name … -delete``) reached it."""
    for folder in folders:
        worktrees = os.path.join(folder, ".claude", "worktrees")
        try:
            found = os.listdir(worktrees)
        except OSError:
            continue
        if len(found) > _MAX_WORKTREES:  # more than a project holds: not a list the agent may push one out of
            yield CLIENT, worktrees
            continue
        for name in found:
            settings = (os.path.join(worktrees, name, setting) for setting in _PROJECT_CLIENT)
            yield from ((CLIENT, path) for path in settings if os.path.lexists(path))


def _sqlite_file(url: str) -> str | None:
    return url[len("sqlite:///") :] if url.startswith("sqlite:///") else None


def _resolved(pairs: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Absolute, and also with symlinks resolved where the path exists (dotfile managers link settings files)."""
    absolute = {(label, os.path.abspath(path)) for label, path in pairs}
    absolute |= {(label, os.path.realpath(path)) for label, path in absolute if os.path.lexists(path)}
    return tuple(sorted(absolute))


def _org_files(env: Mapping[str, str]) -> list[str]:
    """The org policy's folder, and the key, policy and signature in force (wherever a variable moved them)."""
    location = locate(env)
    return [str(SYSTEM_DIR), *(location.paths() if location is not None else ())]


def protected_paths(
    loaded: LoadedConfig, *, scripts: Iterable[str], env: Mapping[str, str] | None = None
) -> tuple[tuple[str, str], ...]:
    """Every (label, absolute path) protected for ``loaded``, sorted: the static part of the self-protection hook's spec.

    ``scripts``: the files its hooks run (the config step that assembles the rule looks them up:
    :func:`guard.config.assembly.protection_for`).
    """
    env = os.environ if env is None else env
    settings = loaded.settings
    pairs: list[tuple[str, str]] = [(CONFIG, source) for source in loaded.sources]
    config = from_env(CONFIG_ENV, env)
    if config:
        pairs.append((CONFIG, config))
    pairs += [(SECRET, str(secret_path())), (SECRET, str(user_dir("config")))]
    pairs += [
        (STATE, str(user_dir("cache"))),
        (STATE, str(user_dir("state"))),
        (TRUSTED, str(user_dir("state") / "trusted")),
    ]
    for file in filter(None, (_sqlite_file(settings.cache_url), settings.audit_path)):
        base = str(settings.path(file))
        pairs += [(STATE, base + suffix) for suffix in ("", "-wal", "-shm", "-journal")]
    roots = [settings.base_dir, os.getcwd(), *filter(None, (env.get(name) for name in _PROJECT_ENV))]
    pairs += _project(roots)
    pairs += [(CLIENT, path) for path in _user_client(env)]
    pairs += [(SHELL, path) for path in _shell_startup(env)]
    pairs += [(AUTOSTART, path) for path in _client_starts(env)]
    pairs += [(PATH_FOLDER, path) for path in _path_folders(env, roots)]
    pairs += [(SCRIPT, path) for path in scripts]
    pairs += [(INSTALL, path) for path in installation()]
    pairs += [(ORG, path) for path in _org_files(env)]
    service = [(SERVICE, settings.server_url)] if settings.server_url and "://" in settings.server_url else []
    return _resolved(pairs) + tuple(service)


def installation() -> list[str]:
    """Where the Python running guard loads code from: guard's package, the interpreter's prefixes (a venv's
    standard library is its base prefix's), and the user's site-packages unless it runs isolated (``guard install``
    writes ``python -I``; a ``guard`` script's interpreter reads it, and runs any ``.pth`` file the agent puts there)."""
    import site  # imported at start-up: a lookup

    paths = [_PACKAGE, sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    if site.ENABLE_USER_SITE:
        paths.append(site.USER_SITE or site.getusersitepackages())
    return list(dict.fromkeys(paths))


def event_paths(payload: Mapping[str, Any], env: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """What one event adds to the spec's paths: the client settings of the project it runs in (its ``cwd``), and its transcript."""
    from guard.protection.client_transcripts import client_transcript

    env = os.environ if env is None else env
    pairs: list[tuple[str, str]] = []
    cwd = payload.get("cwd")
    if (
        isinstance(cwd, str) and cwd and "\0" not in cwd and os.path.abspath(cwd) != os.getcwd()
    ):  # the hook's own folder is in the spec
        pairs += _project([cwd])
    transcript = client_transcript(payload.get("transcript_path"), env)
    if transcript is not None:
        pairs.append((TRANSCRIPT, transcript.path))
    return _resolved(pairs)


def protect_spec(loaded: LoadedConfig, *, scripts: Iterable[str]) -> HookSpec:
    """The self-protection hook for ``loaded``: every path :func:`protected_paths` names
    (built by :func:`guard.config.assembly.protection_for`, which looks up the files its hooks run)."""
    return HookSpec(
        id=HOOK_ID,
        kind="protect",
        event="pre_tool_use",
        timeout=10.0,
        # its own crash shows in the decision; fail_closed here would make any guard bug block every tool call
        failure_mode="fail_open",
        source="builtin",
        origin="built-in self-protection rule (protect: false in guard.yaml turns it off)",
        options=ProtectSettings(protected_paths(loaded, scripts=scripts)),
    )
