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
from functools import lru_cache
from pathlib import Path

__all__ = ["SECRET_ENV", "TrustError", "seal", "secret_path", "verify"]

SECRET_ENV = "GUARD_SECRET_FILE"
_SECRET_BYTES = 32


class TrustError(OSError):
    """The secret can neither be read nor created: nothing can be sealed or trusted."""


def secret_path() -> Path:
    """``$GUARD_SECRET_FILE``, else ``$XDG_CONFIG_HOME/guard/secret`` (``~/.config/guard/secret``)."""
    explicit = os.environ.get(SECRET_ENV)
    if explicit:
        return Path(explicit).expanduser()
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "guard" / "secret"


@lru_cache(maxsize=4)
def _secret(path: str) -> bytes:
    """The secret in ``path``, created (0600, in a 0700 directory) if there is none yet."""
    file = Path(path)
    try:
        key = file.read_bytes().strip()
    except FileNotFoundError:
        key = b""
    except OSError as exc:
        raise TrustError(f"cannot read guard's secret {file}: {exc.strerror}") from exc
    if key:
        return key
    try:
        file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another guard process created it first (or left it empty): use theirs
        key = file.read_bytes().strip()
        if not key:
            raise TrustError(f"guard's secret {file} is empty; delete it and guard makes a new one") from None
        return key
    except OSError as exc:
        raise TrustError(f"cannot create guard's secret {file}: {exc.strerror}") from exc
    key = os.urandom(_SECRET_BYTES).hex().encode()
    with os.fdopen(fd, "wb") as out:
        out.write(key + b"\n")
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
    return hmac.new(_secret(str(secret_path())), _message(purpose, parts), hashlib.sha256).hexdigest()


def verify(mac: object, purpose: str, *parts: str | bytes) -> bool:
    """True only when ``mac`` is the seal of ``parts``; False for anything else, including no secret."""
    if not isinstance(mac, str) or not mac:
        return False
    try:
        expected = seal(purpose, *parts)
    except TrustError:
        return False
    return hmac.compare_digest(mac, expected)
