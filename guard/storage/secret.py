"""The per-user secret, and the seals that let guard trust state an agent could write.

The decision cache, the compiled config snapshots and the ``server.url: auto``
state file all live in files the guarded agent can reach with its own Write or
Bash tools. Each record is sealed with HMAC-SHA256 under a secret kept in the
user's config directory (``$XDG_CONFIG_HOME/guard/secret``, created 0600 on
first use; ``GUARD_SECRET_FILE`` overrides the path), never in a project; a
record whose seal does not verify is treated as absent. Standard library only
(hmac, hashlib): it runs on every cache hit of ``guard hook``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
from functools import lru_cache
from pathlib import Path

from guard.core.settings import SECRET_FILE_ENV, from_env

__all__ = ["TrustError", "seal", "secret_path", "verify"]

_SECRET_BYTES = 32


class TrustError(OSError):
    """The secret can neither be read nor created: nothing can be sealed or trusted."""


def secret_path() -> Path:
    """``$GUARD_SECRET_FILE``, else ``$XDG_CONFIG_HOME/guard/secret`` (``~/.config/guard/secret``)."""
    return Path(_secret_file())


def _secret_file() -> str:
    """:func:`secret_path` as text, without building paths: every seal (a cache entry, an audit row) looks it up."""
    explicit = from_env(SECRET_FILE_ENV)
    if explicit:
        return os.path.expanduser(explicit)  # not normalized: ``link/..`` means what the system resolves, as before
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config_home, "guard", "secret")


def _read(file: Path) -> bytes | None:
    """The secret's bytes, or None when there is no such file."""
    try:
        return file.read_bytes().strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise TrustError(f"cannot read guard's secret {file}: {exc.strerror}") from exc


def _create(file: Path) -> None:
    """Write a new secret to a private temporary file and hard-link it into place.

    A process racing to create it sees either no file or a whole one, never half
    of one; the loser of the race (FileExistsError) keeps the winner's secret.
    """
    tmp = file.with_name(f".{file.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(os.urandom(_SECRET_BYTES).hex().encode() + b"\n")
        os.link(tmp, file)
    except FileExistsError:
        pass
    except OSError as exc:
        raise TrustError(f"cannot create guard's secret {file}: {exc.strerror}") from exc
    finally:
        tmp.unlink(missing_ok=True)


@lru_cache(maxsize=4)
def _secret(path: str) -> bytes:
    """The secret in ``path``, created (0600, in a 0700 directory) if there is none yet."""
    file = Path(path)
    key = _read(file)
    if key is None:
        _create(file)
        key = _read(file)
    if not key:
        raise TrustError(f"guard's secret {file} is empty or missing; delete it and guard makes a new one")
    return key


def _message(purpose: str, parts: tuple[str | bytes, ...]) -> bytes:
    """Length-prefixed parts, so no two different part lists give the same message."""
    chunks = [purpose.encode()]
    chunks += [p if isinstance(p, bytes) else p.encode() for p in parts]
    return b"".join(b"%d:%s" % (len(c), c) for c in chunks)


def seal(purpose: str, *parts: str | bytes) -> str:
    """The hex HMAC-SHA256 of ``parts`` for ``purpose`` (``cache``, ``snapshot``, ``serve``).

    Raises :class:`TrustError` when the secret is unavailable.
    """
    return hmac.new(_secret(_secret_file()), _message(purpose, parts), hashlib.sha256).hexdigest()


def verify(mac: object, purpose: str, *parts: str | bytes) -> bool:
    """True only when ``mac`` is the seal of ``parts``; False for anything else, including no secret."""
    if not isinstance(mac, str) or not mac:
        return False
    try:
        expected = seal(purpose, *parts)
    except TrustError:
        return False
    return hmac.compare_digest(mac, expected)
