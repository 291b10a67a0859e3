"""Command hooks: one shell command line, with Claude Code's exit-code semantics.

The event reaches the command as data, never as code: ``$ARGUMENTS`` and
``$HOOK_PAYLOAD`` are environment variables holding the event JSON (so the shell's
own expansion yields a string), ``$HOOK_EVENT`` is the canonical event name, and
the whole payload is on stdin. The command line itself is judged by the static
analyser before it ever runs (:mod:`guard.command_analysis`).

The command runs in the folder of the config file that declared it (guard.yaml's
folder, the project root for a ``.claude/settings.json``, a skill's own folder),
never in the event's ``cwd``: that field is written by whoever sends the event, so
honouring it would let a payload pick which ``hooks/check.sh`` runs.
``$CLAUDE_PROJECT_DIR`` is that folder unless the client already set it. Its ``PATH`` leaves out the
folders inside the project (:func:`search_path`): a bare ``sh`` or ``python3`` is never a program the agent wrote.

A hook of a trusted config (``guard hook``, ``guard serve``) runs only the
scripts the user trusted: one that changed since ``guard trust``, or that was
not there then, is refused (:class:`HookRefused`, so the hook's ``failure_mode``
applies) and the reason says how to accept it. Running a sealed old copy instead
would break scripts that load files beside them; refusing is visible either way.

Exit 0: stdout is a JSON decision when its first non-blank character is ``{``,
otherwise plain text (context for ``user_turn`` and ``session_start``, ignored
elsewhere). Exit 2: deny, with stderr as the reason. Anything else: a
non-blocking error (:class:`HookError`; the engine applies ``failure_mode``).
On cancellation (the engine's timeout) the whole process group is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Any

from guard.command_analysis import analyse
from guard.core.decision import HookResult
from guard.core.errors import HookError, HookRefused
from guard.core.events.model import Event
from guard.core.hook import Hook, HookContext
from guard.core.spec import HookSpec
from guard.hooks.command_output import MEMORY_CAP, Captured, read_capped, spill_long_text
from guard.hooks.command_payload import encode_payload, fit_payload
from guard.hooks.reply import decode_reply, parse_reply

__all__ = ["KILL_GRACE", "SHELL", "CommandHook", "search_path"]

SHELL = "/bin/sh"
#: Seconds between SIGTERM and SIGKILL for a cancelled hook's process group.
KILL_GRACE = 0.3
#: Events whose plain-text stdout becomes additional context (Claude Code's rule).
_CONTEXT_EVENTS = frozenset({"user_turn", "session_start"})


def search_path(path: str, projects: tuple[str, ...]) -> str:
    """``PATH`` without the folders the agent may write that a bare program name would be found in: one inside the
    project (an activated ``.venv/bin``, ``node_modules/.bin``), and a relative or empty entry (the working folder,
    which is the project; not the home, where a config may also live). The pin covers the scripts a hook names; ``sh`` or ``python3`` found there is the agent's
    program, not the one the user trusted (a ``.venv/bin/sh`` it wrote answered for ``sh deny.sh``)."""
    home = os.path.realpath(os.path.expanduser("~")).rstrip(os.sep) + os.sep
    folders = (os.path.realpath(folder).rstrip(os.sep) + os.sep for folder in projects if folder)
    inside = tuple(folder for folder in folders if not home.startswith(folder))  # a config in the home is no project
    kept = [
        entry
        for entry in path.split(os.pathsep)
        if os.path.isabs(entry) and not (os.path.realpath(entry).rstrip(os.sep) + os.sep).startswith(inside)
    ]
    return os.pathsep.join(kept)


class CommandHook(Hook):
    """Runs its ``command`` option with ``/bin/sh -c`` in its own process group."""

    def __init__(self, spec: HookSpec, ctx: HookContext) -> None:
        self.spec = spec
        self.ctx = ctx
        command = spec.options.get("command")
        self.command: str = command if isinstance(command, str) else ""
        self.analysis = analyse(self.command, external=spec.external)

    async def run(self, event: Event) -> HookResult:
        command = self._checked_command()
        self._check_scripts()
        payload = event.payload()
        stdin = encode_payload(payload)
        env_payload = fit_payload(payload, full=stdin)
        workdir = self._workdir()
        env = {**os.environ, "ARGUMENTS": env_payload, "HOOK_PAYLOAD": env_payload, "HOOK_EVENT": event.event}
        env.setdefault("CLAUDE_PROJECT_DIR", workdir)
        env["PATH"] = search_path(env.get("PATH", ""), (workdir, os.getcwd(), env["CLAUDE_PROJECT_DIR"]))
        if not self._imports_neighbours(workdir):
            env["PYTHONSAFEPATH"] = "1"
        try:
            proc = await asyncio.create_subprocess_exec(
                SHELL,
                "-c",
                command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=workdir,
                env=env,
                start_new_session=True,  # its own process group, so a timeout can kill all of it
            )
        except OSError as exc:
            raise HookError(f"command hook {self.spec.id} could not start: {exc}") from exc
        try:
            _, out, err = await asyncio.gather(
                _feed(proc, stdin.encode("utf-8")), read_capped(proc.stdout), read_capped(proc.stderr)
            )
            code = await proc.wait()
        except BaseException:  # cancelled by the engine's timeout, or anything else: leave nothing behind
            await _kill_group(proc)
            raise
        return self._result(code, out, err, event)

    def _checked_command(self) -> str:
        spec = self.spec
        if not self.command.strip():
            raise HookError(f"command hook {spec.id} has no command")
        if self.analysis.refused:
            needs = "needs a person's approval" if self.analysis.level == "escalate" else "is refused for every source"
            reasons = "; ".join(self.analysis.reasons)
            raise HookRefused(f"command hook {spec.id} (from {spec.source}) {needs}: {reasons}")
        return self.command

    def _check_scripts(self) -> None:
        """Refuse to run a script of a trusted config that is not the one the user trusted (see the module docstring)."""
        if self.spec.scripts is None:  # read from disk by the user's own tools (guard check): nothing was pinned
            return
        from guard.config.hook_scripts import changed_script, scripts_of

        changed = changed_script(self.spec.scripts, scripts_of(self.command, self._workdir()))
        if changed:
            raise HookRefused(
                f"command hook {self.spec.id} was not run: {changed}. Review it and run `guard trust` in a terminal to accept it"
            )

    def _imports_neighbours(self, workdir: str) -> bool:
        """Whether a script the hook runs sits in a folder of its own, guarded with it, whose modules it may import.
        Otherwise its Python runs with ``PYTHONSAFEPATH``: a script directly in the project folder, where only its own
        file is guarded, would import a ``json.py`` the agent wrote beside it in the standard library's place."""
        from guard.config.hook_scripts import in_a_folder_of_its_own, scripts_of

        pinned = self.spec.scripts
        scripts = [path for path, _ in pinned] if pinned is not None else scripts_of(self.command, workdir)
        return any(in_a_folder_of_its_own(script, workdir) for script in scripts)

    def _workdir(self) -> str:
        """The declaring config's folder (the settings' base for hooks built in Python)."""
        return str(Path(self.spec.workdir or self.ctx.settings.base_dir).resolve())

    def _result(self, code: int, out: Captured, err: Captured, event: Event) -> HookResult:
        spec = self.spec
        details: dict[str, Any] = {"exit_code": code}
        if code == 0:
            data = decode_reply(out.text, hook_id=spec.id)
            if out.dropped_bytes and data is not None:
                raise HookError(f"command hook {spec.id}: JSON reply larger than the {MEMORY_CAP}-byte read limit")
            if data is not None:
                result = parse_reply(data, hook_id=spec.id, kind="command", event=event.event)
                result.details = {**details, **result.details}
            elif event.event in _CONTEXT_EVENTS and out.text.strip():
                result = HookResult(id=spec.id, type="command", additional_context=out.text.strip(), details=details)
            else:
                result = HookResult(id=spec.id, type="command", details=details)
            return self._capped(result)
        if code == 2:
            reason = err.text.strip() or f"command hook {spec.id} exited 2 (blocked) without a reason on stderr"
            return self._capped(HookResult(id=spec.id, type="command", decision="deny", reason=reason, details=details))
        how = f"was killed by signal {-code}" if code < 0 else f"exited {code}"
        stderr, path = spill_long_text(err.text.strip(), hook_id=spec.id, label="stderr", base_dir=self._base_dir())
        where = f" (whole stderr in {path})" if path else ""
        raise HookError(f"command hook {spec.id} {how}{where}" + (f": {stderr}" if stderr else ""))

    def _capped(self, result: HookResult) -> HookResult:
        """Long reason or context → a file, and a preview with its path in their place."""
        for field, label in (("reason", "reason"), ("additional_context", "context")):
            text = getattr(result, field)
            if text:
                shown, path = spill_long_text(text, hook_id=self.spec.id, label=label, base_dir=self._base_dir())
                setattr(result, field, shown)
                if path is not None:
                    result.details.setdefault("output_file", path)
        return result

    def _base_dir(self) -> Path:
        return Path(self.ctx.settings.base_dir)


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """Write the whole payload to stdin; a hook that does not read it is not an error."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.close()


def _signal_group(pgid: int, sig: int) -> bool:
    """Signal the group; False when no process is left in it."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # the pgid was reused by someone else's process: ours are gone
        return False
    return True


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the hook's whole process group, then SIGKILL whatever is left.

    The SIGKILL follows as soon as the shell has exited (or after a short grace), so
    a grandchild that ignores SIGTERM cannot outlive the hook and the caller is not
    kept waiting on it.
    """
    pgid = proc.pid  # start_new_session: the shell leads its own group
    if not _signal_group(pgid, signal.SIGTERM):
        return
    try:
        # Poll the return code: proc.wait() would also wait for the pipes, which a
        # surviving grandchild keeps open.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + KILL_GRACE
        while proc.returncode is None and loop.time() < deadline:
            await asyncio.sleep(0.01)
    finally:  # also when this cleanup is itself cancelled
        _signal_group(pgid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    with contextlib.suppress(asyncio.CancelledError):
        await proc.wait()
