"""Whether what a long-lived process enforces is still what a fresh ``guard hook`` would.

``guard serve`` loads the trusted config once. A fresh ``guard hook`` reads it on every
call, so a ``guard trust`` of an edited config, or an edit that ``guard hook`` would warn
about, takes effect at its next call. A service (and the curl client asking it) must not
keep answering with what it loaded: :class:`Watch` notes the files that decide what is
enforced — the trust record, every trusted file, the names a config search would
find first, and the org policy's files — and says when one of them changed. A stat per file: cheap enough for every request.

It also says which project that is. A ``guard hook`` anchored to a project (``--project``, from Claude Code's
shared launcher) enforces that project's config, so a service must not answer for another one: Claude Code gives a
git worktree the main checkout's ``.claude/settings.local.json``, so a worktree's hooks ask the main checkout's service.
"""

from __future__ import annotations

import os

from guard.config import trust_store
from guard.config.search import SEARCHED
from guard.core.settings import CONFIG_ENV, SYSTEM_DIR, from_env, locate

__all__ = ["Watch"]

_Stat = tuple[int, int, int, int] | None


def _stat(path: str) -> _Stat:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns


def _org_files() -> list[str]:
    """The org key, policy and signature in force, and the system key whose arrival would put one in force."""
    location = locate()
    return [str(SYSTEM_DIR / "org.pub"), *(location.paths() if location else ())]


class Watch:
    """The files that decide what ``guard hook`` would enforce for ``config`` (as ``load_trusted`` finds it), as they are now."""

    def __init__(self, config: str | None = None) -> None:
        explicit = config or from_env(CONFIG_ENV) or None
        key = trust_store.trust_key(explicit)
        #: the folder whose config this is, as ``guard hook --project`` names it; None for a named config (found wherever
        #: the hook starts)
        self.folder = None if explicit else os.path.realpath(key.removeprefix("dir:"))
        paths = [str(trust_store.record_path(key))]
        record = trust_store.read(key)
        if record is not None:
            paths += [record.config, *(f.path for f in record.files)]
        if explicit is None:
            paths += [os.path.abspath(name) for name in SEARCHED]  # a new file here would be loaded instead
        paths += _org_files()
        self.files = {path: _stat(path) for path in dict.fromkeys(paths)}

    def enforced_in(self, project: str) -> bool:
        """Whether ``guard hook --project PROJECT`` would enforce this config (it searches that folder for its own)."""
        return self.folder is None or os.path.realpath(project) == self.folder

    def changed(self) -> str | None:
        """The first watched file that is not as it was (changed, made, removed), or None."""
        return next((path for path, seen in self.files.items() if _stat(path) != seen), None)
