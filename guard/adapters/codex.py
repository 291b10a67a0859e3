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

__all__ = ["CLIENT", "PROFILE", "SANDBOX_ELSEWHERE", "missing_setup", "normalize", "render"]

#: The permission profile ``guard install codex`` writes (:mod:`guard.sandbox.codex`).
PROFILE = "guard"
#: Told as a session starts where the project's ``.codex/config.toml`` selects guard's profile for another folder's files.
SANDBOX_ELSEWHERE = (
    "the sandbox profile in {settings} does not protect {config} (it names another folder's files: a git worktree or "
    "clone gets the main checkout's copy, a moved folder keeps the old paths), so guard's files here are within the "
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


def _protected(rules: Mapping[str, Any], path: Path) -> bool:
    names = {str(path.absolute()), os.path.realpath(path)}
    return any(
        isinstance(rule, str)
        and rule.startswith("/")
        and access in ("read", "none")
        and any(name == rule or name.startswith(rule.rstrip("/") + "/") for name in names)
        for rule, access in rules.items()
    )


def missing_setup(project: str | None, env: Mapping[str, str]) -> str | None:
    """What a session's first message says when the project's ``.codex/config.toml`` selects guard's profile but the
    profile does not keep the project's config read-only: it was written for another folder (Codex reads a worktree's
    own copy, committed with the main checkout's paths). No guard profile there is the user's choice, not a miss."""
    if project is None:
        return None
    import tomllib  # only as a session starts

    from guard.config.search import SEARCHED

    settings = Path(project, ".codex", "config.toml")
    try:
        data = tomllib.loads(settings.read_text(encoding="utf-8")) if settings.is_file() else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None  # Codex reports a config it cannot read
    if data.get("default_permissions") != PROFILE:
        return None
    profile = (data.get("permissions") or {}).get(PROFILE) or {}
    rules = profile.get("filesystem") if isinstance(profile, dict) else None
    config = next((c for c in (Path(project, name) for name in SEARCHED) if c.is_file()), None)
    if config is None or _protected(rules if isinstance(rules, dict) else {}, config):
        return None
    return SANDBOX_ELSEWHERE.format(settings=settings, config=config, project=project)


CLIENT = Client(
    "codex",
    normalize,
    render,
    deadline=600.0,
    installer="guard.adapters.installers:CODEX",
    missing_setup=missing_setup,
    cwd_is_session=True,
)
