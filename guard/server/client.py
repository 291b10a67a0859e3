"""Send one event to a running ``guard serve``: what ``guard hook --server URL`` does.

Standard library only (``urllib``): it runs inside ``guard hook`` on every tool
call, where importing an HTTP library would cost more than the round trip.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

__all__ = ["CLIENT_HEADER", "TOKEN_ENV", "send_event", "service_token"]

TOKEN_ENV = "GUARD_SERVE_TOKEN"
#: Which client an already normalized event came from (``guard hook --format``), so the service's audit row names it.
CLIENT_HEADER = "X-Guard-Client"


def service_token(settings: Any = None) -> str | None:
    """The bearer token for ``guard serve``: ``$GUARD_SERVE_TOKEN``, else the config's ``server.token``."""
    return os.environ.get(TOKEN_ENV) or getattr(settings, "server_token", None) or None


def send_event(
    url: str, payload: dict[str, Any], *, fmt: str | None = None, timeout: float = 30.0, token: str | None = None, client: str | None = None
) -> dict[str, Any] | None:
    """The service's canonical decision for ``payload``, or None when it cannot give one.

    ``url`` is the service's base URL (``http://127.0.0.1:8787``). With ``fmt``
    the payload is in that client's shape and the service normalizes it. None
    means "judge it yourself": the service is down, unreachable, too slow, or
    answered something that is not a decision. A 4xx for a malformed event is
    also None, so the in-process engine reports the problem the usual way.
    ``token`` (default :func:`service_token` without a config) goes out as a
    bearer token. ``client`` names the client a normalized ``payload`` came from.
    """
    endpoint = url.rstrip("/") + "/v1/hooks" + (f"?format={quote(fmt)}" if fmt else "")
    body = json.dumps(payload).encode()  # ASCII escapes: a lone surrogate cannot break the encoding here
    headers = {"Content-Type": "application/json", "X-Guard-Deadline": f"{timeout:.3f}"}
    if client:
        headers[CLIENT_HEADER] = client
    token = token or service_token()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(endpoint, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.loads(response.read())
    except (OSError, ValueError):  # URLError, HTTPError, timeouts and refused connections are OSErrors
        return None
    if not isinstance(data, dict) or data.get("decision") not in ("allow", "deny", "ask"):
        return None
    return data
