"""Ed25519 keys and signatures for the org policy, through ``cryptography`` (the ``team`` extra).

The key pair is PEM (PKCS#8 private key, 0600; SubjectPublicKeyInfo public key),
so OpenSSL reads them too; a signature is the 64-byte Ed25519 signature of the
policy file's exact bytes, base64 on one line in ``<policy>.sig``. Only the
admin's machine signs; every hook verifies, and only when its verification is
not already on record (:mod:`guard.config.org_policy`), so a hook that finds the
policy unchanged never imports this module.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from pathlib import Path

from guard.core.errors import GuardError

__all__ = ["PRIVATE_NAME", "PUBLIC_NAME", "SignatureInvalid", "fingerprint", "generate", "sign", "verify_signature"]

PRIVATE_NAME, PUBLIC_NAME = "org.key", "org.pub"
_PEM_BEGIN = b"-----BEGIN PUBLIC KEY-----"


class SignatureInvalid(GuardError):
    """The signature, or the key it is checked against, is not what it must be; the message says which."""


def _require() -> None:
    from guard.core.extras import require

    require("team", "the org policy's signature", ("cryptography",))


def fingerprint(public_pem: bytes) -> str:
    """The key's id: sha256 of its DER bytes (the PEM body), first 16 hex digits. Standard library only."""
    body = public_pem.strip()
    if body.startswith(_PEM_BEGIN):
        lines = [line for line in body.splitlines() if line and not line.startswith(b"-----")]
        try:
            body = base64.b64decode(b"".join(lines), validate=True)
        except (binascii.Error, ValueError):
            pass
    return hashlib.sha256(body).hexdigest()[:16]


def generate(out: Path) -> tuple[Path, Path]:
    """Write a new key pair into ``out`` (``org.key`` 0600, ``org.pub``); an existing file is never overwritten."""
    _require()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private, public = out / PRIVATE_NAME, out / PUBLIC_NAME
    for path in (private, public):
        if path.exists():
            raise GuardError(f"{path} exists: guard policy keygen never overwrites a key (move it away first)")
    key = Ed25519PrivateKey.generate()
    out.mkdir(parents=True, exist_ok=True)
    fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    public.chmod(0o644)
    return private, public


def sign(data: bytes, private_pem: bytes) -> str:
    """The base64 signature of ``data`` under the PEM private key (the ``.sig`` file's one line)."""
    _require()
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(private_pem, password=None)
    except (ValueError, TypeError) as exc:
        raise SignatureInvalid(f"not an unencrypted PEM private key ({exc})") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise SignatureInvalid(f"not an Ed25519 key ({type(key).__name__}): make one with guard policy keygen")
    return base64.b64encode(key.sign(data)).decode()


def verify_signature(public_pem: bytes, data: bytes, signature_text: str) -> None:
    """Check ``signature_text`` (a ``.sig`` file's text) over ``data``; SignatureInvalid says what is wrong."""
    _require()
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_pem_public_key(public_pem)
    except (ValueError, TypeError) as exc:
        raise SignatureInvalid(f"the org key is not a PEM public key ({exc})") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise SignatureInvalid(f"the org key is not an Ed25519 key ({type(key).__name__})")
    try:
        signature = base64.b64decode(signature_text.strip(), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise SignatureInvalid("the signature file is not one line of base64") from exc
    try:
        key.verify(signature, data)
    except InvalidSignature as exc:
        raise SignatureInvalid(
            "the signature does not match the policy: it was altered after signing, or signed with another key"
        ) from exc
