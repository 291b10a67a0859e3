"""SQLite files guard writes (the decision cache, the audit log): opened fast, migrated once.

Many ``guard hook`` processes open the same file at once, each for a few
milliseconds, so opening must cost almost nothing: the schema version lives in
``PRAGMA user_version`` (one read of the file header) and migrations run only
when it is behind. Migrations are numbered functions recorded in a table, as
in simonw/llm; WAL lets readers run beside the one writer, and a busy timeout
queues writers instead of failing them. Standard library only.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["BUSY_TIMEOUT_S", "Migrations", "connect", "open_state_file", "state_file", "use_wal"]

#: How long a writer waits for another process's write to finish before giving up.
BUSY_TIMEOUT_S = 10.0

Migration = Callable[[sqlite3.Connection], None]


class Migrations:
    """An ordered list of schema steps for one database, recorded in ``table``.

    Use an instance as a decorator: ``@migration`` on ``def m001_initial(db): ...``.
    """

    def __init__(self, table: str) -> None:
        self.table = table
        self.steps: list[Migration] = []

    def __call__(self, step: Migration) -> Migration:
        self.steps.append(step)
        return step

    def apply(self, db: sqlite3.Connection) -> None:
        """Run the steps this file has not seen yet, in one write transaction."""
        use_wal(db)
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(f"CREATE TABLE IF NOT EXISTS {self.table} (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
            done = {row[0] for row in db.execute(f"SELECT name FROM {self.table}")}
            for step in self.steps:
                if step.__name__ not in done:
                    step(db)
                    db.execute(
                        f"INSERT INTO {self.table} (name, applied_at) VALUES (?, ?)", (step.__name__, time.time())
                    )
            db.execute(f"PRAGMA user_version={len(self.steps)}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise


def use_wal(db: sqlite3.Connection) -> None:
    """Put the file in WAL mode (persistent: once set, every later open keeps it).

    SQLite answers "database is locked" at once, without the busy timeout, when
    another connection holds a lock while this one changes the journal mode: two
    processes creating the same new file (a hook and ``guard view``, two hooks)
    would lose that race. So wait for the lock here, as a write would.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def connect(path: Path, migrations: Migrations, *, durable: bool = True) -> sqlite3.Connection:
    """Open (creating it and its directory if needed) and migrate the database at ``path``.

    The connection is in autocommit mode: callers open their own ``BEGIN IMMEDIATE``
    transactions. ``durable`` picks ``synchronous=NORMAL``: no fsync per commit, but
    the checkpoint when a process closes the file syncs, so a power cut may lose the
    last rows and never corrupts. ``durable=False`` (``synchronous=OFF``) skips those
    syncs too, which saves a short-lived process 2–20 ms on a busy disk; an
    application crash is still safe, an OS crash may damage the file. Right for a
    cache, whose contents can always be judged again.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA synchronous=NORMAL" if durable else "PRAGMA synchronous=OFF")
        if db.execute("PRAGMA user_version").fetchone()[0] < len(migrations.steps):
            migrations.apply(db)
    except BaseException:
        db.close()
        raise
    return db


def state_file(name: str, env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/guard/<name>``, else ``~/.local/state/guard/<name>`` (read from ``env``, the hook's environment)."""
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "guard" / name


def open_state_file(path: Path, schema: str) -> sqlite3.Connection:
    """A small state file many hooks write at once (the session store, the record of written files), in WAL mode.

    The journal mode is asked first and switched once: the switch ignores the busy timeout ("database is locked" at
    once while another hook holds the file), so it is made only for a new file, waiting (:func:`use_wal`).
    ``synchronous=NORMAL``, as the audit log: no fsync per commit (a hook records several rows a call), the
    checkpoint syncs; a power cut may lose the last rows, never corrupts the file.
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    db = sqlite3.connect(str(path), timeout=5.0, isolation_level=None)
    db.execute("PRAGMA busy_timeout = 5000")
    db.execute("PRAGMA synchronous=NORMAL")
    if str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
        use_wal(db)
    db.executescript(schema)
    return db
