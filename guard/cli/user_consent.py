"""Asking the user, and only the user: a question on the terminal, refused under an agent client.

Accepting a config (``guard trust``) or showing the service's token hands over
what guard enforces. The agent guard watches runs as the same user and can run
guard itself, so a yes must come from a person at a terminal: the question is
asked on ``/dev/tty`` (the process's controlling terminal, which a tool call's
pipes are not), and it is not asked at all when the environment says an agent
client started this process. The markers are the variables the clients set for
the commands their agent runs (and for their hooks):

==============  ===================================================================
client          markers
==============  ===================================================================
Claude Code     ``CLAUDECODE``, ``CLAUDE_CODE_ENTRYPOINT``, ``CLAUDE_CODE_SESSION_ID``
Codex           ``CODEX_SANDBOX``, ``CODEX_SANDBOX_NETWORK_DISABLED``, ``CODEX_THREAD_ID``
Gemini CLI      ``GEMINI_CLI``
Copilot         ``COPILOT_CLI``, ``COPILOT_AGENT``, ``COPILOT_AGENT_SESSION_ID``
Cursor          ``CURSOR_AGENT``, ``CURSOR_EXTENSION_HOST_ROLE=agent-exec``
any             ``AI_AGENT`` (the cross-vendor convention Claude Code also sets)
==============  ===================================================================

An agent can unset them, which is why the terminal is required as well; neither
is a sandbox (see docs/threat-model.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["AGENT_MARKERS", "NoTerminal", "agent_client", "ask", "has_terminal", "refusal"]

#: Variable → client, for variables that mark a process an agent client started.
AGENT_MARKERS: dict[str, str] = {
    "CLAUDECODE": "Claude Code",
    "CLAUDE_CODE_ENTRYPOINT": "Claude Code",
    "CLAUDE_CODE_SESSION_ID": "Claude Code",
    "CODEX_SANDBOX": "Codex",
    "CODEX_SANDBOX_NETWORK_DISABLED": "Codex",
    "CODEX_THREAD_ID": "Codex",
    "GEMINI_CLI": "Gemini CLI",
    "COPILOT_CLI": "Copilot",
    "COPILOT_AGENT": "Copilot",
    "COPILOT_AGENT_SESSION_ID": "Copilot",
    "CURSOR_AGENT": "Cursor",
    "AI_AGENT": "an agent client",
}


class NoTerminal(OSError):
    """This process has no controlling terminal to ask on."""


def agent_client(env: Mapping[str, str] | None = None) -> str | None:
    """The agent client whose markers are set in ``env`` (default: this process's), or None."""
    env = os.environ if env is None else env
    if env.get("CURSOR_EXTENSION_HOST_ROLE") == "agent-exec":
        return "Cursor"
    return next((client for name, client in AGENT_MARKERS.items() if env.get(name)), None)


def refusal(what: str, env: Mapping[str, str] | None = None) -> str | None:
    """Why ``what`` cannot be done here (an agent client's environment), or None."""
    client = agent_client(env)
    if client is None:
        return None
    names = sorted(name for name in AGENT_MARKERS if (os.environ if env is None else env).get(name))
    return (
        f"{what} needs you, not an agent: this process was started by {client} ({', '.join(names) or 'CURSOR_EXTENSION_HOST_ROLE'} set)."
        " Run it in a terminal of your own"
    )


def _terminal() -> int:
    try:
        return os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError as exc:
        raise NoTerminal(exc.errno, "no terminal to ask on (/dev/tty)") from exc


def ask(question: str, *, text: str = "") -> bool:
    """Print ``text`` and ``question`` on the controlling terminal and read the answer from it: True for yes.

    NoTerminal when there is none (a tool call's pipes, CI, ``setsid``).
    """
    fd = _terminal()
    try:
        if text:
            os.write(fd, (text if text.endswith("\n") else text + "\n").encode("utf-8", "replace"))
        os.write(fd, f"{question} [y/N] ".encode("utf-8", "replace"))
        answer = b""
        while not answer.endswith(b"\n") and len(answer) < 1024:
            chunk = os.read(fd, 1)
            if not chunk:
                break
            answer += chunk
    finally:
        os.close(fd)
    return answer.decode("utf-8", "replace").strip().lower() in ("y", "yes")


def has_terminal() -> bool:
    """Whether this process has a controlling terminal (``--yes`` skips the question only then)."""
    try:
        os.close(_terminal())
    except NoTerminal:
        return False
    return True
