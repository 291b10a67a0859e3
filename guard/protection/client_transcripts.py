"""A client's transcript at the client's own location: the only transcript file guard reads or protects.

A payload names its transcript (``transcript_path``); guard believes that path only when it lies where the client
itself writes transcripts (Claude Code: ``$CLAUDE_CONFIG_DIR/projects/<folder>/<session>.jsonl``; Codex:
``$CODEX_HOME/sessions/…/rollout-*.jsonl``) and is a regular file of this user, so an agent cannot point a rule at
words it wrote itself (:mod:`guard.session.transcript` reads it), and self-protection write-protects the file it
names (:func:`guard.protection.targets.event_paths`). Standard library only: self-protection runs on the
``guard hook`` fast path.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping

from guard.core.record import Record

__all__ = ["Transcript", "client_transcript"]


class Transcript(Record):
    """A transcript at its client's own location: the file and which client's format it is in."""

    __slots__ = ("path", "client")

    def __init__(self, path: str, client: str) -> None:
        self.path, self.client = path, client


def _roots(env: Mapping[str, str]) -> dict[str, str]:
    home = os.path.expanduser("~")
    return {
        "claude": os.path.join(env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude"), "projects"),
        "codex": os.path.join(env.get("CODEX_HOME") or os.path.join(home, ".codex"), "sessions"),
    }


def client_transcript(path: object, env: Mapping[str, str] | None = None) -> Transcript | None:
    """``path`` as a transcript guard may read: at a client's own location, a regular file of this user; else None."""
    if not isinstance(path, str) or not path or "\0" in path or not os.path.isabs(path) or not path.endswith(".jsonl"):
        return None
    env = os.environ if env is None else env
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        return None
    real = os.path.realpath(path)
    for client, root in _roots(env).items():
        root = os.path.realpath(root)
        if not real.startswith(root + os.sep):
            continue
        parts = os.path.relpath(real, root).split(os.sep)
        if (
            client == "claude" and len(parts) == 2
        ):  # projects/<folder>/<session>.jsonl; subagents' transcripts sit deeper
            return Transcript(real, client)
        if client == "codex" and parts[-1].startswith("rollout-"):
            return Transcript(real, client)
    return None
