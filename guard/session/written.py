"""The record of what the agent wrote: per project, each file it changed, its content digest, and which rules' judges saw it run.

Kept in a SQLite file in guard's state directory (``$XDG_STATE_HOME/guard/written.db``, else
``~/.local/state/guard/written.db``), which the self-protection rule keeps out of the agent's reach, every row
sealed with guard's secret (:mod:`guard.storage.secret`) like the session store and the audit log: a row whose seal
does not verify is not read. What a row that is missing or does not verify means is always the stricter reading:
a file not in the record whose status changed is found by the project scan and recorded as written by no route
guard saw; a digest with no verified "seen" row is shown to the judge again.

Per project (its root, :func:`guard.session.project_scan.project_root`):

- ``written_projects``: since when the project's changes are tracked (the last walk of its files);
- ``written_files``: each file the agent wrote, as guard last observed it — its digest (none once deleted), the digest
  of what was there before the agent's first change (``new`` for a file that did not exist, none when unknown), the
  route that wrote it (``Write``, ``shell: sed -i``, ``project-write lane`` …, or ``found changed`` for one no route
  guard saw), whether the client confirmed it after the call (PostToolUse) or guard recorded it when the call was
  allowed, and the session;
- ``written_bases``: the content before the agent's first change (at most :data:`MAX_BASE_BYTES`), for diffs;
- ``written_seen``: (rule, file, digest) for each content a judge of that rule allowed while shown it as code that may
  run (:mod:`guard.judge.deferred`).

A project untouched for :data:`RETENTION_S` starts afresh. Standard library only: ``guard hook`` records writes on its
fast path.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path

from guard.core.record import Record
from guard.storage.database import open_state_file, state_file
from guard.storage.secret import seal, verify

__all__ = ["DELETED", "MAX_BASE_BYTES", "NEW", "RETENTION_S", "FileRecord", "ProjectRecord", "WrittenStore", "content_digest", "rule_key",
           "written_db_path"]

RETENTION_S = 7 * 86400.0
#: The most of a file's earlier content kept for a diff.
MAX_BASE_BYTES = 64 * 1024
#: The base digest of a file that did not exist before the agent wrote it.
NEW = "new"
#: The digest a deleted file is recorded (and seen) as.
DELETED = "deleted"
_PURPOSE = "written"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS written_projects (project TEXT PRIMARY KEY, since_ns INTEGER NOT NULL, at REAL NOT NULL, mac TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS written_files (
    project TEXT NOT NULL, path TEXT NOT NULL, digest TEXT, base TEXT, route TEXT NOT NULL, confirmed INTEGER NOT NULL,
    observed_ns INTEGER NOT NULL, session_id TEXT NOT NULL, mac TEXT NOT NULL, PRIMARY KEY (project, path));
CREATE TABLE IF NOT EXISTS written_bases (project TEXT NOT NULL, path TEXT NOT NULL, content BLOB NOT NULL, mac TEXT NOT NULL,
    PRIMARY KEY (project, path));
CREATE TABLE IF NOT EXISTS written_seen (project TEXT NOT NULL, rule TEXT NOT NULL, path TEXT NOT NULL, digest TEXT NOT NULL,
    mac TEXT NOT NULL, PRIMARY KEY (project, rule, path, digest));
"""


def content_digest(data: bytes) -> str:
    """The digest a file's content is recorded, keyed and seen by (the judge's view keys a script's content the same way)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@lru_cache(maxsize=64)
def rule_key(rule: str | None, prompt: str | None) -> str:
    """What "the same rule" is for "seen": its text (a rule edited is a new rule, which has seen nothing)."""
    return hashlib.blake2b(json.dumps([rule, prompt]).encode(), digest_size=12).hexdigest()


def written_db_path(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/guard/written.db``, else ``~/.local/state/guard/written.db``."""
    return state_file("written.db", env)


class FileRecord(Record):
    """One file the agent wrote, as guard last observed it (see the module's docstring for each field)."""

    __slots__ = ("path", "digest", "base", "route", "confirmed", "observed_ns", "session_id")

    def __init__(self, path: str, digest: str | None, base: str | None, route: str, confirmed: bool, observed_ns: int, session_id: str = "") -> None:
        self.path, self.digest, self.base, self.route, self.confirmed = path, digest, base, route, confirmed
        self.observed_ns, self.session_id = observed_ns, session_id

    def fields(self) -> tuple[str, ...]:
        """The row's values as text, in the order the seal binds them."""
        return (self.path, str(self.digest), str(self.base), self.route, str(int(self.confirmed)), str(self.observed_ns), self.session_id)


class ProjectRecord(Record):
    """What the store holds of one project: since when it is tracked, its written files, and the rules' seen digests."""

    __slots__ = ("project", "since_ns", "files", "seen")

    def __init__(self, project: str, since_ns: int, files: dict[str, FileRecord], seen: dict[str, dict[str, set[str]]]) -> None:
        self.project, self.since_ns, self.files, self.seen = project, since_ns, files, seen


class WrittenStore:
    """One SQLite file in WAL mode: the hooks of concurrent sessions record without losing rows."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = open_state_file(path, _SCHEMA)

    def close(self) -> None:
        self._db.close()

    # -- reading ------------------------------------------------------------------

    def _tracked_since(self, project: str) -> int | None:
        """Since when the project is tracked, or None (not tracked, expired, or its row does not verify)."""
        row = self._db.execute("SELECT since_ns, at, mac FROM written_projects WHERE project = ?", (project,)).fetchone()
        if row is None or not verify(row[2], _PURPOSE, "project", project, str(row[0]), repr(row[1])) or row[1] < time.time() - RETENTION_S:
            return None
        return int(row[0])

    def files(self, project: str, paths: Iterable[str] | None = None) -> dict[str, FileRecord]:
        """The project's file rows that verify (only those of ``paths`` when given)."""
        query = "SELECT path, digest, base, route, confirmed, observed_ns, session_id, mac FROM written_files WHERE project = ?"
        wanted = None if paths is None else sorted(set(paths))
        rows = (row for chunk in ([wanted[i:i + 500] for i in range(0, len(wanted), 500)] if wanted is not None else [None])
                for row in self._db.execute(query + (f" AND path IN ({','.join('?' * len(chunk))})" if chunk is not None else ""),
                                            (project, *(chunk or ()))))
        found: dict[str, FileRecord] = {}
        for path, digest, base, route, confirmed, observed, session, mac in rows:
            record = FileRecord(path, digest, base, route, bool(confirmed), observed, session)
            if verify(mac, _PURPOSE, "file", project, *record.fields()):
                found[path] = record
        return found

    def load(self, project: str, rules: Iterable[str] = ()) -> ProjectRecord | None:
        """The project's record with the seen digests of ``rules``; None when it is not tracked (or its row does not verify)."""
        since = self._tracked_since(project)
        if since is None:
            return None
        seen: dict[str, dict[str, set[str]]] = {}
        for rule in set(rules):
            for path, digest, mac in self._db.execute("SELECT path, digest, mac FROM written_seen WHERE project = ? AND rule = ?", (project, rule)):
                if verify(mac, _PURPOSE, "seen", project, rule, path, digest):
                    seen.setdefault(rule, {}).setdefault(path, set()).add(digest)
        return ProjectRecord(project, since, self.files(project), seen)

    def base(self, project: str, path: str) -> bytes | None:
        """The file's content before the agent's first change, when guard kept it."""
        row = self._db.execute("SELECT content, mac FROM written_bases WHERE project = ? AND path = ?", (project, path)).fetchone()
        if row is None or not verify(row[1], _PURPOSE, "base", project, path, bytes(row[0]).hex()):
            return None
        return bytes(row[0])

    # -- writing ------------------------------------------------------------------

    def tracked(self, project: str) -> bool:
        return self._tracked_since(project) is not None

    def track(self, project: str, since_ns: int) -> None:
        """Track the project's changes from ``since_ns`` on; a project not tracked (or expired, or whose row does not
        verify) starts afresh, forgetting what its rows held."""
        now = time.time()
        mac = seal(_PURPOSE, "project", project, str(since_ns), repr(now))
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            row = self._db.execute("SELECT since_ns, at, mac FROM written_projects WHERE project = ?", (project,)).fetchone()
            if row is None or row[1] < now - RETENTION_S or not verify(row[2], _PURPOSE, "project", project, str(row[0]), repr(row[1])):
                for table in ("written_files", "written_bases", "written_seen"):
                    self._db.execute(f"DELETE FROM {table} WHERE project = ?", (project,))
            self._db.execute("INSERT OR REPLACE INTO written_projects (project, since_ns, at, mac) VALUES (?, ?, ?, ?)", (project, since_ns, now, mac))
            self._db.execute("DELETE FROM written_projects WHERE at < ?", (now - RETENTION_S,))

    def put(self, project: str, records: Iterable[FileRecord]) -> None:
        """Record (or update) each file's row."""
        rows = [(project, r.path, r.digest, r.base, r.route, int(r.confirmed), r.observed_ns, r.session_id, seal(_PURPOSE, "file", project, *r.fields()))
                for r in records]
        if not rows:
            return
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR REPLACE INTO written_files (project, path, digest, base, route, confirmed, observed_ns, session_id, mac) "
                                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def keep_base(self, project: str, path: str, content: bytes) -> None:
        """Keep the content before the agent's first change (the first one kept for a file stays)."""
        content = content[:MAX_BASE_BYTES]
        mac = seal(_PURPOSE, "base", project, path, content.hex())
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO written_bases (project, path, content, mac) VALUES (?, ?, ?, ?)", (project, path, content, mac))

    def mark_seen(self, project: str, rule: str, files: Iterable[tuple[str, str]]) -> None:
        """A judge of ``rule`` allowed a call while shown these (path, digest) as code that may run."""
        rows = [(project, rule, path, digest, seal(_PURPOSE, "seen", project, rule, path, digest)) for path, digest in files]
        if rows:
            with self._db:
                self._db.executemany("INSERT OR IGNORE INTO written_seen (project, rule, path, digest, mac) VALUES (?, ?, ?, ?, ?)", rows)
