"""Codex CLI: the Claude Code protocol (PascalCase events, ``hookSpecificOutput``, exit 2 blocks), with one difference.

Codex's ``PermissionRequest`` answer is ``decision: {behavior: allow | deny,
message}``, and it fails closed on an ``updatedInput`` there (reserved for a
future rewrite). A rewrite cannot be granted at that point, so guard gives no
verdict and Codex's own approval flow asks, as it does for guard's ask.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from guard.adapters import Client, Rendered, event_of
from guard.adapters.claude import normalize
from guard.adapters.claude import render as claude_render
from guard.core.decision import Decision

__all__ = [
    "CLIENT",
    "NOT_SET_UP_HERE",
    "PROFILE",
    "PROFILE_OVERRIDDEN",
    "PROJECT_ROOTS",
    "SANDBOX_ELSEWHERE",
    "missing_setup",
    "normalize",
    "path_rules",
    "read_config",
    "render",
    "sandbox_replaced",
]

#: The permission profile ``guard install codex`` writes (:mod:`guard.sandbox.codex`).
PROFILE = "guard"
#: The table of a profile's ``filesystem`` whose keys are paths relative to the folder the session starts in (Codex
#: 0.171 resolves them against the session's working directory). guard wrote one before it found that a session
#: started in a subfolder then fails to start (:mod:`guard.sandbox.codex`); such a profile is still read.
PROJECT_ROOTS = ":project_roots"
#: Told as a session starts in a git worktree whose own ``.codex/config.toml`` lacks the profile its main checkout's has.
NOT_SET_UP_HERE = (
    "Codex runs the main checkout's guard hook in this git worktree, {project}, and guard enforces the config you "
    "trusted here, but Codex reads the worktree's own .codex/config.toml, which selects no guard sandbox profile "
    "(the main checkout's does), so guard's files and secret are within the agent's reach. Run guard install codex there"
)
#: Why every tool call of a session whose command line puts another sandbox in place of guard's profile is denied.
PROFILE_OVERRIDDEN = (
    "this Codex session was started with {option}, which puts another sandbox in place of guard's profile (selected "
    "in {settings}), so guard's files and secret would be within the agent's reach. Start codex without it (guard's "
    "profile already lets commands write in the project), or run guard install codex --no-sandbox to use guard "
    "without Codex's sandbox"
)
#: Told as a session starts where the project's ``.codex/config.toml`` selects guard's profile for another folder's files.
SANDBOX_ELSEWHERE = (
    "the sandbox profile in {settings} does not protect {config} (it names another folder's files: a git worktree or "
    "clone got the main checkout's copy, a moved folder kept the old paths), so guard's files here are within the "
    "agent's reach. Run guard install codex in {project}"
)


def render(payload: dict[str, Any], decision: Decision) -> Rendered:
    rendered = claude_render(payload, decision)
    if event_of(payload) != "permission_request" or not rendered.stdout:
        return rendered
    out = json.loads(rendered.stdout)
    specific = out.get("hookSpecificOutput", {})
    if "updatedInput" in specific.get("decision", {}):
        del specific["decision"]
        if set(specific) == {"hookEventName"}:
            del out["hookSpecificOutput"]
    return Rendered(stdout=json.dumps(out) if out else "", exit_code=rendered.exit_code, stderr=rendered.stderr)


def path_rules(filesystem: Mapping[str, Any], project: str) -> dict[str, Any]:
    """A profile's ``filesystem`` table as absolute path → access, for a session started in ``project``: the absolute
    keys as they are (all ``guard install codex`` writes), and those of a ``:project_roots`` table (an older install's)
    joined to ``project``."""
    relative = filesystem.get(PROJECT_ROOTS)
    pairs = [(k, v) for k, v in filesystem.items() if isinstance(k, str) and k.startswith("/")]
    if isinstance(relative, Mapping):
        pairs += [
            (os.path.join(project, k), v)
            for k, v in relative.items()
            if isinstance(k, str) and k and not k.startswith("/")
        ]
    return {os.path.normpath(k): v for k, v in pairs}


def read_config(path: Path) -> dict[str, Any]:
    """A Codex ``config.toml`` as a table; an empty one where the file is missing or unreadable (Codex reports a
    config it cannot read): never an error, since guard reads it to warn (as a session starts, in ``guard doctor``)
    and the agent may write the project's copy."""
    import tomllib  # only as a session starts

    try:
        return tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _guard_rules(settings: Path) -> dict[str, Any] | None:
    """The path rules of guard's profile (:func:`path_rules`, for a session in the folder that holds ``.codex/``)
    when ``settings`` (a ``.codex/config.toml``) selects it, else None."""
    data = read_config(settings)
    if data.get("default_permissions") != PROFILE:
        return None
    permissions = data.get("permissions")
    profile = permissions.get(PROFILE) if isinstance(permissions, dict) else None
    rules = profile.get("filesystem") if isinstance(profile, dict) else None
    return path_rules(rules, str(settings.parent.parent)) if isinstance(rules, dict) else {}


def missing_setup(project: str | None, env: Mapping[str, str]) -> str | None:
    """What a session's first message says when the project's ``.codex/config.toml`` does not keep its config read-only
    the way ``guard install codex`` set up: a profile written for another folder (Codex reads a worktree's own copy,
    committed with the main checkout's paths), or in a git worktree none where the main checkout has one. No guard
    profile anywhere is the user's choice (``--no-sandbox``), not a miss."""
    if project is None:
        return None
    from guard.adapters.checkout import config_in, in_main_checkout, protected_by

    settings = Path(project, ".codex", "config.toml")
    rules = _guard_rules(settings)
    if rules is None:
        main = in_main_checkout(project)
        if main is not None and _guard_rules(Path(main, ".codex", "config.toml")) is not None:
            return NOT_SET_UP_HERE.format(project=project)
        return None
    config = config_in(project)
    unwritable = (rule for rule, access in rules.items() if access in ("read", "none"))
    if config is None or protected_by(unwritable, config):
        return None
    return SANDBOX_ELSEWHERE.format(settings=settings, config=config, project=project)


def sandbox_replaced(project: str, env: Mapping[str, str]) -> str | None:
    """Why this session runs without guard's profile, when its ``codex`` was started with an option that puts another
    sandbox in its place (``-s``, ``-c sandbox_mode=…``, ``--dangerously-bypass-approvals-and-sandbox`` …) and the
    project's or the user's ``config.toml`` selects guard's profile; else None. Asked on every event: the session's
    command line is read first (``/proc``, a few small files), the config only when an option is found."""
    from guard.adapters.codex_command_line import profile_override

    option = profile_override(env)
    if option is None:
        return None
    home = env.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
    for settings in (Path(project, ".codex", "config.toml"), Path(home, "config.toml")):
        if _guard_rules(settings) is not None:
            return PROFILE_OVERRIDDEN.format(option=option, settings=settings)
    return None


CLIENT = Client(
    "codex",
    normalize,
    render,
    deadline=600.0,
    installer="guard.adapters.installers:CODEX",
    missing_setup=missing_setup,
    session_folder="cwd",
    sandbox_replaced=sandbox_replaced,
)
