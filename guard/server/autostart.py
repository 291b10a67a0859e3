"""``server.url: auto``: a warm ``guard serve`` per config, started by ``guard hook`` itself.

A fresh ``guard hook`` process that must call a model first imports LiteLLM
(seconds). With ``auto``, the first such call starts ``guard serve`` in the
background (loopback, a free port, exits after an idle period) and is judged
in-process; later misses go to the warm service and cost about one model round
trip. A miss that finds the service still starting (a session's start launched
it moments ago) waits for it, within the client's deadline, rather than loading
the model client itself. One service per config fingerprint (files, sizes, mtimes and the model
environment), so editing guard.yaml starts a fresh one and the old one idles
out.

The service is guard's, whatever the project holds: it runs with ``-I``, from
a working directory outside the project, on the interpreter and the guard
package this hook runs (:func:`service_command`), so a ``guard/`` folder the
agent writes into the project is never what serves. The state file naming the
service's URL is in the user's cache, where the guarded agent can write; it is
sealed (:mod:`guard.storage.secret`) over its path, URL and pid, and a file whose seal
fails is ignored; and an answer from the URL counts only with the service's
proof of identity (:mod:`guard.server.identity`).
Standard library only, loaded lazily (no ``logging`` or ``subprocess`` until
needed): this runs inside ``guard hook``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import guard
from guard.core.extras import require
from guard.core.logs import LazyLogger
from guard.core.settings import API_BASE_ENV, MODEL_ENV, LoadedConfig, from_env, user_dir
from guard.storage.secret import seal, verify

__all__ = [
    "IDLE_TIMEOUT",
    "STARTUP_WAIT",
    "Service",
    "running_url",
    "service_command",
    "services",
    "socket_path",
    "start",
    "state_path",
    "stop",
    "write_state",
]

log = LazyLogger("guard.server")
_PURPOSE = "serve"

#: Seconds without a request after which an auto-started service exits.
IDLE_TIMEOUT = 1800
#: The longest a hook waits for a starting service (one loading LiteLLM on a busy machine) before judging in-process.
STARTUP_WAIT = 15.0
#: How often a hook waiting for a starting service reads its state file.
_POLL_S = 0.01
_ENV = (*MODEL_ENV.values(), API_BASE_ENV)


def _folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "guard" / "serve"


def state_path(loaded: LoadedConfig) -> Path:
    """Where the service for this config writes its URL and pid: one per trusted copy (else per file version) and model environment."""
    if loaded.pin:
        parts: list[list[object]] = [["trusted", loaded.settings.config_path, loaded.pin]]
    else:
        parts = [[src, os.stat(src).st_size, os.stat(src).st_mtime_ns] for src in loaded.sources]
    parts.append([from_env(name) for name in _ENV])
    parts.append([sys.executable])
    digest = hashlib.sha1(json.dumps(parts).encode()).hexdigest()[:16]
    return _folder() / f"{digest}.json"


def socket_path(config_path: str | None) -> Path:
    """The Unix socket the service for this config file also listens on, for ``guard install claude --client curl``.

    One per config file (not per version: the service started last takes it over), in guard's state folder,
    where the sandbox ``guard install claude`` writes denies the agent writes: nothing else can listen there.
    """

    anchor = str(Path(config_path).resolve()) if config_path else ""
    return user_dir("state") / "serve" / f"{hashlib.sha1(anchor.encode()).hexdigest()[:12]}.sock"


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _seal(path: Path, url: str | None, pid: int) -> str:
    return seal(_PURPOSE, str(path), url or "", str(pid))


def write_state(path: str | os.PathLike[str], url: str | None, pid: int) -> None:
    """Atomically write the sealed ``{url, pid}`` record of the service at ``path``."""
    target = Path(path)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"url": url, "pid": pid, "mac": _seal(target, url, pid)}))
    os.replace(tmp, target)


def _read(path: Path) -> dict[str, Any] | None:
    """The record at ``path`` if its seal verifies and its process is alive, else None."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    url, pid = data.get("url"), data.get("pid")
    well_formed = (url is None or isinstance(url, str)) and isinstance(pid, int)
    if not well_formed or not verify(data.get("mac"), _PURPOSE, str(path), url or "", str(pid)):
        log.warning("guard serve state file %s fails its seal (tampered or forged); ignoring it", path)
        return None
    return data if _alive(pid) else None


def running_url(loaded: LoadedConfig, *, wait: float = 0.0) -> str | None:
    """The URL of this config's service if it is up; while it is starting, wait up to ``wait`` seconds for it.

    None when no service runs or starts for this config (or its starting process
    died), or it is not up in time. A starting service writes its URL once it
    listens with its model client loaded, so a URL returned here is a warm one.
    One still starting :data:`STARTUP_WAIT` seconds after its launch is taken to
    be stuck: no call waits for it any more.
    """
    path = state_path(loaded)
    try:
        launched_ago = time.time() - path.stat().st_mtime  # the "starting" record is written as the service is launched
    except OSError:
        launched_ago = 0.0
    give_up = time.monotonic() + min(wait, max(STARTUP_WAIT - launched_ago, 0.0))
    while True:
        state = _read(path)
        if state is None:
            return None
        url = state.get("url")
        if isinstance(url, str):
            return url
        if time.monotonic() >= give_up:
            return None
        time.sleep(_POLL_S)


#: Loads the guard package from the folder named first (and only it: its parent is not put on ``sys.path``), then
#: runs its CLI. ``-I`` keeps the working directory and ``PYTHONPATH`` off ``sys.path`` (and ignores ``PYTHON*``
#: variables); a callable hook's code alone imports from its absolute entries, after everything else
#: (:func:`guard.hooks.pinned_import.hook_path`), so nothing there can stand in for guard, its dependencies or the
#: standard library, nor be imported by them.
_BOOT = (
    "import importlib.util, os, sys; package = sys.argv.pop(1); "
    "spec = importlib.util.spec_from_file_location('guard', os.path.join(package, '__init__.py'), submodule_search_locations=[package]); "
    "module = importlib.util.module_from_spec(spec); sys.modules['guard'] = module; spec.loader.exec_module(module); "
    "from guard.cli.main import main; sys.exit(main())"
)


def service_command() -> list[str]:
    """The command that runs the guard this process is running: this interpreter, isolated, and this guard package."""

    return [sys.executable, "-I", "-c", _BOOT, str(Path(guard.__file__).resolve().parent)]


def start(loaded: LoadedConfig) -> bool:
    """Start this config's service in the background unless one is up or starting; True if started.

    :class:`~guard.core.extras.MissingExtra` without the serve extra: a service that cannot start is not launched
    (once per miss, as it was, each a Python process that only printed the install line into its log).
    """
    require("serve", "the warm guard serve (server.url: auto)")
    path = state_path(loaded)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # another guard hook is starting it right now
        if _read(path) is not None:
            return False
        # lazy: subprocess only to start a service, not on a hook that finds one running
        import subprocess  # only here: a hook sending to a running service never starts one

        command = [
            *service_command(),
            "serve",
            "--port",
            "0",
            "--log-level",
            "warning",
            "--state-file",
            str(path),
            "--idle-timeout",
            str(IDLE_TIMEOUT),
            "--unix-socket",
            str(socket_path(loaded.settings.config_path)),
        ]
        if loaded.settings.config_path:
            command += ["--config", str(Path(loaded.settings.config_path).resolve())]
        with open(path.with_suffix(".log"), "ab") as output:
            # a cwd outside the project: nothing there is on the service's path or found as its config
            child = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                start_new_session=True,
                close_fds=True,
                cwd=path.parent,
            )
        # "starting": later hooks neither send to it nor start a second one until it writes its URL
        try:
            write_state(path, None, child.pid)
        except OSError:  # TrustError included: the service is then never trusted, hooks judge in-process
            log.warning("cannot write guard serve state file %s", path, exc_info=True)
    return True


class Service(NamedTuple):
    """A background ``guard serve`` this user's hooks started: its state file, URL (None while starting) and process."""

    state_file: Path
    url: str | None
    pid: int
    started: float  # when it was launched (the state file's first write), seconds since the epoch
    command: tuple[str, ...]  # its command line, as the system reports it (empty when it cannot be read)


def _command_line(pid: int) -> tuple[str, ...]:
    """``pid``'s argv: /proc on Linux, else ``ps``; empty when neither can say."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        return tuple(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)
    except OSError:
        pass
    # lazy: subprocess and shlex only off /proc, not on a hook that finds its service running
    import shlex
    import subprocess

    try:
        done = subprocess.run(["ps", "-o", "args=", "-p", str(pid)], capture_output=True, text=True, timeout=5)
        return tuple(shlex.split(done.stdout.strip())) if done.returncode == 0 else ()
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return ()


def _is_service(command: tuple[str, ...], state_file: Path) -> bool:
    """Whether ``command`` is the ``guard serve`` that owns ``state_file`` (a reused pid is some other program)."""
    return "serve" in command and "--state-file" in command and str(state_file) in command


def services() -> list[Service]:
    """Every running background service whose sealed state file names it, oldest first."""
    found: list[Service] = []
    for path in sorted(_folder().glob("*.json")):
        state = _read(path)
        if state is None:
            continue
        command = _command_line(state["pid"])
        if command and not _is_service(command, path):
            continue  # the pid now belongs to another program: the service is gone
        try:
            started = path.stat().st_mtime
        except OSError:
            continue
        found.append(Service(path, state.get("url"), state["pid"], started, command))
    return sorted(found, key=lambda s: s.started)


def stop(service: Service, *, wait: float = 10.0) -> bool:
    """Stop ``service`` (SIGTERM: in-flight calls finish) and wait up to ``wait`` seconds; True once it is gone.

    Nothing is signalled unless the process is still the ``guard serve`` of that state file.
    """
    import signal  # lazy: only guard services stops a service, not a hook that finds one running

    if not _is_service(_command_line(service.pid), service.state_file):
        return not _alive(service.pid)
    try:
        os.kill(service.pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    give_up = time.monotonic() + wait
    while time.monotonic() < give_up:
        if not _alive(service.pid) or _zombie(service.pid):
            service.state_file.unlink(missing_ok=True)  # it removes its own on a clean exit; not after a crash
            return True
        time.sleep(0.05)
    return False


def _zombie(pid: int) -> bool:
    """Exited but not yet reaped by its parent (a hook process that is itself gone leaves it to init)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return False
