"""Whether the Codex session a hook runs in was started with options that put another sandbox in place of guard's profile.

``codex -s workspace-write``, ``-c sandbox_mode=…``, ``-c default_permissions=…``,
``--dangerously-bypass-approvals-and-sandbox`` or ``-p NAME`` naming a profile file that sets one of those keys, on the
session's command line, select another sandbox than the ``default_permissions = "guard"`` that ``guard install codex``
writes: with the real CLI (0.171) a command the hook could not read then wrote guard.yaml. Neither the config files (``guard doctor``) nor the event's payload (its
``permission_mode`` stays ``bypassPermissions`` either way) show it; the command line does. Codex starts each hook
itself, so the hook's parent process is the session's ``codex``: on Linux its arguments are in
``/proc/PID/cmdline``. Elsewhere this says nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["profile_override"]

#: Options that select another sandbox than the config's profile (0.171, ``codex --help``): a legacy sandbox mode,
#: none at all, or automatic review "using the workspace-write sandbox".
_OPTIONS = frozenset({"-s", "--sandbox", "--dangerously-bypass-approvals-and-sandbox", "--approve-for-me"})
#: The option naming a profile file (``$CODEX_HOME/NAME.config.toml``), whose settings are laid over the config's.
_PROFILE_FILE = frozenset({"-p", "--profile"})
#: The configuration keys that do it from ``-c KEY=VALUE`` or a profile file (``default_permissions`` naming another
#: profile than guard's).
_KEYS = frozenset({"sandbox_mode", "default_permissions", "permissions"})
_CONFIG = frozenset({"-c", "--config"})
#: The profile ``guard install codex`` selects (:data:`guard.adapters.codex.PROFILE`, not imported: this module loads
#: on every Codex event).
_GUARD = "guard"
#: How many processes up from the hook the session's ``codex`` may be (a launcher script between them).
_DEPTH = 3


def _ancestors(pid: int) -> Iterable[list[str]]:
    """The arguments of ``pid``'s parent, grandparent … (as far as ``/proc`` shows them)."""
    for _ in range(_DEPTH):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat.rsplit(")", 1)[1].split()[1])  # the parent's id, after the program's name
            words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            return
        yield [word.decode(errors="replace") for word in words if word]


def _profile_file_sets(name: str, env: Mapping[str, str]) -> bool:
    """Whether the profile file ``-p NAME`` lays over the config sets one of :data:`_KEYS` (with the real CLI, one that
    does not kept guard's profile); False for a file Codex could not read either."""
    import tomllib  # only for a session started with -p

    home = env.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
    try:
        settings = tomllib.loads(Path(home, f"{name}.config.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return (
        "sandbox_mode" in settings or "permissions" in settings or settings.get("default_permissions", _GUARD) != _GUARD
    )


def _overriding(args: list[str], env: Mapping[str, str]) -> str | None:
    """The first of ``args`` (Codex's) that selects another sandbox than the config's profile, or None."""
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            return None
        if arg.startswith("--") or len(arg) == 2:
            name, equals, value = arg.partition("=")
        else:  # -cKEY=VALUE, -sMODE
            name, equals, value = arg[:2], "=", arg[2:].removeprefix("=")
        if name in _OPTIONS:
            return name
        if name in _PROFILE_FILE:
            profile = value if equals else next(rest, "")
            if _profile_file_sets(profile, env):
                return f"{name} {profile}"
        if name in _CONFIG:
            key, _, setting = (value if equals else next(rest, "")).partition("=")
            key = key.strip()
            if key == "default_permissions" and setting.strip().strip("'\"") == _GUARD:
                continue  # guard's own profile, named again
            if key.split(".", 1)[0] in _KEYS:
                return f"{name} {key}"
    return None


def profile_override(env: Mapping[str, str]) -> str | None:
    """The option the Codex session this hook runs in was started with that puts another sandbox in place of guard's
    profile (``-s``, ``-c sandbox_mode`` …), or None (none, or no Codex process found above the hook)."""
    for args in _ancestors(os.getpid()):
        if args and os.path.basename(args[0]) == "codex":
            return _overriding(args[1:], env)
    return None
