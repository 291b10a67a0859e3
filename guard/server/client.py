"""Send one event to a running ``guard serve``: what ``guard hook --server URL`` does.

The answer is believed only when it proves it came from the service holding this
user's key (:mod:`guard.server.identity`): anything else — a process that took
the port, one a forged or stale state file points at — is None, and the caller
judges the event in-process. Standard library only (``urllib``): it runs inside
``guard hook`` on every tool call, where importing an HTTP library would cost
more than the round trip.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

from guard.core.decision import is_decision
from guard.core.logs import LazyLogger
from guard.server.identity import (
    LOCAL_PROOF_HEADER,
    NONCE_HEADER,
    PROOF_HEADER,
    credential,
    explicit_token,
    local_key,
    new_nonce,
    service_key,
    verify_proof,
)

__all__ = ["CLIENT_HEADER", "send_event", "service_key", "service_token"]

#: Which client an already normalized event came from (``guard hook --format``), so the service's audit row names it.
CLIENT_HEADER = "X-Guard-Client"

log = LazyLogger("guard.server")

#: The user's own token, when they set one (the per-user key is used otherwise: see :func:`service_key`).
service_token = explicit_token


def send_event(
    url: str,
    payload: dict[str, Any],
    *,
    fmt: str | None = None,
    timeout: float = 30.0,
    key: str | None = None,
    client: str | None = None,
) -> dict[str, Any] | None:
    """The service's canonical decision for ``payload``, or None when it cannot give one that proves it is guard's.

    ``url`` is the service's base URL (``http://127.0.0.1:8787``). With ``fmt``
    the payload is in that client's shape and the service normalizes it. None
    means "judge it yourself": the service is down, unreachable, too slow, is not
    the service holding ``key`` (default: :func:`service_key` without a config),
    or answered something that is not a decision. A 4xx for a malformed event is
    also None, so the in-process engine reports the problem the usual way.
    ``client`` names the client a normalized ``payload`` came from.
    """
    key = key or service_key()
    if key is None:  # no secret, no token: nothing could prove an answer
        return None
    endpoint = url.rstrip("/") + "/v1/hooks" + (f"?format={quote(fmt)}" if fmt else "")
    body = json.dumps(payload).encode()  # ASCII escapes: a lone surrogate cannot break the encoding here
    nonce = new_nonce()
    headers = {
        "Content-Type": "application/json",
        "X-Guard-Deadline": f"{timeout:.3f}",
        "Authorization": f"Bearer {credential(key)}",
        NONCE_HEADER: nonce,
    }
    if client:
        headers[CLIENT_HEADER] = client
    request = urllib.request.Request(endpoint, data=body, method="POST", headers=headers)
    local = local_key(key) if _loopback(url) else None  # a service on this machine: only the secret-bound proof counts
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer = response.read()
            signed = response.headers.get(LOCAL_PROOF_HEADER if local else PROOF_HEADER)
    except (OSError, ValueError):  # URLError, HTTPError, timeouts and refused connections are OSErrors
        return None
    if not verify_proof(local or key, nonce, answer, signed):
        log.warning(
            "the answer from %s does not prove it came from guard serve (this user's key); judging in-process", url
        )
        return None
    try:
        data = json.loads(answer)
    except ValueError:
        return None
    if not isinstance(data, dict) or not is_decision(data.get("decision")):
        return None
    return data


def _loopback(url: str) -> bool:
    """Whether ``url`` reaches this machine (a service run by this user, whose secret it shares)."""
    import ipaddress
    from urllib.parse import urlparse

    try:
        host = urlparse(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or address.is_unspecified or (mapped is not None and mapped.is_loopback))
