"""A Claude Code ``autoMode`` settings block as a guard policy (``guard import claude-auto-mode``), and back (``guard export``).

The four lists map one to one (see :mod:`guard.config.policies`). ``"$defaults"``
stands for Claude Code's built-in entries, whose text guard does not have: it is
left out and named in the notes, so the user sees what the policy lacks (``claude
auto-mode defaults`` prints them; paste the ones you want). Exporting keeps the
lists; what autoMode has no place for (the policy's event, matcher, tools, depth,
model…) is named in the notes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from guard.config.policies import LISTS, PolicyLists
from guard.core.errors import ConfigError

__all__ = ["DEFAULTS_SENTINEL", "policy_from_settings", "settings_from_policy"]

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
        raise ConfigError(
            "no autoMode block (an object with allow, soft_deny, hard_deny, environment lists)",
            file=file,
            key="autoMode",
        )
    unknown = sorted(set(block) - set(LISTS))
    notes = [f"autoMode.{name}: not an auto-mode list guard knows; left out" for name in unknown]
    policy: dict[str, Any] = {"id": policy_id}
    for name in LISTS:
        entries = block.get(name, [])
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise ConfigError("must be a list of strings", file=file, key=f"autoMode.{name}")
        if DEFAULTS_SENTINEL in entries:
            notes.append(
                f"autoMode.{name}: {DEFAULTS_SENTINEL!r} (Claude Code's built-in entries) left out: guard does not have their text"
            )
        kept = [e for e in entries if e != DEFAULTS_SENTINEL and e.strip()]
        if kept:
            policy[name] = kept
    if not any(name in policy for name in ("hard_deny", "soft_deny")):
        raise ConfigError(
            "the autoMode block has no hard_deny or soft_deny entry of its own: the policy could deny nothing",
            file=file,
            key="autoMode",
        )
    return policy, notes


def settings_from_policy(config: Path, policy_id: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """The ``{"autoMode": …}`` block for one policy of the guard.yaml at ``config`` (the only one when no id is given)."""
    import yaml

    file = str(config)
    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read config: {exc.strerror}", file=file) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", file=file) from exc
    policies = data.get("policies") if isinstance(data, dict) else None
    if not isinstance(policies, list) or not policies:
        raise ConfigError("no policies to export", file=file, key="policies")
    ids = [p.get("id") if isinstance(p, dict) else None for p in policies]
    if policy_id is None and len(policies) > 1:
        raise ConfigError(
            f"{len(policies)} policies: name one with --id ({', '.join(str(i) for i in ids)})",
            file=file,
            key="policies",
        )
    index = 0 if policy_id is None else next((i for i, name in enumerate(ids) if name == policy_id), -1)
    if index < 0:
        raise ConfigError(f"no policy with id {policy_id!r}", file=file, key="policies")
    entry = policies[index]
    try:
        lists = PolicyLists.model_validate({name: entry[name] for name in LISTS if name in entry})
    except ValueError as exc:
        raise ConfigError(f"not a valid policy: {exc}", file=file, key=f"policies[{index}]") from exc
    notes = [
        f"policies[{index}].{key}: autoMode has no place for it; left out" for key in entry if key not in (*LISTS, "id")
    ]
    return {"autoMode": {name: getattr(lists, name) for name in LISTS if getattr(lists, name)}}, notes
