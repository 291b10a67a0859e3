"""Send one event to a running ``guard serve``: what ``guard hook --server URL`` does.

Standard library only (``urllib``): it runs inside ``guard hook`` on every tool
call, where importing an HTTP library would cost more than the round trip.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

__all__ = ["send_event"]


def send_event(url: str, payload: dict[str, Any], *, fmt: str | None = None, timeout: float = 30.0) -> dict[str, Any] | None:
    """The service's canonical decision for ``payload``, or None when it cannot give one.

    ``url`` is the service's base URL (``http://127.0.0.1:8787``). With ``fmt``
    the payload is in that client's shape and the service normalizes it. None
    means "judge it yourself": the service is down, unreachable, too slow, or
    answered something that is not a decision. A 4xx for a malformed event is
    also None, so the in-process engine reports the problem the usual way.
    """
    endpoint = url.rstrip("/") + "/v1/hooks" + (f"?format={quote(fmt)}" if fmt else "")
    body = json.dumps(payload, ensure_ascii=False).encode()
    request = urllib.request.Request(endpoint, data=body, method="POST", headers={"Content-Type": "application/json", "X-Guard-Deadline": f"{timeout:.3f}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.loads(response.read())
    except (OSError, ValueError):  # URLError, HTTPError, timeouts and refused connections are OSErrors
        return None
    if not isinstance(data, dict) or data.get("decision") not in ("allow", "deny", "ask"):
        return None
    return data
