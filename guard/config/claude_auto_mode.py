"""A Claude Code ``autoMode`` settings block as a guard policy (``guard import claude-auto-mode``).

The four lists map one to one (see :mod:`guard.config.policies`). ``"$defaults"``
stands for Claude Code's built-in entries, whose text guard does not have: it is
left out and named in the notes, so the user sees what the policy lacks (``claude
auto-mode defaults`` prints them; paste the ones you want).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from guard.config.policies import LISTS
from guard.errors import ConfigError

__all__ = ["DEFAULTS_SENTINEL", "policy_from_settings"]

DEFAULTS_SENTINEL = "$defaults"


def policy_from_settings(path: Path, policy_id: str = "claude-auto-mode") -> tuple[dict[str, Any], list[str]]:
    """The guard.yaml policy entry for ``path``'s ``autoMode`` block, and notes on what did not carry over."""
    file = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read settings: {exc.strerror}", file=file) from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=file) from exc
    block = data.get("autoMode") if isinstance(data, dict) else None
    if not isinstance(block, dict):
        raise ConfigError("no autoMode block (an object with allow, soft_deny, hard_deny, environment lists)", file=file, key="autoMode")
    unknown = sorted(set(block) - set(LISTS))
    notes = [f"autoMode.{name}: not an auto-mode list guard knows; left out" for name in unknown]
    policy: dict[str, Any] = {"id": policy_id}
    for name in LISTS:
        entries = block.get(name, [])
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise ConfigError("must be a list of strings", file=file, key=f"autoMode.{name}")
        if DEFAULTS_SENTINEL in entries:
            notes.append(f"autoMode.{name}: {DEFAULTS_SENTINEL!r} (Claude Code's built-in entries) left out: guard does not have their text")
        kept = [e for e in entries if e != DEFAULTS_SENTINEL and e.strip()]
        if kept:
            policy[name] = kept
    if not any(name in policy for name in ("hard_deny", "soft_deny")):
        raise ConfigError("the autoMode block has no hard_deny or soft_deny entry of its own: the policy could deny nothing", file=file, key="autoMode")
    return policy, notes
