"""guard's ``.claude`` entry run by Devin CLI: recognised, so a call is judged once when guard has a Devin entry too.

Devin runs the hooks in ``.claude/settings.json`` besides its own
``.devin/hooks.v1.json`` (its hooks are "compatible with Claude Code hooks").
With guard installed for both clients, Devin would start guard twice per call:
two judgements, two audit rows, twice the model cost. Devin starts hooks with
``DEVIN_PROJECT_DIR`` set, which Claude Code never sets; when that is so and
guard's own Devin entry is installed for the same event (the project's
``.devin/hooks.v1.json`` or the user's Devin config), the ``--format claude``
entry steps aside and the Devin entry decides. Without a Devin entry it judges
as before, so guard installed for Claude Code alone still guards Devin.

Stepping aside is an allow, so the test is strict: the variable alone is not
enough, the Devin entry must be there (self-protection keeps the agent from
writing ``.devin/``), for this very event.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

__all__ = ["devin_entry"]


def devin_entry(fmt: str, raw: bytes, env: Mapping[str, str]) -> str | None:
    """The Devin settings file whose guard entry judges this event instead of this ``.claude`` one; None: judge it here."""
    project = env.get("DEVIN_PROJECT_DIR")
    if fmt != "claude" or not project:
        return None
    try:
        event = json.loads(raw).get("hook_event_name")
    except (ValueError, AttributeError, RecursionError):
        return None  # guard's own reading of the event decides what an unreadable one gets
    from guard.core.errors import GuardError
    from guard.setup.install import installed_hooks

    for scope in ("project", "user"):
        try:
            hooks = installed_hooks(
                "devin", scope, project_dir=Path(project), home=Path(env.get("HOME") or Path.home())
            )
        except GuardError:
            continue  # a Devin file guard cannot read judges nothing: this entry does
        for hook in hooks:
            if hook.event == event:
                return str(hook.path)
    return None
