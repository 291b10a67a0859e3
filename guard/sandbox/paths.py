"""Which paths the client's sandbox must keep from the agent: everything guard protects from writes, its secret from reads.

The list is the self-protection rule's own (:func:`guard.protection.targets.protect_spec`),
taken here in one place, so the sandbox and the hook always protect the same files.
"""

from __future__ import annotations

from dataclasses import dataclass

from guard.config.assembly import protection_for
from guard.core.settings import LoadedConfig, user_dir
from guard.core.spec import ProtectSettings
from guard.protection.targets import PATH_FOLDER, SECRET
from guard.storage.secret import seal

__all__ = ["ProtectedPaths", "make_store", "protected_paths"]


@dataclass(frozen=True, slots=True)
class ProtectedPaths:
    """Absolute paths: ``write`` the agent may not change (files or folders), ``read`` it may not read."""

    write: tuple[str, ...]
    read: tuple[str, ...]

    def write_roots(self) -> tuple[str, ...]:
        """``write`` without the paths inside another of them: the rule on a folder covers what is in it."""
        return _roots(self.write)

    def read_roots(self) -> tuple[str, ...]:
        return _roots(self.read)


def _roots(paths: tuple[str, ...]) -> tuple[str, ...]:
    """``paths`` without those inside another one (in order).

    Both Claude Code's and Codex's bubblewrap mount over each denied path, making
    a placeholder for one that does not exist yet: inside a folder already
    mounted read-only that placeholder cannot be made, and the sandbox, hence
    every command, fails to start. So only the outermost paths are listed.
    """
    listed = set(paths)
    return tuple(p for p in paths if not any(p.startswith(q.rstrip("/") + "/") for q in listed if q != p))


def protected_paths(loaded: LoadedConfig) -> ProtectedPaths:
    """The paths guard protects for the config ``loaded`` (its files, state, secret, client settings)."""

    paths = ProtectSettings.of(protection_for(loaded)).paths
    return ProtectedPaths(
        # a PATH folder is asked about, not refused: tools install there (pip --user, pipx, uv tool)
        write=tuple(sorted({path for label, path in paths if label != PATH_FOLDER})),
        read=tuple(sorted({path for label, path in paths if label == SECRET})),
    )


def make_store() -> None:
    """Create guard's own folders and its secret now, before a sandbox is configured around them.

    A sandbox can only deny what it can name when the agent starts: a secret
    created later, by the first hook that needs it, would be readable.
    """

    for kind in ("cache", "state", "config"):
        user_dir(kind).mkdir(parents=True, exist_ok=True)
    seal("install")  # reads the secret, creating it (0600) if there is none
