"""Codex CLI: the Claude Code protocol (PascalCase events, ``hookSpecificOutput``, exit 2 blocks), with one difference.

Codex's ``PermissionRequest`` answer is ``decision: {behavior: allow | deny,
message}``, and it fails closed on an ``updatedInput`` there (reserved for a
future rewrite). A rewrite cannot be granted at that point, so guard gives no
verdict and Codex's own approval flow asks, as it does for guard's ask.
"""

from __future__ import annotations

import json
from typing import Any

from guard.adapters import Client, Rendered, event_of
from guard.adapters.claude import normalize
from guard.adapters.claude import render as claude_render
from guard.core.decision import Decision

__all__ = ["CLIENT", "normalize", "render"]


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


CLIENT = Client("codex", normalize, render, deadline=600.0, installer="guard.adapters.installers:CODEX")
