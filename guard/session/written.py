"""The record of what the agent wrote: each file it changed, its content digest, and which rules' judges saw it run.

Kept in a SQLite file in guard's state directory (``$XDG_STATE_HOME/guard/written.db``, else
``~/.local/state/guard/written.db``), which the self-protection rule keeps out of the agent's reach, every row
sealed with guard's secret (:mod:`guard.storage.secret`) like the session store and the audit log: a row whose seal
does not verify is not read. What a row that is missing or does not verify means is always the stricter reading:
a file not in the record whose status changed is found by the project walk and recorded as written by no route
guard saw; a digest with no verified "seen" row is shown to the judge again.

Rows are keyed by the file's absolute path (its folder's symlinks resolved), so a ``cd`` into a subfolder, or a new
``.git`` below the project, never hides what was written:

- ``written_roots``: each folder guard walks for changes, and since when (the start of its last walk);
- ``written_unnamed``: when a call last wrote where guard could not name the file (``""``), and for each folder when a
  walk last looked below the folders of other people's code too (:func:`guard.session.call_effects.writes_unnamed`);
- ``written_files``: each file the agent wrote, as guard last observed it — its digest (:data:`DELETED` once deleted,
  none while a write recorded when allowed has not been looked at), the digest of what was there before the agent's
  first change (:data:`NEW` for a file that did not exist, none when unknown), the route that wrote it (``Write``,
  ``shell: sed -i`` … and how the call was let through, or ``found changed`` for one no route guard saw), whether the
  client confirmed it after the call (PostToolUse) or guard recorded it when the call was allowed, and the session;
- ``written_bases``: the content before the agent's first change (at most :data:`MAX_BASE_BYTES`), for diffs;
- ``written_seen``: (rule, file, digest) for each content a judge of that rule allowed while shown it as code that may
  run (:mod:`guard.judge.deferred`).

Rows untouched for :data:`RETENTION_S` are forgotten. Standard library only: ``guard hook`` records writes on its
fast path.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from guard.core.record import Record
from guard.storage.database import open_state_file, state_file
from guard.storage.secret import seal, verify

if TYPE_CHECKING:
    from guard.core.spec import SmartSettings

__all__ = [
    "DELETED",
    "LASTING",
    "MAX_BASE_BYTES",
    "NEW",
    "RETENTION_S",
    "FileRecord",
    "WrittenStore",
    "content_digest",
    "rule_key",
    "written_db_path",
]

RETENTION_S = 7 * 86400.0
#: When a write no route names may still come (:meth:`WrittenStore.wrote_unnamed`): after every walk.
LASTING = 2**63 - 1
#: The most of a file's earlier content kept for a diff.
MAX_BASE_BYTES = 64 * 1024
#: The base digest of a file that did not exist before the agent wrote it.
NEW = "new"
#: The digest a deleted file is recorded (and seen) as.
DELETED = "deleted"
_PURPOSE = "written"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS written_roots (root TEXT PRIMARY KEY, since_ns INTEGER NOT NULL, at REAL NOT NULL, mac TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS written_files (
    path TEXT PRIMARY KEY, digest TEXT, base TEXT, route TEXT NOT NULL, confirmed INTEGER NOT NULL, observed_ns INTEGER NOT NULL,
    session_id TEXT NOT NULL, at REAL NOT NULL, mac TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS written_bases (path TEXT PRIMARY KEY, content BLOB NOT NULL, at REAL NOT NULL, mac TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS written_unnamed (key TEXT PRIMARY KEY, since_ns INTEGER NOT NULL, at REAL NOT NULL, mac TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS written_seen (rule TEXT NOT NULL, path TEXT NOT NULL, digest TEXT NOT NULL, at REAL NOT NULL, mac TEXT NOT NULL,
    PRIMARY KEY (rule, path, digest));
"""


def content_digest(data: bytes) -> str:
    """The digest a file's content is recorded, keyed and seen by (the judge's view keys a script's content the same way)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@lru_cache(maxsize=64)
def rule_key(rule: SmartSettings) -> str:
    """What "the same rule" is for "seen": its text (a rule edited is a new rule, which has seen nothing)."""
    return hashlib.blake2b(json.dumps([rule.rule, rule.prompt]).encode(), digest_size=12).hexdigest()


def written_db_path(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/guard/written.db``, else ``~/.local/state/guard/written.db``."""
    return state_file("written.db", env)


class FileRecord(Record):
    """One file the agent wrote, as guard last observed it (see the module's docstring for each field)."""

    __slots__ = ("path", "digest", "base", "route", "confirmed", "observed_ns", "session_id")

    def __init__(
        self,
        path: str,
        digest: str | None,
        base: str | None,
        route: str,
        confirmed: bool,
        observed_ns: int,
        session_id: str = "",
    ) -> None:
        self.path, self.digest, self.base, self.route, self.confirmed = path, digest, base, route, confirmed
        self.observed_ns, self.session_id = observed_ns, session_id

    def fields(self) -> tuple[str, ...]:
        """The row's values as text, in the order the seal binds them."""
        return (
            self.path,
            str(self.digest),
            str(self.base),
            self.route,
            str(int(self.confirmed)),
            str(self.observed_ns),
            self.session_id,
        )


#: Files an interpreter runs wherever it starts, in any project: what a site folder holds (a ``.pth`` file's import
#: lines run at every Python start), ``sitecustomize`` and ``usercustomize``.
_RUN_EVERYWHERE = ("*/site-packages/*", "*/dist-packages/*", "*/sitecustomize.py", "*/usercustomize.py")


def _below(root: str) -> tuple[str, str]:
    """The range of paths below ``root``: from ``root/`` up to (not including) ``root0`` (the character after ``/``),
    compared as SQLite compares text (byte by byte: exact, unlike ``LIKE``, which ignores case)."""
    prefix = root.rstrip("/") + "/"
    return prefix, prefix[:-1] + "0"


class WrittenStore:
    """One SQLite file in WAL mode: the hooks of concurrent sessions record without losing rows."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = open_state_file(path, _SCHEMA)

    def close(self) -> None:
        self._db.close()

    # -- walks --------------------------------------------------------------------

    def since(self, root: str) -> int | None:
        """When the last walk of ``root`` began, or None (never walked, expired, or its row does not verify)."""
        row = self._db.execute("SELECT since_ns, at, mac FROM written_roots WHERE root = ?", (root,)).fetchone()
        if (
            row is None
            or not verify(row[2], _PURPOSE, "root", root, str(row[0]), repr(row[1]))
            or row[1] < time.time() - RETENTION_S
        ):
            return None
        return int(row[0])

    def walked_around(self, root: str) -> list[int]:
        """When the walks that covered ``root`` began: the last of the folders above it, and each of the folders below it
        (a first walk of ``root`` starts from the earliest, so nothing changed since goes unlooked at)."""
        parts = root.rstrip("/").split("/")
        above = [since for depth in range(2, len(parts)) if (since := self.since("/".join(parts[:depth]))) is not None]
        inside = [
            since
            for folder, since, at, mac in self._db.execute(
                "SELECT root, since_ns, at, mac FROM written_roots WHERE root >= ? AND root < ?", _below(root)
            )
            if verify(mac, _PURPOSE, "root", folder, str(since), repr(at)) and at >= time.time() - RETENTION_S
        ]
        return [*([max(above)] if above else []), *inside]

    def walked(self, root: str, since_ns: int, *, first: bool = False) -> None:
        """``root``'s changes are looked at from ``since_ns`` on. ``first``: a root's first walk, which also forgets what
        no one touched for :data:`RETENTION_S` (not on every walk: those deletes scan the tables)."""
        now = time.time()
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO written_roots (root, since_ns, at, mac) VALUES (?, ?, ?, ?)",
                (root, since_ns, now, seal(_PURPOSE, "root", root, str(since_ns), repr(now))),
            )
            if first:
                for table in ("written_roots", "written_unnamed", "written_files", "written_bases", "written_seen"):
                    self._db.execute(f"DELETE FROM {table} WHERE at < ?", (now - RETENTION_S,))

    # -- writes no route named ----------------------------------------------------

    def _unnamed(self, key: str) -> int | None:
        row = self._db.execute("SELECT since_ns, at, mac FROM written_unnamed WHERE key = ?", (key,)).fetchone()
        if row is None or row[1] < time.time() - RETENTION_S:
            return None
        return int(row[0]) if verify(row[2], _PURPOSE, "unnamed", key, str(row[0]), repr(row[1])) else -1

    def _set_unnamed(self, key: str, since_ns: int) -> None:
        now = time.time()
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO written_unnamed (key, since_ns, at, mac) VALUES (?, ?, ?, ?)",
                (key, since_ns, now, seal(_PURPOSE, "unnamed", key, str(since_ns), repr(now))),
            )

    def wrote_unnamed(self, at_ns: int) -> None:
        """A call allowed (or run) at ``at_ns`` may have written a file no route named, anywhere; :data:`LASTING`: it
        left something running that may write at any time, so every walk looks until the note expires."""
        self._set_unnamed("", max(at_ns, self._unnamed("") or 0))

    def code_walk_due(self, root: str) -> bool:
        """Whether a write no route named came after the last walk of ``root`` that looked below other people's code
        (a row that does not verify: it did)."""
        wrote = self._unnamed("")
        if wrote is None:
            return False
        walked = self._unnamed(root)
        return wrote < 0 or walked is None or walked < 0 or walked <= wrote

    def code_walked(self, root: str, since_ns: int) -> None:
        """A complete walk of ``root`` that began at ``since_ns`` looked below other people's code too."""
        self._set_unnamed(root, since_ns)

    # -- files --------------------------------------------------------------------

    def files(
        self,
        *,
        below: str | None = None,
        paths: Iterable[str] | None = None,
        within: Iterable[str] = (),
        everywhere: bool = False,
        session: str = "",
    ) -> dict[str, FileRecord]:
        """The file rows that verify: those below a folder, those directly in the folders ``within``, with
        ``everywhere`` those an interpreter runs wherever it starts (:data:`_RUN_EVERYWHERE`), and those ``session``
        wrote last, wherever they are; or those of ``paths``."""
        query = "SELECT path, digest, base, route, confirmed, observed_ns, session_id, mac FROM written_files"
        if below is not None:
            rows = list(self._db.execute(query + " WHERE path >= ? AND path < ?", _below(below)))
            for folder in within:
                start, end = _below(folder)
                rows += self._db.execute(
                    query + " WHERE path >= ? AND path < ? AND instr(substr(path, ?), '/') = 0",
                    (start, end, len(start) + 1),
                )
            if everywhere:
                rows += self._db.execute(
                    query + " WHERE " + " OR ".join("path GLOB ?" for _ in _RUN_EVERYWHERE), _RUN_EVERYWHERE
                )
            if session:
                rows += self._db.execute(query + " WHERE session_id = ?", (session,))
        else:
            wanted = sorted(set(paths or ()))
            rows = [
                row
                for i in range(0, len(wanted), 500)
                for row in self._db.execute(
                    query + f" WHERE path IN ({','.join('?' * len(wanted[i : i + 500]))})", wanted[i : i + 500]
                )
            ]
        found: dict[str, FileRecord] = {}
        for path, digest, base, route, confirmed, observed, session, mac in rows:
            record = FileRecord(path, digest, base, route, bool(confirmed), observed, session)
            if verify(mac, _PURPOSE, "file", *record.fields()):
                found[path] = record
        return found

    def put(self, records: Iterable[FileRecord]) -> None:
        """Record (or update) each file's row."""
        now = time.time()
        rows = [
            (
                r.path,
                r.digest,
                r.base,
                r.route,
                int(r.confirmed),
                r.observed_ns,
                r.session_id,
                now,
                seal(_PURPOSE, "file", *r.fields()),
            )
            for r in records
        ]
        if rows:
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO written_files (path, digest, base, route, confirmed, observed_ns, session_id, at, mac) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )

    def forget(self, paths: Iterable[str]) -> None:
        """Files the agent created and deleted again: nothing of them is left to run, and the record stays small."""
        gone = [(path,) for path in paths]
        if gone:
            with self._db:
                self._db.executemany("DELETE FROM written_files WHERE path = ?", gone)
                self._db.executemany("DELETE FROM written_bases WHERE path = ?", gone)

    def base(self, path: str) -> bytes | None:
        """The file's content before the agent's first change, when guard kept it."""
        row = self._db.execute("SELECT content, mac FROM written_bases WHERE path = ?", (path,)).fetchone()
        if row is None or not verify(row[1], _PURPOSE, "base", path, bytes(row[0]).hex()):
            return None
        return bytes(row[0])

    def keep_base(self, path: str, content: bytes) -> None:
        """Keep the content before the agent's first change (the first one kept for a file stays)."""
        content = content[:MAX_BASE_BYTES]
        with self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO written_bases (path, content, at, mac) VALUES (?, ?, ?, ?)",
                (path, content, time.time(), seal(_PURPOSE, "base", path, content.hex())),
            )

    # -- what judges saw ----------------------------------------------------------

    def seen(self, rules: Iterable[str], below: str, paths: Iterable[str] = ()) -> dict[str, dict[str, set[str]]]:
        """Per rule, per file below ``below`` (and each of ``paths``), the digests a judge of that rule allowed to run."""
        found: dict[str, dict[str, set[str]]] = {}
        also = sorted(set(paths))[:500]
        extra = f" OR path IN ({','.join('?' * len(also))})" if also else ""
        for rule in set(rules):
            for path, digest, mac in self._db.execute(
                f"SELECT path, digest, mac FROM written_seen WHERE rule = ? AND (path >= ? AND path < ?{extra})",
                (rule, *_below(below), *also),
            ):
                if verify(mac, _PURPOSE, "seen", rule, path, digest):
                    found.setdefault(rule, {}).setdefault(path, set()).add(digest)
        return found

    def mark_seen(self, rule: str, files: Iterable[tuple[str, str]]) -> None:
        """A judge of ``rule`` allowed a call while shown these (path, digest) as code that may run."""
        now = time.time()
        rows = [(rule, path, digest, now, seal(_PURPOSE, "seen", rule, path, digest)) for path, digest in files]
        if rows:
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO written_seen (rule, path, digest, at, mac) VALUES (?, ?, ?, ?, ?)", rows
                )
