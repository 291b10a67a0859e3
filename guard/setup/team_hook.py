"""Claude Code's project hooks as a team commits them: a path-free launcher shared by all, the program each user's own.

``.claude/settings.json`` is the file a team commits, so what ``guard install claude``
writes there must hold for every teammate: no one user's venv, home or socket. Each
event's command is a short POSIX launcher (:func:`launcher`) that runs the program
named by ``$GUARD_HOOK`` with ``--project "$CLAUDE_PROJECT_DIR"`` (the hook finds the
project's config wherever the agent's ``cd`` left the session). ``GUARD_HOOK`` is the
personal part: ``env`` in ``.claude/settings.local.json`` (never committed: install adds
it to ``.claude/.gitignore``), which Claude Code passes to every hook it starts.

A teammate without guard has no ``GUARD_HOOK``: the launcher blocks tool calls and
prompts with a message saying what to run (on other events it says so without
blocking: a blocked Stop would keep the agent going). A program that cannot run or
ends with anything but 0 or 2 blocks too, besides ``onFailure: "block"``, which Claude
Code older than 2.1.295 ignores. Standard library only.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from guard.adapters.claude_local import LOCAL_FILE, personal
from guard.adapters.settings_file import dump_json, parse_json, write_atomic
from guard.config.own_hook import LAUNCHER_PROGRAM, parse_guard_hook
from guard.core.errors import ConfigError
from guard.core.extras import DISTRIBUTION

__all__ = [
    "BLOCKING",
    "MISSING",
    "VARIABLE",
    "ignore_local",
    "launcher",
    "launcher_options",
    "personal_command",
    "resolve",
    "write_personal",
]

#: The variable naming this user's hook program (``/abs/guard hook --deadline 30``, or the curl client before it).
VARIABLE = LAUNCHER_PROGRAM.lstrip("$")
#: Claude Code events whose hook, when it blocks, stops what would come next (a tool call, a prompt, a permission).
BLOCKING = frozenset({"PreToolUse", "UserPromptSubmit", "PermissionRequest"})
MISSING = (
    "guard: .claude/settings.json in this project runs guard on every tool call, and guard is not installed for you here."
    f" Install it (pip install {DISTRIBUTION}), then run guard install claude in this project (docs/team.md)"
)


def launcher(event: str, timeout_s: int) -> str:
    """The command for ``event`` in the shared settings: run ``$GUARD_HOOK`` (else a ``guard`` on PATH), or block with a message.

    Without either it blocks what ``event`` guards and says what to run; on events that
    guard nothing (Stop, PostToolUse …) it says so without blocking (a blocked Stop would
    keep the agent going). ``timeout_s`` is the client's timeout, the deadline a ``guard``
    found on PATH is given.
    """
    program = f'g=${VARIABLE}; [ -n "$g" ] || ! command -v guard >/dev/null || g="guard hook --deadline {timeout_s}"; '
    hook = '"$g --format claude --project \\"\\$CLAUDE_PROJECT_DIR\\""'
    if event in BLOCKING:
        missing = f"{{ echo {shlex.quote(MISSING + '; the call is blocked')} >&2; exit 2; }}"
        failed = (
            '{ echo "guard: its hook program ($g) ended with status $s; the call is blocked (guard doctor)" >&2; s=2; }'
        )
        return f'{program}[ -n "$g" ] || {missing}; eval {hook}; s=$?; [ $s = 0 ] || [ $s = 2 ] || {failed}; exit $s'
    notice = json.dumps({"systemMessage": MISSING})
    return f'{program}[ -n "$g" ] || {{ echo {shlex.quote(notice)}; exit 0; }}; eval "exec "{hook}'


def launcher_options(command: object) -> str | None:
    """The ``guard hook`` options a launcher passes after ``$GUARD_HOOK`` (``--format claude --project …``), or None."""
    parsed = parse_guard_hook(command)
    if parsed is None or parsed.program != (LAUNCHER_PROGRAM,):
        return None
    return f'--format {parsed.options["--format"]} --project "$CLAUDE_PROJECT_DIR"'


def personal_command(program: list[str], deadline: int) -> str:
    """This user's ``GUARD_HOOK`` for ``guard hook`` itself: the absolute program and the client's deadline."""
    return shlex.join([*program, "hook", "--deadline", str(deadline)])


def resolve(command: str, *, project_dir: Path, home: Path) -> str | None:
    """What a launcher ``command`` runs for this user (``GUARD_HOOK`` and its options); None without a ``GUARD_HOOK``."""
    options = launcher_options(command)
    found = personal(project_dir=project_dir, home=home)
    if options is None or found is None:
        return None
    return f"{found[1]} {options}"


def write_personal(project_dir: Path, value: str | None, *, dry_run: bool = False) -> tuple[Path, bool]:
    """Set (``value``) or remove (None) ``GUARD_HOOK`` in the project's local settings; (the file, whether it changed)."""
    path = project_dir / LOCAL_FILE
    original = path.read_text(encoding="utf-8") if path.exists() else None
    data: dict[str, Any] = parse_json(original, path)
    env = data.get("env", {})
    if not isinstance(env, dict):
        raise ConfigError("must be an object of environment variables; nothing was written", file=str(path), key="env")
    if env.get(VARIABLE) == value or (value is None and VARIABLE not in env):
        return path, False
    if value is None:
        del env[VARIABLE]
    else:
        env[VARIABLE] = value
    if env:
        data["env"] = env
    else:
        data.pop("env", None)
    if not dry_run:
        write_atomic(path, dump_json(data, original))
    return path, True


def ignore_local(project_dir: Path) -> Path | None:
    """Keep the local settings out of git: add them to ``.claude/.gitignore``; the file when it changed, else None."""
    ignore = project_dir / ".claude" / ".gitignore"
    name = Path(LOCAL_FILE).name
    text = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
    if any(line.strip().lstrip("/") in (name, "*") for line in text.splitlines()):
        return None
    write_atomic(ignore, text + ("" if not text or text.endswith("\n") else "\n") + name + "\n")
    return ignore
