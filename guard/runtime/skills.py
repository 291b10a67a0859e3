"""Hooks declared in a SKILL.md frontmatter, mounted only when the user picks the skill.

A skill is third-party code: its hooks run only after the user explicitly selects
it (a message starting ``[use name]``, or :func:`mount_skill` called by the
embedding application), only for that run (:meth:`Registry.run`), and are gone
when the run ends. A skill the model loads on its own registers nothing, since
nothing here reacts to the model. Skill hooks are "external": they fail closed
unless they say otherwise and their commands get the stricter analysis.

Frontmatter problems are local: an unknown event, a non-list under an event or a
bad entry is skipped with a warning and the skill's other hooks still load. A
malformed ``tools`` skips its hook rather than widening it to every tool.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guard.config.entries import spec_from_entry
from guard.core.errors import ConfigError
from guard.core.events.names import canonical_event
from guard.core.spec import HookSpec
from guard.runtime.registry import Registry

__all__ = ["SKILL_EVENTS", "Skill", "load_skill", "mount_selected", "mount_skill", "select_skills"]

log = logging.getLogger("guard.runtime.skills")

#: Events a skill may hook (SessionEnd may be written Stop, as in Claude Code).
SKILL_EVENTS = frozenset(
    {"session_start", "session_end", "stop", "pre_tool_use", "post_tool_use", "post_tool_use_failure"}
)
#: Keys a skill hook entry may carry: no ``command``/``callable`` (arbitrary imports) and
#: no ``headers`` (their ``${VAR}`` would let a skill post the user's environment away).
_ENTRY_KEYS = frozenset(
    {"id", "script", "url", "prompt", "tools", "failure_mode", "timeout", "secret", "fire_and_forget"}
)
_USE = re.compile(r"\s*\[use\s+([^\]\s]+)\s*\]")
_ENV = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


@dataclass(frozen=True)
class Skill:
    """A skill's name, file and the hooks that loaded (with what was skipped and why)."""

    name: str
    path: Path
    specs: tuple[HookSpec, ...]
    warnings: tuple[str, ...]


def _frontmatter(path: Path) -> dict[str, Any]:
    """The YAML between the leading ``---`` lines; {} when there is none."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read skill: {exc.strerror}", file=str(path)) from exc
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), None)
    if end is None:
        raise ConfigError("frontmatter starts with --- but never ends", file=str(path))
    import yaml

    try:
        data = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark else ""
        raise ConfigError(f"invalid YAML frontmatter{where}: {getattr(exc, 'problem', exc)}", file=str(path)) from exc
    if not isinstance(data, dict):
        raise ConfigError("frontmatter must be a mapping", file=str(path))
    return data


def _secret(value: Any) -> Any:
    """A literal secret, or exactly ``${VAR}`` from the environment (nothing fancier)."""
    if not isinstance(value, str) or "${" not in value:
        return value
    match = _ENV.match(value)
    if not match:
        raise ValueError("secret must be a literal or exactly ${VAR}")
    if match.group(1) not in os.environ:
        raise ValueError(f"environment variable {match.group(1)} is not set (used as {value})")
    return os.environ[match.group(1)]


def _entry(entry: Any, skill: str, event_key: str, index: int) -> dict[str, Any]:
    """The entry as ``spec_from_entry`` wants it; raises ValueError for skill-specific problems."""
    if not isinstance(entry, dict):
        raise ValueError(f"a hook entry must be a mapping, got {type(entry).__name__}")
    unknown = sorted(set(map(str, entry)) - _ENTRY_KEYS)
    if unknown:
        raise ValueError(f"unsupported key(s) {', '.join(unknown)} (skill hooks take {', '.join(sorted(_ENTRY_KEYS))})")
    if isinstance(entry.get("url"), str) and "${" in entry["url"]:
        raise ValueError("environment variables are not substituted in a skill's url")
    own = entry.get("id")
    hook_id = f"skill:{skill}:{own if isinstance(own, str) and own else f'{event_key}[{index}]'}"
    return {**entry, "id": hook_id, "secret": _secret(entry.get("secret"))}


def load_skill(path: str | Path) -> Skill:
    """Read a SKILL.md and build its hooks; a broken hook is skipped with a warning.

    Raises :class:`ConfigError` only when the file or its frontmatter as a whole
    cannot be read.
    """
    path = Path(path)
    data = _frontmatter(path)
    name = str(data.get("name") or path.parent.name or path.stem)
    specs: list[HookSpec] = []
    warnings: list[str] = []

    def skip(why: str, key: str | None = None) -> None:
        warnings.append(f"{path}: {key}: {why}; skipped" if key else f"{why}; skipped")
        log.warning("skill %s: %s", name, warnings[-1])

    block = data.get("hooks")
    if block is None:
        return Skill(name, path, (), ())
    if not isinstance(block, dict):
        skip("must map event names to lists of hooks", "hooks")
        return Skill(name, path, (), tuple(warnings))
    for event_key, entries in block.items():
        key = f"hooks.{event_key}"
        try:
            event = canonical_event(str(event_key))
        except ValueError:
            event = ""
        if event not in SKILL_EVENTS:
            skip(
                "unknown event (skills may hook SessionStart, SessionEnd/Stop, PreToolUse, PostToolUse, PostToolUseFailure)",
                key,
            )
            continue
        if not isinstance(entries, list):
            skip("must be a list of hooks", key)
            continue
        for i, entry in enumerate(entries):
            origin = f"{path}: {key}[{i}]"
            try:
                specs.append(
                    spec_from_entry(
                        _entry(entry, name, str(event_key), i),
                        event=event,
                        source="skill",
                        origin=origin,
                        index=i,
                        workdir=str(path.resolve().parent),
                    )
                )
            except ConfigError as exc:  # already names the file and key path
                skip(str(exc))
            except ValueError as exc:
                skip(str(exc), f"{key}[{i}]")
    return Skill(name, path, tuple(specs), tuple(warnings))


def select_skills(prompt: str, available: dict[str, str | Path]) -> list[str]:
    """Skills the user picked: ``[use name]`` tags at the very start of their message.

    Only the start counts, so a ``[use x]`` quoted later in a message or inside
    tool output selects nothing. Unknown names are ignored with a warning.
    """
    chosen: list[str] = []
    position = 0
    while match := _USE.match(prompt, position):
        position = match.end()
        name = match.group(1)
        if name not in available:
            log.warning("[use %s]: no such skill (known: %s)", name, ", ".join(sorted(available)) or "none")
        elif name not in chosen:
            chosen.append(name)
    return chosen


def mount_skill(registry: Registry, path: str | Path) -> Skill:
    """Load a skill the user chose and mount its hooks for the current run only.

    Must be called inside ``with registry.run():``; the hooks vanish when it ends.
    """
    skill = load_skill(path)
    registry.mount(skill.specs)
    return skill


def mount_selected(registry: Registry, prompt: str, available: dict[str, str | Path]) -> list[Skill]:
    """Mount every skill the user's message selects with ``[use name]`` (inside a run)."""
    return [mount_skill(registry, available[name]) for name in select_skills(prompt, available)]
