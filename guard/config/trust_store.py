"""The trusted-config store: which config the user approved for a place, and a sealed copy of every file in it.

``guard trust`` (and ``guard install``) write one record per key, in the user's
state directory (``$XDG_STATE_HOME/guard/trusted/``), outside any project and
inside the state self-protection guards. A key is what ``guard hook`` searched:
``config:<abs path>`` for an explicit ``--config``/``$GUARD_CONFIG``, else
``dir:<abs folder>`` for the folder whose ``guard.yaml``/``.guard/guard.yaml``
it looks for, so a new file that would shadow the trusted one is noticed.

A record names the config, each file it was built from (the config, its
includes, the scripts its command hooks run) with its sha256, and is sealed
(:mod:`guard.storage.secret`) over its whole text: a record that fails its seal is no
record. The bytes of each file are kept content-addressed in ``blobs/<sha256>``;
a blob is the trusted copy exactly when its digest is the one a sealed record
names, so blobs need no seal of their own and are read only when guard enforces
a trusted copy that differs from the disk. Standard library only: ``guard hook``
reads a record on every call.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from guard.core.logs import LazyLogger
from guard.core.record import FrozenRecord
from guard.core.settings import user_dir
from guard.storage.secret import seal, verify

__all__ = [
    "CONFIG",
    "INCLUDE",
    "SCRIPT",
    "TrustRecord",
    "TrustedFile",
    "blob",
    "digest",
    "forget",
    "read",
    "store_dir",
    "trust_key",
    "write",
]

log = LazyLogger("guard.storage.secret")

FORMAT = 1
_PURPOSE = "trusted-config"
#: Roles of a trusted file, as messages name them.
CONFIG, INCLUDE, SCRIPT = "config", "include", "script"


def store_dir() -> Path:
    """``$XDG_STATE_HOME/guard/trusted`` (``~/.local/state/guard/trusted``)."""
    return user_dir("state") / "trusted"


def trust_key(config: str | None, cwd: str | None = None) -> str:
    """What ``guard hook`` searched: the explicit config path, else the folder it looks in."""
    if config:
        return "config:" + os.path.abspath(os.path.join(cwd or "", os.path.expanduser(config)))
    return "dir:" + os.path.abspath(cwd or os.getcwd())


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class TrustedFile(FrozenRecord):
    """One file of a trusted config: its absolute path, its role (config, include, script) and the sha256 of its bytes."""

    __slots__ = ("path", "role", "sha256")
    path: str
    role: str
    sha256: str

    def __init__(self, path: str, role: str, sha256: str) -> None:
        self._assign(locals())


class TrustRecord(FrozenRecord):
    """What the user trusted for one key: the config file, every file it is built from, and each command hook's scripts.

    ``pin`` identifies exactly this set of files and digests (the compiled snapshot
    of the trusted copy is keyed on it); ``scripts`` maps a hook id to the
    (path, sha256) of the scripts it runs.
    """

    __slots__ = ("key", "config", "files", "scripts", "trusted_at")
    key: str
    config: str
    files: tuple[TrustedFile, ...]
    scripts: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    trusted_at: float

    def __init__(
        self,
        key: str,
        config: str,
        files: tuple[TrustedFile, ...],
        scripts: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (),
        trusted_at: float = 0.0,
    ) -> None:
        self._assign(locals())

    @property
    def pin(self) -> str:
        parts = [
            self.config,
            [[f.path, f.role, f.sha256] for f in self.files],
            [[hook, [list(s) for s in pairs]] for hook, pairs in self.scripts],
        ]
        return digest(json.dumps(parts).encode())

    def scripts_of(self, hook_id: str) -> tuple[tuple[str, str], ...]:
        return dict(self.scripts).get(hook_id, ())

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "key": self.key,
            "config": self.config,
            "files": [[f.path, f.role, f.sha256] for f in self.files],
            "scripts": {hook: [list(pair) for pair in pairs] for hook, pairs in self.scripts},
            "trusted_at": self.trusted_at,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrustRecord:
        scripts = tuple(
            (str(hook), tuple((str(p), str(d)) for p, d in pairs))
            for hook, pairs in dict(data.get("scripts") or {}).items()
        )
        files = tuple(TrustedFile(str(p), str(r), str(d)) for p, r, d in data["files"])
        return cls(str(data["key"]), str(data["config"]), files, scripts, float(data.get("trusted_at") or 0.0))


def record_path(key: str) -> Path:
    return store_dir() / f"{digest(key.encode())[:32]}.json"


def read(key: str) -> TrustRecord | None:
    """The sealed record for ``key``; None when there is none, or it fails its seal (tampered, forged, another key's)."""
    path = record_path(key)
    try:
        mac, _, body = path.read_text(encoding="utf-8").partition("\n")
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        log.warning("trusted-config record %s cannot be read; treating %s as never trusted", path, key)
        return None
    if not verify(mac, _PURPOSE, key, body):
        log.warning(
            "trusted-config record %s fails its seal (tampered or forged); treating %s as never trusted", path, key
        )
        return None
    try:
        data = json.loads(body)
        record = TrustRecord.from_dict(data) if data.get("format") == FORMAT else None
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return record if record is not None and record.key == key else None


def _write_private(target: Path, data: bytes) -> None:
    store_dir().mkdir(mode=0o700, parents=True, exist_ok=True)
    target.parent.mkdir(mode=0o700, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(tmp, target)


def write(record: TrustRecord, contents: Mapping[str, bytes]) -> None:
    """Store ``record`` and the bytes of each of its files (``contents`` by sha256). Raises TrustError without a secret."""
    for file in record.files:
        target = store_dir() / "blobs" / file.sha256
        if not target.is_file():
            data = contents[file.sha256]
            if digest(data) != file.sha256:
                raise ValueError(f"the bytes given for {file.path} do not match its digest")
            _write_private(target, data)
    body = json.dumps(record.to_dict(), sort_keys=True)
    mac = seal(_PURPOSE, record.key, body)
    _write_private(record_path(record.key), f"{mac}\n{body}".encode())


def blob(sha256: str) -> bytes | None:
    """The trusted copy with this digest, or None when it is missing or no longer matches it."""
    try:
        data = (store_dir() / "blobs" / sha256).read_bytes()
    except OSError:
        return None
    return data if digest(data) == sha256 else None


def forget(key: str) -> bool:
    """Remove the record for ``key`` (its blobs may be shared with other records and stay); True when there was one."""
    try:
        record_path(key).unlink()
    except FileNotFoundError:
        return False
    return True
