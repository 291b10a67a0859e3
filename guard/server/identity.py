"""Who may call ``guard serve``, and how ``guard hook`` knows an answer came from it.

One key per service: the token the user set (``--token``, ``GUARD_SERVE_TOKEN``,
``server.token``), else one derived from the per-user secret (:mod:`guard.storage.secret`),
which the agent cannot read (self-protection read-protects it; a sandbox keeps
it out of reach). From the key:

- the service accepts ``Authorization: Bearer <key>`` (what a person or a Claude
  Code http hook sends) or ``Bearer <credential>`` (what ``guard hook`` sends) on
  every route, loopback included;
- ``guard hook`` sends a fresh nonce with each event, and the service signs its
  answer: ``X-Guard-Proof`` is an HMAC, under a proof key derived from the key,
  of the nonce and the body. A process that took the service's port (or that a
  state file points at) learns the credential from the request but cannot derive
  the proof key from it, so its answer fails the check and the call is judged
  in-process.
- a token the user set may be in the agent's environment (it is, for a Claude Code
  http hook), and whoever holds it can sign answers. So a service on this machine
  also signs with a key bound to the per-user secret (``X-Guard-Local-Proof``, :func:`local_key`),
  and ``guard hook`` believes an answer from a loopback URL only with that proof: a
  process the agent started on the port after the real service left, token or not,
  cannot give it. A remote service (another machine's secret) proves itself with the
  token's proof alone.

Standard library only: ``guard hook`` signs and checks on its service path.
"""

from __future__ import annotations

import hashlib
import hmac
import os

from guard.core.settings import SERVE_TOKEN_ENV, Settings, from_env
from guard.storage.secret import TrustError, seal

__all__ = [
    "LOCAL_PROOF_HEADER",
    "NONCE_HEADER",
    "PROOF_HEADER",
    "credential",
    "explicit_token",
    "is_per_user",
    "local_key",
    "new_nonce",
    "proof",
    "service_key",
    "verify_proof",
]

NONCE_HEADER = "X-Guard-Nonce"
PROOF_HEADER = "X-Guard-Proof"
LOCAL_PROOF_HEADER = "X-Guard-Local-Proof"


def explicit_token(settings: Settings | None = None) -> str | None:
    """A token the user set: ``$GUARD_SERVE_TOKEN``, else the config's ``server.token``."""
    return from_env(SERVE_TOKEN_ENV) or (settings.server_token if settings else None) or None


def service_key(settings: Settings | None = None, token: str | None = None) -> str | None:
    """The service's key: ``token``, else the user's, else the per-user one (None when the secret is unavailable)."""
    chosen = token or explicit_token(settings)
    if chosen:
        return chosen
    try:
        return seal("serve-token")
    except TrustError:
        return None


def is_per_user(key: str | None) -> bool:
    """Whether ``key`` is the per-user token, derived from the secret: the one the agent cannot hold (a token the user set
    may be in the agent's environment, or on the service's command line, which the agent can read: docs/threat-model.md)."""
    if not key:
        return False
    try:
        return hmac.compare_digest(key.encode(), seal("serve-token").encode())
    except TrustError:
        return False


def local_key(key: str) -> str | None:
    """``key`` bound to this user's secret: what a service and a hook on this machine, run by this user, both derive
    and the agent cannot (None when the secret is unavailable)."""
    try:
        return seal("serve-local-proof", key)
    except TrustError:
        return None


def _derive(key: str, purpose: str) -> bytes:
    return hmac.new(key.encode(), purpose.encode(), hashlib.sha256).digest()


def credential(key: str) -> str:
    """What ``guard hook`` sends as its bearer token: accepted by the service, useless for signing answers."""
    return _derive(key, "guard-hook").hex()


def new_nonce() -> str:
    return os.urandom(16).hex()


def proof(key: str, nonce: str, body: bytes) -> str:
    """The service's signature over its answer ``body`` to the request that carried ``nonce``."""
    return hmac.new(_derive(key, "guard-serve-proof"), nonce.encode() + b"\n" + body, hashlib.sha256).hexdigest()


def verify_proof(key: str, nonce: str, body: bytes, given: object) -> bool:
    return isinstance(given, str) and hmac.compare_digest(given, proof(key, nonce, body))
