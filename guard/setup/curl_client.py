"""``guard install claude --client curl``: Claude Code's command hook as curl to the warm service, no interpreter.

A cache hit through ``guard hook`` pays for starting Python and the standard library a
hit needs (docs/benchmarks.md); this client asks the warm ``guard serve`` over the Unix
socket it listens on (:func:`guard.server.autostart.socket_path`) with curl instead.
What keeps it from being a hole, each only with the sandbox settings install writes:

- the socket is in guard's state folder, which the agent may not write: nothing of
  the agent's can listen on that path in place of the service;
- the credential curl sends (:func:`guard.server.identity.credential`) is in a file
  beside guard's secret, which the agent may not read: it cannot post forged events;
- any answer but one carrying the service's exit-code header (0 or 2) runs the full
  ``guard hook`` on the same event (guard/claude_plugin/hooks/curl-client.sh), within
  Claude Code's timeout: a service that is down, slow or refusing never reads as "proceed".

It is the personal program a project's shared launcher runs (``GUARD_HOOK`` in the
local settings, :mod:`guard.setup.team_hook`), so SessionStart goes through it too: a
warm service answers it, and with none (or one a config change retired) the fallback
``guard hook`` starts the service the socket leads to.
"""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path

from guard.core.errors import GuardError
from guard.core.settings import LoadedConfig, user_dir
from guard.server.autostart import socket_path
from guard.server.identity import credential, service_key

__all__ = [
    "MIN_TIMEOUT_S",
    "SCRIPT",
    "credential_path",
    "curl_max_time",
    "hook_budget",
    "personal_command",
    "socket_for",
    "write_credential",
]

SCRIPT = Path(__file__).resolve().parent.parent / "claude_plugin" / "hooks" / "curl-client.sh"
#: The shortest hook timeout that leaves curl and the fallback ``guard hook`` each a useful share.
MIN_TIMEOUT_S = 15


def socket_for(loaded: LoadedConfig) -> Path:
    return socket_path(loaded.settings.config_path)


def credential_path(loaded: LoadedConfig) -> Path:
    """The header file curl sends to this config's service (its key may be the config's ``server.token``).

    In guard's config folder, beside the secret, so the sandbox denies the agent reads of it.
    """
    return user_dir("config") / "claude-hook" / f"{socket_for(loaded).stem}.header"


def curl_max_time(timeout_s: int) -> int:
    """curl's share of the hook timeout: a third; the fallback ``guard hook`` gets the rest."""
    return max(timeout_s // 3, 1)


def personal_command(program: list[str], loaded: LoadedConfig, timeout_s: int) -> str:
    """This user's ``GUARD_HOOK``: the script, its socket, credential file and curl budget, then the fallback ``guard hook``.

    The launcher adds ``--format claude --project …``. The fallback's ``--deadline`` is what
    remains of Claude Code's timeout after curl's, so it answers with guard's failure policy
    before Claude Code would kill it (a killed hook proceeds).
    """
    max_time = curl_max_time(timeout_s)
    fallback = [*program, "hook", "--deadline", str(timeout_s - max_time - 1)]
    return shlex.join(
        ["/bin/sh", str(SCRIPT), str(socket_for(loaded)), str(credential_path(loaded)), str(max_time), *fallback]
    )


def hook_budget(command: str, deadline: str | None) -> str | None:
    """The client timeout a curl client ``command`` was written for (curl's share, a second, the fallback's ``--deadline``)."""
    try:
        return str(int(shlex.split(command)[4]) + 1 + int(deadline or ""))
    except (IndexError, ValueError):
        return deadline


def write_credential(loaded: LoadedConfig) -> Path:
    """Write ``Authorization: Bearer <credential>`` (mode 0600, atomically) for the service this config's hooks start."""
    key = service_key(loaded.settings)
    if key is None:
        raise GuardError("guard's secret cannot be read, so the curl client has no credential (see guard doctor)")
    path = credential_path(loaded)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, stat.S_IRUSR | stat.S_IWUSR)
    with os.fdopen(fd, "w") as out:
        out.write(f"Authorization: Bearer {credential(key)}\n")
    os.replace(tmp, path)
    return path
