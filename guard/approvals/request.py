"""What an approval request says to the people who answer it, and the proof that lets one of them answer.

The webhook body (``approvals.format``):

- ``guard`` (default): ``{"type": "guard.approval_request", "id", "rules": [{"id",
  "rule", "reason"}], "tool", "input", "session", "cwd", "machine", "user",
  "expires_at", "timeout", "link", "approve", "deny"}``, for a bot or a service of
  your own;
- ``slack``: ``{"text": …}``, which a Slack incoming webhook posts to its channel
  as is (a link to decide in ``guard view``, and the commands to run).

``link`` opens the request in ``guard view`` with ``t=<proof>``: the proof is an
HMAC of the request's id under the secret of the user whose call waits, so it
answers that one request and no other, and the agent, which cannot read the
secret, cannot make one. The same proof lets ``guard approve ID --token PROOF``
answer without a terminal (a bot holding the link). Nothing the agent is told
(the decision's reason, the audit row) carries it. Standard library only.
"""

from __future__ import annotations

import hmac
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from guard.storage.secret import seal

if TYPE_CHECKING:
    from guard.approvals.store import ApprovalRequest

__all__ = ["DEFAULT_LINK", "body", "excerpt", "link", "proof", "proves", "view_token"]

#: Where ``guard view`` listens by default.
DEFAULT_LINK = "http://127.0.0.1:8377"
_PROOF_DIGITS = 32


def proof(request_id: str) -> str:
    """The proof that answers ``request_id`` (TrustError without the secret)."""
    return seal("approval-request", request_id)[:_PROOF_DIGITS]


def proves(request_id: str, given: str | None) -> bool:
    """Whether ``given`` is ``request_id``'s proof (constant time)."""
    if not given:
        return False
    try:
        return hmac.compare_digest(given.encode(), proof(request_id).encode())
    except Exception:  # no secret: nothing is proven
        return False


def view_token() -> str:
    """``guard view``'s sign-in token for answering any request (printed to the person who started it)."""
    return seal("approvals-view")[:_PROOF_DIGITS]


def link(base: str | None, request_id: str, *, under_ui: bool = False) -> str:
    """The address that opens ``request_id`` in ``guard view`` (``/ui`` under ``guard serve``), proof included."""
    root = (base or DEFAULT_LINK).rstrip("/")
    return f"{root}{'/ui' if under_ui else ''}/approvals/{quote(request_id)}?t={proof(request_id)}"


def excerpt(tool_input: object, limit: int = 300) -> str:
    """What a person scans a call's input for: its command or path, else the input as JSON; cut at ``limit``."""
    if isinstance(tool_input, dict):
        first = next(
            (
                tool_input[k]
                for k in ("command", "file_path", "url", "path", "prompt")
                if isinstance(tool_input.get(k), str)
            ),
            None,
        )
        text = first if first is not None else json.dumps(tool_input, ensure_ascii=False)
    else:
        text = json.dumps(tool_input, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _slack(text: str) -> str:
    """Text Slack shows as it is: its control characters escaped, and no backtick to end the code span early.

    The input is the agent's: unescaped, ``<https://elsewhere|Decide in guard view>`` in a command
    would put a link of its choosing in the approvers' channel.
    """
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("`", "'")


def body(request: ApprovalRequest, *, form: str, link_base: str | None) -> dict[str, Any]:
    """The JSON the webhook is sent for ``request`` (an :class:`~guard.approvals.store.ApprovalRequest`)."""
    address = link(link_base, request.id)
    approve, deny = f"guard approve {request.id}", f"guard deny {request.id}"
    timeout = round(request.expires - request.created)
    if form == "slack":
        rules = "; ".join(f"{r['id']}: {r.get('reason') or r.get('rule') or ''}" for r in request.rules)
        who = f"{request.user}@{request.machine}" if request.user else request.machine or "a machine"
        text = (
            f"guard asks a person: {_slack(request.tool or 'a tool')} `{_slack(excerpt(request.input))}` on {_slack(who)} ({_slack(rules)}). "
            f"<{address}|Decide in guard view>, or run `{approve}` / `{deny}` there. Denied in {timeout} s if no one answers."
        )
        return {"text": text}
    return {
        "type": "guard.approval_request",
        "id": request.id,
        "rules": request.rules,
        "tool": request.tool,
        "input": request.input,
        "session": request.session,
        "cwd": request.cwd,
        "machine": request.machine,
        "user": request.user,
        "expires_at": request.expires,
        "timeout": timeout,
        "link": address,
        "approve": approve,
        "deny": deny,
    }
