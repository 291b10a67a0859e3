"""The gate's side of the record of what the agent wrote: record each write, and show a rule what changed before code runs.

Three moments (the record itself is :mod:`guard.session.written`):

- **a call is allowed** (``PreToolUse``): each file it names as written (:func:`guard.session.call_effects.written_paths`)
  is recorded inside its project with the route that writes it (the tool, the shell program, whether a lane let it
  through with no judge), and the file's content before the agent's first change is kept for diffs;
- **the client says it ran** (``PostToolUse``, and ``PostToolUseFailure``: a failed call may have written part): each
  of those files is digested as it now is, confirmed. A client that sends no PostToolUse (Copilot CLI) leaves the
  row as recorded when the call was allowed, and the next look at the file digests it;
- **a call may run project code it does not name** (:func:`guard.session.call_effects.runs_code`): the project is walked
  for files changed since the last look (what a program wrote without naming it, or anything else changed behind
  guard's back: the walk below), every recorded file is checked against its digest, and the state
  goes on the payload under :data:`~guard.core.session.WRITTEN_FIELD` for the judge's view
  (:mod:`guard.judge.deferred`): each file whose content differs from before the agent's first change, its route,
  the earlier content where kept, and per rule the digests its judges already saw run. It also carries the call's
  code in one spelling (:func:`guard.session.call_effects.run_identity`) with its files' digests, for an answer from an
  earlier judgement of the same code.

After the decision, each smart hook that allowed while shown such files (``details.deferred.seen``) has them recorded
as seen by its rule. Nothing here changes a decision: a store that cannot be read or written is logged, and the rule
is then shown no record (every change it would have shown stays unseen, so no earlier judgement is reused).

**The walk** (:func:`changed_since`): a program the agent runs may write files it never names (a generator script,
``tar x``, ``git checkout``, ``pip install -e``); a judge that later allows code importing them would never have seen
them. So before a call that may run project code, guard walks the project and takes every file whose inode change time
(``st_ctime``, which a program cannot set back the way it can set ``st_mtime`` with ``touch -d``) is after the last
walk. Bounded: folders that hold other people's code or tools' caches are not walked (``.git``, ``node_modules``, a
virtualenv (a folder holding ``pyvenv.cfg``), ``.tox``, ``.nox``, ``.mypy_cache`` …, guard's own ``.guard``); a
compiled ``.pyc`` in ``__pycache__`` counts only when Python would run it without checking its source (an unchecked
hash-based file: a stale timestamp or hash is simply recompiled); the walk stops after :data:`MAX_ENTRIES` entries or
:data:`MAX_SECONDS`, and says so (``complete`` False), so a caller never takes "nothing found" from a walk that was cut.
Standard library only.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from guard.core.kinds import judged
from guard.core.logs import LazyLogger
from guard.core.record import Record
from guard.core.session import WRITTEN_FIELD
from guard.core.spec import SmartSettings

if TYPE_CHECKING:
    from guard.core.decision import Decision
    from guard.core.spec import HookSpec
    from guard.session.written import FileRecord, WrittenStore

__all__ = [
    "MAX_BASES",
    "MAX_CHANGED",
    "MAX_ENTRIES",
    "MAX_SECONDS",
    "TRACKED_FROM_NOW",
    "Provenance",
    "Scan",
    "changed_since",
    "judged_by_rules",
    "project_root",
]

log = LazyLogger("guard.session")

#: The most earlier contents one payload carries for diffs (each at most MAX_BASE_BYTES).
MAX_BASES = 16
#: Files larger than this are digested by size and change time, not read.
_READ_LIMIT = 4 << 20
#: A walk looks this far before the last one began: a file's change time comes from the kernel's coarse clock, which
#: may read a few milliseconds behind the moment the last walk started.
_MARGIN_NS = 50_000_000
#: The walk's note for a project guard sees for the first time: nothing before this call is the agent's.
TRACKED_FROM_NOW = "the project's changes are tracked from now on"
_RECORDED = frozenset({"pre_tool_use"})
_CONFIRMED = frozenset({"post_tool_use", "post_tool_use_failure"})
#: Shell programs that may put a whole folder in place (their destination a folder of files).
_PUTS_IN_PLACE = frozenset({"cp", "mv", "ln", "install"})


def judged_by_rules(specs: Iterable[HookSpec]) -> list[HookSpec]:
    """The hooks a record of written files matters to: smart hooks on tool calls (their judges may be shown it)."""
    return [s for s in specs if isinstance(s.options, SmartSettings) and s.event == "pre_tool_use"]


def _default_store(env: Mapping[str, str]) -> WrittenStore:
    from guard.session.written import WrittenStore, written_db_path

    return WrittenStore(written_db_path(env))


def _digest(path: str) -> tuple[str, bytes | None]:
    """(digest, content when it was read) of the file at ``path`` now; DELETED when there is none."""
    from guard.session.written import DELETED, content_digest

    try:
        info = os.lstat(path)
    except OSError:
        return DELETED, None
    if stat.S_ISLNK(info.st_mode):
        try:
            return content_digest(b"symlink:" + os.readlink(path).encode()), None
        except OSError:
            return DELETED, None
    if not stat.S_ISREG(info.st_mode):
        return DELETED, None  # a folder: its files are recorded one by one
    if info.st_size > _READ_LIMIT:
        return content_digest(
            f"large:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}".encode()
        ), None
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return DELETED, None
    return content_digest(data), data


class Provenance:
    """Records writes and attaches what changed, for one gate (its store opened on first use)."""

    def __init__(
        self,
        env: Mapping[str, str],
        skip: Callable[[], frozenset[str]] = frozenset,
        open_store: Callable[[Mapping[str, str]], WrittenStore] = _default_store,
    ) -> None:
        self.env = env
        #: guard's own files that may sit in a project (a cache or audit file named in the config): never a change.
        self._skip = skip
        self._open_store = open_store
        self._store: WrittenStore | None = None

    def store(self) -> WrittenStore:
        if self._store is None:
            self._store = self._open_store(self.env)
        return self._store

    # -- before the decision ----------------------------------------------------------

    def attach(self, payload: dict[str, Any], specs: Iterable[HookSpec]) -> str | None:
        """Put what changed on ``payload`` when the call may run project code and a rule may be shown it; a warning on failure."""
        payload.pop(WRITTEN_FIELD, None)
        rules = judged_by_rules(specs)
        tool_name, tool_input, cwd = payload.get("tool_name"), payload.get("tool_input"), payload.get("cwd")
        if (
            not rules
            or not isinstance(tool_name, str)
            or not isinstance(tool_input, dict)
            or not isinstance(cwd, str)
            or not os.path.isabs(cwd)
            or not _walkable(os.path.realpath(cwd), _home())
        ):
            return None  # run from the root or the home folder: no project is walked, so there is nothing to show
        from guard.session.call_effects import runs_code  # here: a call run outside any project never loads it

        if not runs_code(tool_name, tool_input, cwd, self.env):
            return None
        try:
            state = self._state(tool_name, tool_input, cwd, rules, str(payload.get("session_id") or ""))
        except Exception as exc:  # the record is optional: the rule is judged without it (and nothing is reused)
            log.warning("record of written files unavailable", exc_info=True)
            payload[WRITTEN_FIELD] = {"unavailable": f"{type(exc).__name__}: {exc}"}
            return f"record of written files unavailable ({type(exc).__name__}: {exc}): files the agent changed are not shown to the judge"
        if state is not None:
            payload[WRITTEN_FIELD] = state
        return None

    def _root(self, folder: str) -> str | None:
        """The folder guard walks for changes to code run from ``folder``: its project (:func:`project_root`); None
        for the root, the home folder or a folder above it (never walked, and a write there is not recorded)."""
        folder = os.path.realpath(folder)
        home = _home()
        root = project_root(folder) if _walkable(folder, home) else None
        return root if root is not None and _walkable(root, home) else None

    def _baseline(self, root: str, now_ns: int) -> int | None:
        """When changes below ``root`` are looked at from. A root never walked starts where the walks that covered it
        left off: the last walk of a folder above it (a new repository below the project, a ``cd`` into a subfolder), or
        the earliest walk of a folder inside it; with neither it starts now (what is there is the user's): None."""
        store = self.store()
        since = store.since(root)
        if since is None:
            covering = [*store.walked_around(root)]
            since = min(covering) if covering else None
            store.walked(root, since if since is not None else now_ns, first=True)
        return since

    def _state(
        self, tool_name: str, tool_input: dict[str, Any], cwd: str, rules: list[HookSpec], session: str
    ) -> dict[str, Any] | None:
        from guard.session.call_effects import run_identity
        from guard.session.written import DELETED, NEW, rule_key

        root = self._root(cwd)
        if root is None:
            return None
        store = self.store()
        keys = sorted({rule_key(SmartSettings.of(s)) for s in rules})
        started = time.time_ns()
        since = self._baseline(root, started)
        found: list[str] = []
        scan_note = TRACKED_FROM_NOW
        code = store.code_walk_due(root)  # a write no route named may have landed below other people's code
        complete = True
        if since is not None:
            scan = changed_since(root, since - _MARGIN_NS, skip=self._skip(), code=code)
            found, scan_note, complete = scan.changed, "complete" if scan.complete else str(scan.why), scan.complete
            if scan.complete:
                store.walked(root, started)
        if code and complete:
            store.code_walked(root, started)
        files = self._observe(
            store.files(below=root, within=_above(root), everywhere=True, session=session), found, started
        )
        changed = [
            f
            for f in files.values()
            if f.digest is not None and f.digest != f.base and not (f.digest == DELETED and f.base == NEW)
        ]
        bases: dict[str, str] = {}
        for file in changed:
            if len(bases) < MAX_BASES and file.base not in (None, NEW):
                content = store.base(file.path)
                if content is not None:
                    bases[file.path] = content.decode(errors="replace")
        seen = store.seen(keys, root, [path for path in files if not path.startswith(root.rstrip("/") + "/")])
        state: dict[str, Any] = {
            "project": root,
            "scan": scan_note,
            "files": [
                {"path": f.path, "digest": f.digest, "base": f.base, "route": f.route, "confirmed": f.confirmed}
                for f in changed
            ],
            "bases": bases,
            "seen": {key: {path: sorted(digests) for path, digests in seen.get(key, {}).items()} for key in keys},
        }
        identity = run_identity(tool_name, tool_input, cwd, self.env)
        if identity is not None:
            state["identity"] = {"run": identity[0], "code": {path: _digest(path)[0] for path in identity[1]}}
        return state

    def _observe(self, files: dict[str, FileRecord], found: list[str], now_ns: int) -> dict[str, FileRecord]:
        """Digest what the walk found and every recorded file that changed since guard last looked; record what differs,
        and forget a file the agent created that is gone again. Returns the files as they now are."""
        from guard.session.written import DELETED, NEW, FileRecord

        updates: list[FileRecord] = []
        gone: list[str] = []
        for path in {*found, *files}:
            known = files.get(path)
            if known is not None and path not in found:
                try:
                    info = os.lstat(path)
                except OSError:
                    info = None
                if known.digest == DELETED and info is None:
                    continue  # still gone
                if info is not None and info.st_ctime_ns <= known.observed_ns and known.digest is not None:
                    continue  # unchanged since guard last digested it
            digest = _digest(path)[0]
            if known is not None and known.digest == digest:
                continue
            if digest == DELETED and (known is None or known.base == NEW):
                gone += [path] if known is not None else []
                continue
            # a recorded write seen landing keeps its route; any other change is one no route guard saw
            pending = known is not None and known.digest is None
            route = known.route if pending and known is not None else "found changed (no call guard saw named it)"
            base = known.base if known is not None else None
            confirmed = (
                known.confirmed if pending and known is not None else True
            )  # a PostToolUse confirms a recorded write, not this look
            updates.append(
                FileRecord(path, digest, base, route, confirmed, now_ns, known.session_id if known is not None else "")
            )
        if updates:
            self.store().put(updates)
        if gone:
            self.store().forget(gone)
        return {**{p: f for p, f in files.items() if p not in gone}, **{u.path: u for u in updates}}

    # -- after the decision -----------------------------------------------------------

    def record(self, payload: dict[str, Any], event: str, decision: Decision, specs: Iterable[HookSpec]) -> None:
        """Record the call's writes and what its rules' judges saw; never changes the decision."""
        state = payload.pop(WRITTEN_FIELD, None)
        if event not in _RECORDED and event not in _CONFIRMED:
            return
        tool_name, tool_input, cwd = payload.get("tool_name"), payload.get("tool_input"), payload.get("cwd")
        if (
            not isinstance(tool_name, str)
            or not isinstance(tool_input, dict)
            or not isinstance(cwd, str)
            or not os.path.isabs(cwd)
        ):
            return
        try:
            if event in _RECORDED and decision.decision != "deny":
                if isinstance(state, dict) and "project" in state:
                    self._seen(decision, specs)
                self._unnamed(tool_name, decision.updated_input or tool_input, cwd)
                self._writes(tool_name, decision.updated_input or tool_input, cwd, payload, decision)
            elif event in _CONFIRMED:
                self._unnamed(tool_name, tool_input, cwd)  # again once it ran: a walk meanwhile came before its writes
                self._writes(tool_name, tool_input, cwd, payload, None)
        except Exception:  # recording must never change a decision
            log.warning("record of written files: write failed", exc_info=True)

    def _unnamed(self, tool_name: str, tool_input: dict[str, Any], cwd: str) -> None:
        """Note a call that may write a file no route names: the next walks also look below other people's code."""
        from guard.session.call_effects import outlives, writes_unnamed
        from guard.session.written import LASTING

        if writes_unnamed(tool_name, tool_input, cwd, self.env):  # a job it leaves running may write after any walk
            self.store().wrote_unnamed(LASTING if outlives(tool_name, tool_input) else time.time_ns())

    def _seen(self, decision: Decision, specs: Iterable[HookSpec]) -> None:
        from guard.session.written import rule_key

        by_id = {s.id: s for s in specs}
        for result in decision.hooks:
            spec = by_id.get(result.id)
            shown = (result.details.get("deferred") or {}).get("seen")
            if spec is not None and result.decision == "allow" and shown:
                self.store().mark_seen(rule_key(SmartSettings.of(spec)), [(str(p), str(d)) for p, d in shown])

    def _writes(
        self, tool_name: str, tool_input: dict[str, Any], cwd: str, payload: dict[str, Any], decision: Decision | None
    ) -> None:
        """Record the files the call names as written: when allowed (``decision``), with their earlier content; once it ran, as they are.

        Only files in a folder guard walks (not ``/`` nor the home folder), and those directly in the home folder (a
        project below it may run a ``~/conftest.py``), which is never walked; the first write below a folder starts its
        walks, so what a program then writes there without naming it is found too.
        """
        from guard.session.call_effects import written_paths

        paths = written_paths(tool_name, tool_input, cwd)
        placed: set[str] = set()  # files below a folder the call put in place: new there, as far as any judge knows
        if (
            decision is None
        ):  # the call ran: a folder it put in place (``mv stage tests``, ``cp -r``) holds files of its own
            inside = [(found, how) for path, how in paths for found in self._inside(path, how, os.path.realpath(cwd))]
            paths, placed = [*paths, *inside], {found for found, _ in inside}
        roots = {path: self._root(os.path.dirname(path)) for path, _ in paths}
        home = _home()  # a file directly in it is recorded (not walked): a project below may run it
        named = [
            (path, how)
            for path, how in paths
            if roots[path] is not None or os.path.realpath(os.path.dirname(path)) == home
        ]
        if not named:
            return
        # here, past the returns above: a call that writes no file never loads these
        from guard.protection.credentials import looks_like_credential
        from guard.session.written import DELETED, NEW, FileRecord, content_digest

        store = self.store()
        now = time.time_ns()
        if decision is not None:
            for root in {roots[path] for path, _ in named} - {None}:
                self._baseline(str(root), now)
        known = store.files(paths=[path for path, _ in named])
        session = str(payload.get("session_id") or "")
        updates = []
        gone: list[str] = []
        for path, how in named:
            before = known.get(path)
            if decision is None:  # the call ran: what it wrote is on the disk
                digest = _digest(path)[0]
                if digest == DELETED and (before is None or before.base == NEW):
                    gone.append(path)  # created and deleted again (or never created): nothing left to run
                    continue
                route = before.route if before is not None else how
                base = before.base if before is not None else NEW if path in placed else None
                updates.append(FileRecord(path, digest, base, route, True, now, session))
                continue
            base = before.base if before is not None else None
            if before is None:
                digest, content = _digest(path)
                base = NEW if digest == DELETED else digest
                if content is not None and not looks_like_credential(os.path.basename(path)):
                    store.keep_base(path, content)
            written = tool_input.get("content") if how in ("Write", "write_file", "create") else None
            expected = content_digest(written.encode()) if isinstance(written, str) else None
            updates.append(FileRecord(path, expected, base, f"{how}{_how_decided(decision)}", False, now, session))
        store.put(updates)
        store.forget(gone)

    def _inside(self, path: str, how: str, cwd: str) -> list[str]:
        """The files below a folder a call that ran named as written: a folder moved into place keeps its files' change
        times, so a walk, which looks for change times after its last one, would never find them. The call's words are
        read after it ran, so ``mv stage tests`` names ``tests/stage`` once ``tests`` exists: a missing path's folder is
        the one it put in place (itself too, so its row is confirmed), unless it holds the ``cwd`` (a copy that failed)."""
        if how.split()[-1] not in _PUTS_IN_PLACE:
            return []
        folder = path if os.path.isdir(path) else os.path.dirname(path) if not os.path.lexists(path) else None
        if (
            folder is None
            or not os.path.isdir(folder)
            or (cwd + "/").startswith(os.path.realpath(folder).rstrip("/") + "/")
        ):
            return []
        scan = changed_since(folder, -1, skip=self._skip())
        if not scan.complete:
            log.warning("record of written files: %s holds more than guard records of one call (%s)", folder, scan.why)
        return [*([folder] if folder != path else []), *scan.changed]


def _home() -> str:
    """The home folder, its symlinks resolved."""
    return os.path.realpath(os.path.expanduser("~"))


def _walkable(folder: str, home: str) -> bool:
    """Whether guard walks ``folder`` (its symlinks resolved) for changes: never the root, the ``home`` folder or above it."""
    return folder not in ("/", home) and not home.startswith(folder.rstrip("/") + "/")


def _above(root: str) -> list[str]:
    """The folders above a project whose files its code may run unnamed (a ``conftest.py`` beside a ``pytest.ini``, a
    ``setup.cfg``, a ``package.json`` workspace): up to the home folder (included: guard records the files written
    directly in it) or ``/``."""
    home = _home()
    folders: list[str] = []
    folder = os.path.dirname(root)
    while folder != "/" and not home.startswith(folder.rstrip("/") + "/"):
        folders.append(folder)
        if folder == home:
            break
        folder = os.path.dirname(folder)
    return folders


def _how_decided(decision: Decision) -> str:
    """How the call that writes was let through: in a lane with no judge, judged by a model, or by its cache."""
    smart = [h for h in decision.hooks if judged(h.type) and h.decision is not None]
    if not smart:
        return " (no rule judged it)"
    if all(h.details.get("decided_by") for h in smart):
        return f" (decided in the {smart[0].details['decided_by'].replace('_', ' ')}, no judge)"
    return " (judged)"


# -- the walk ----------------------------------------------------------------------------------------------------------

MAX_ENTRIES = 60_000
MAX_SECONDS = 1.0
#: More changed files than this in one walk: the rest are not digested (the walk is reported cut).
MAX_CHANGED = 500
#: Folders of other people's code (a virtualenv too: any folder holding ``pyvenv.cfg``), walked only after a write no
#: route named (:func:`guard.session.call_effects.writes_unnamed`); of ``.git`` then only its hooks.
_OTHERS_CODE = frozenset({".git", "node_modules", ".tox", ".nox", ".venv", "site-packages"})
#: Folders never walked: other version control systems' and tools' caches.
_SKIPPED = frozenset({".hg", ".svn", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".guard", ".cache"})
#: Flags of a hash-based .pyc that Python runs without looking at its source (PEP 552: hash-based, check_source off).
_UNCHECKED = 0b01


class Scan(Record):
    """The files found changed (absolute paths), whether the walk covered the whole project, and why not."""

    __slots__ = ("changed", "complete", "why")

    def __init__(self, changed: list[str], complete: bool = True, why: str | None = None) -> None:
        self.changed, self.complete, self.why = changed, complete, why


def project_root(cwd: str) -> str:
    """The project a call's ``cwd`` belongs to: the nearest folder above it holding ``.git``, else ``cwd`` itself
    (never the root or the home folder, nor a folder above the home)."""
    cwd = os.path.realpath(cwd)
    home = _home()
    folder = cwd
    while True:
        if not _walkable(folder, home):
            return cwd
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return cwd
        folder = parent


def _runs_unchecked(path: str) -> bool:
    """Whether a ``__pycache__`` file is a .pyc Python would run without checking its source."""
    if not path.endswith(".pyc"):
        return False
    try:
        with open(path, "rb") as fh:
            header = fh.read(8)
    except OSError:
        return True
    return len(header) < 8 or int.from_bytes(header[4:8], "little") == _UNCHECKED


def changed_since(
    root: str, since_ns: int, *, skip: frozenset[str] = frozenset(), links: bool = True, code: bool = False
) -> Scan:
    """Every file (or symlink) below ``root`` whose status changed after ``since_ns`` (``time.time_ns()``), but ``skip``.

    A link to a folder made since (``ln -s .cache/pkg pkg``) also brings every file below it, by the link's path: it
    makes them importable, and they may sit where the walk does not look. ``links`` False: not again inside one.
    ``code``: below the folders of other people's code too (a virtualenv, ``node_modules``, ``.git/hooks``).
    """
    started = time.monotonic()
    changed: list[str] = []
    folders = [root]
    entries = 0
    while folders:
        folder = folders.pop()
        try:
            listing = os.scandir(folder)
        except OSError:
            continue
        with listing:
            for entry in listing:
                entries += 1
                if entries > MAX_ENTRIES or time.monotonic() - started > MAX_SECONDS:
                    return Scan(changed, False, f"the project is larger than guard walks ({entries:,} entries seen)")
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name in _SKIPPED:
                            continue
                        if not code and (
                            entry.name in _OTHERS_CODE or os.path.exists(os.path.join(entry.path, "pyvenv.cfg"))
                        ):
                            continue
                        folders.append(os.path.join(entry.path, "hooks") if entry.name == ".git" else entry.path)
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if info.st_ctime_ns <= since_ns or entry.path in skip:
                    continue
                if os.path.basename(folder) == "__pycache__" and not _runs_unchecked(entry.path):
                    continue
                changed.append(entry.path)
                if links and entry.is_symlink() and entry.is_dir():
                    inside = changed_since(entry.path, -1, skip=skip, links=False, code=code)
                    changed += inside.changed
                    if not inside.complete:
                        return Scan(changed[:MAX_CHANGED], False, inside.why)
                if len(changed) > MAX_CHANGED:
                    return Scan(changed[:MAX_CHANGED], False, f"more than {MAX_CHANGED} files changed")
    return Scan(changed)
