"""Which checkout a session runs in, and so which config a hook installed for another one enforces there.

``guard install codex`` writes the project's absolute path into ``.codex/hooks.json`` (``guard hook --project``; Codex
gives hooks no variable for the project's folder). That file travels: a team commits it, so a clone or a
``git worktree`` gets it, and a moved or copied folder keeps it. (So does the sandbox profile in
``.codex/config.toml``, which names the first folder's files: the session is told.) Codex (0.171) starts every hook in the session's folder, the event's ``cwd``, which the agent's
commands cannot move, and:

- in a linked worktree runs the *main checkout's* ``.codex/hooks.json`` (never the worktree's), while it reads the
  worktree's own ``.codex/config.toml``: the hook is the main checkout's, so it enforces the worktree's own trusted
  config (the same folder there), and says as the session starts when the worktree's profile names other files;
- in a clone or a moved or copied folder runs that folder's copy: the hook blocks until ``guard install codex`` is
  run there, which writes the folder's own path into the hook.

Taken at its word, the path in the hook would have the first project's config judge those sessions. Gemini CLI names
the session's project in ``GEMINI_PROJECT_DIR`` and reads a worktree's own committed ``.gemini/settings.json``, whose
hook names the main checkout; Copilot CLI's repository hooks (``.github/hooks/``) are meant to be committed, and its
event's ``cwd`` stays the session's (1.0.102: an agent's ``cd`` ends with its call): the same answer holds for their
hooks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from guard.config.search import SEARCHED

__all__ = ["ROOT_MARKERS", "checkout_root", "config_in", "for_session", "in_main_checkout", "protected_by"]

#: What marks a checkout's root: Codex's default ``project_root_markers``. Codex reads ``.codex/`` folders from the
#: session's folder up to the nearest of them, never above it.
ROOT_MARKERS = (".git", ".hg", ".sl")


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def config_in(project: str) -> Path | None:
    """The guard config file the checkout ``project`` holds (the first of the names ``guard hook`` looks for), or None."""
    return next((config for config in (Path(project, name) for name in SEARCHED) if config.is_file()), None)


def protected_by(folders: Iterable[str], path: Path) -> bool:
    """Whether ``path``, by the name it was given or the one its links resolve to, lies in one of ``folders``: a
    sandbox's rules name folders as they were written, which may be either."""
    names = (str(path.absolute()), os.path.realpath(path))
    return any(_within(name, folder) for folder in folders for name in names)


def _marks_a_root(path: str) -> bool:
    """Whether ``path`` (a root marker's name) is one: anything there but an empty file or folder.

    Codex (0.171) keeps a workspace's ``.git`` read-only, and for a session started in a subfolder, which has none,
    makes an empty ``.git`` there on the host while each of its sandboxes runs: taken for a checkout's root, it made
    the subfolder another checkout, and the hook refused the session's calls now and then. Git leaves neither (a
    ``.git`` folder holds ``HEAD``, a worktree's ``.git`` file names its folder); one the agent plants only makes the
    folder part of the checkout above it, whose config then decides.
    """
    try:
        if os.path.islink(path):
            return True
        if os.path.isdir(path):
            with os.scandir(path) as entries:
                return next(entries, None) is not None
        return os.path.getsize(path) > 0
    except OSError:
        return False


def checkout_root(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` holding a root marker (a ``.git`` file in a linked worktree), or None."""
    here = os.path.realpath(folder)
    while True:
        if any(_marks_a_root(os.path.join(here, marker)) for marker in ROOT_MARKERS):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _read_line(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as file:
            return file.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _shared_git_dir(root: str) -> str | None:
    """The repository folder a checkout root shares with its other worktrees: its ``.git`` folder, or for a linked
    worktree (a ``.git`` file, ``gitdir: …``) the ``commondir`` of the folder it names; None when there is neither.

    Only what git itself made counts, since the agent writes files: a ``.git`` that is a link (``ln -s ../.git
    sub/.git``) is none, and a linked worktree's folder must be one its repository registered, below the shared
    folder's ``worktrees/`` with a ``gitdir`` naming this ``.git`` file back. A ``.git`` file the agent plants in a
    subfolder of the project, naming any folder with a ``commondir``, would otherwise make that subfolder a worktree
    whose own trusted config, not the project's, judges the session's calls.
    """
    git = os.path.join(root, ".git")
    if os.path.islink(git):
        return None
    if os.path.isdir(git):
        return os.path.realpath(git)
    line = _read_line(git)
    if line is None or not line.startswith("gitdir:"):
        return None
    private = os.path.realpath(os.path.join(root, line.removeprefix("gitdir:").strip()))
    common = _read_line(os.path.join(private, "commondir"))
    back = _read_line(os.path.join(private, "gitdir"))
    if not common or not back:
        return None  # a submodule's git folder: a repository of its own
    shared = os.path.realpath(os.path.join(private, common))
    registered = os.path.dirname(private) == os.path.join(shared, "worktrees")
    if not registered or os.path.realpath(os.path.join(private, back)) != os.path.realpath(git):
        return None
    return shared


def in_main_checkout(folder: str) -> str | None:
    """``folder`` as it is in the main checkout, when ``folder`` is in a linked worktree (None otherwise)."""
    root = checkout_root(folder)
    if root is None or not os.path.isfile(os.path.join(root, ".git")):
        return None
    shared = _shared_git_dir(root)
    if shared is None or os.path.basename(shared) != ".git":
        return None  # a bare repository's worktree: no main checkout
    return os.path.normpath(os.path.join(os.path.dirname(shared), os.path.relpath(os.path.realpath(folder), root)))


def for_session(client: str, project: str, folder: str | None) -> tuple[str, str | None]:
    """The project a hook installed for ``project`` enforces the config of in a session in ``folder``, and why it must
    block instead (None: it may decide).

    ``folder`` is the project or below it, with no checkout root in between: the project. A linked worktree of the
    project's repository: the same folder in that worktree, since Codex runs the main checkout's hooks there. Any
    other checkout (a clone, a moved or copied folder, which Codex reads its own copy of ``.codex/`` in): a block
    until ``guard install`` is run there.
    """
    if folder is None:
        return project, None
    anchored, here = os.path.realpath(project), os.path.realpath(folder)
    root = checkout_root(here)
    if _within(here, anchored) and (root is None or _within(anchored, root)):
        return project, None
    home = checkout_root(anchored) if os.path.isdir(anchored) else None
    if root is not None and home is not None and root != home:
        shared = _shared_git_dir(root)
        if shared is not None and shared == _shared_git_dir(home):
            return os.path.normpath(os.path.join(root, os.path.relpath(anchored, home))), None
    checkout = root or here
    return project, (
        f"guard's {client} hook here was installed for {project}, but this session runs in {checkout}, another "
        f"checkout (a clone, or a moved or copied folder, carries the settings guard install wrote for {project}, "
        f"whose config is that folder's): guard blocks tool calls here until you run guard install {client} in "
        f"{checkout}"
    )
