"""The gate's approval step: an ``ask`` from hooks with ``on_ask: approval`` becomes a request a person answers while the call waits.

After the deciders, before the audit row: when the decision is ``ask`` and every
enforced hook that asked says ``on_ask: approval``, the gate opens a request
(:mod:`guard.approvals.store`), POSTs it to ``approvals.webhook`` through guard's
webhook client (the SSRF check, ``webhooks.allow_networks``, the signature when
``approvals.secret`` is set), and waits for a person's sealed answer:

==========================  ==============================================
what happens                what the call gets
==========================  ==============================================
a person approves           allow; the decision and its audit row name who
                            approved it, and how (a terminal, guard view,
                            a token)
a person denies             deny, final, naming who
``approvals.timeout`` ends  deny: no one answered (not final: the agent may
                            ask the user)
the client's deadline       deny, before the client gives up: an approval
comes first                 no one gave is never read as an allow
==========================  ==============================================

A webhook that fails is a warning on the decision; the request still waits, as
``guard approve`` and ``guard view`` can answer it without the webhook. Who may
answer, and why the agent cannot: :mod:`guard.approvals.request`.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import socket
import time
from collections.abc import Iterable
from typing import Any

from guard.core.decision import DecidingRule, Decision
from guard.core.logs import LazyLogger
from guard.core.settings import Settings
from guard.core.spec import HookSpec

__all__ = ["POLL_S", "Pending", "asking", "open_request", "settle", "store_failed", "unanswered"]

log = LazyLogger("guard.approvals")

#: How often a waiting call looks for an answer.
POLL_S = 0.2
#: Events whose ask a person can answer in a client's stead: the calls a client would ask about.
_EVENTS = frozenset({"pre_tool_use", "permission_request"})


def asking(decision: Decision, event: str, specs: Iterable[HookSpec]) -> list[HookSpec]:
    """The hooks whose ask goes to a person: every enforced hook that asked, when each says ``on_ask: approval``; else none."""
    if decision.decision != "ask" or event not in _EVENTS:
        return []
    by_id = {spec.id: spec for spec in specs}
    asked = [by_id.get(result.id) for result in decision.hooks if result.decision == "ask" and not result.shadow]
    if not asked or any(spec is None or spec.on_ask != "approval" for spec in asked):
        return []
    return [spec for spec in asked if spec is not None]


class Pending:
    """An open request: its id, when it stops waiting and why then, and what the webhook said."""

    __slots__ = ("request_id", "until", "by_deadline", "warnings", "started")

    def __init__(self, request_id: str, until: float, by_deadline: bool, warnings: list[str], started: float) -> None:
        self.request_id, self.until, self.by_deadline, self.warnings, self.started = (
            request_id,
            until,
            by_deadline,
            warnings,
            started,
        )


def _rules(specs: list[HookSpec], decision: Decision) -> list[dict[str, Any]]:
    from guard.core.explanation import rule_text

    reasons = {result.id: result.reason for result in decision.hooks}
    return [{"id": spec.id, "rule": rule_text(spec), "reason": reasons.get(spec.id)} for spec in specs]


def open_request(
    settings: Settings, payload: dict[str, Any], specs: list[HookSpec], decision: Decision, answer_by: float | None
) -> Pending:
    """Record the request and send the webhook (blocking: the caller runs it where blocking is fine)."""
    from guard.approvals.request import body
    from guard.approvals.store import ApprovalRequest, ApprovalStore, new_id
    from guard.audit import redacted

    now, started = time.time(), time.monotonic()
    request_id = new_id()
    wait = settings.approvals_timeout
    by_deadline = answer_by is not None and answer_by - started < wait
    if by_deadline:
        assert answer_by is not None
        wait = max(answer_by - started - POLL_S, 0.0)
    until = started + wait  # the webhook's time is part of the wait, never added to it
    names = frozenset(name.lower() for name in settings.audit_redact)
    request = ApprovalRequest(
        request_id,
        now,
        now + wait,
        "pending",
        _rules(specs, decision),
        payload.get("tool_name"),
        redacted(payload.get("tool_input"), names),
        payload.get("session_id"),
        payload.get("cwd"),
        socket.gethostname(),
        getpass.getuser(),
    )
    ApprovalStore().open_request(request)
    warnings = []
    if settings.approvals_webhook:
        from guard.webhooks.client import Delivery

        delivery = Delivery(
            hook_id="approvals",
            url=settings.approvals_webhook,
            event="approval_request",
            body=json.dumps(body(request, form=settings.approvals_format, link_base=settings.approvals_link)).encode(),
            secret=settings.approvals_secret,
            timeout=min(10.0, max(until - time.monotonic(), 0.1)),
            allow_networks=settings.allow_networks,
        )
        try:
            delivery.send()
        except Exception as exc:  # no one was told; guard approve and guard view can still answer
            log.warning("approval request %s: the webhook failed: %s", request_id, exc)
            warnings.append(
                f"the approval webhook failed ({exc}): request {request_id} waits for guard approve or guard view"
            )
    return Pending(request_id, until, by_deadline, warnings, started)


def _answer(pending: Pending) -> Any:
    from guard.approvals.store import ApprovalStore

    try:
        return ApprovalStore().answered(pending.request_id)
    except Exception:  # a locked or damaged file: no answer yet (the wait still ends in time)
        log.debug("reading approval %s failed", pending.request_id, exc_info=True)
        return None


def wait(pending: Pending) -> Any:
    """Poll for an answer until the request's time is up; the answer or None."""
    while True:
        answer = _answer(pending)
        if answer is not None or time.monotonic() >= pending.until:
            return answer
        time.sleep(min(POLL_S, max(pending.until - time.monotonic(), 0.0)))


async def await_answer(pending: Pending) -> Any:
    """:func:`wait` on the running loop (``guard serve``): the loop keeps answering other calls meanwhile."""
    loop = asyncio.get_running_loop()
    while True:
        answer = await loop.run_in_executor(None, _answer, pending)
        if answer is not None or time.monotonic() >= pending.until:
            return answer
        await asyncio.sleep(min(POLL_S, max(pending.until - time.monotonic(), 0.0)))


def settle(decision: Decision, specs: list[HookSpec], pending: Pending, answer: Any) -> Decision:
    """The decision once a person answered (``answer``) or no one did (None: the request expires, unless an answer just came)."""
    from guard.approvals.store import ApprovalStore

    if answer is None:
        answer = ApprovalStore().expire(pending.request_id)
    waited = round(time.monotonic() - pending.started, 3)
    warnings = [*decision.warnings, *pending.warnings]
    asked = ", ".join(spec.id for spec in specs)
    if answer is not None and answer.status == "approved":
        details = {
            **decision.details,
            "approval": {
                "id": pending.request_id,
                "status": "approved",
                "by": answer.by,
                "via": answer.via,
                "waited_s": waited,
            },
        }
        return Decision(
            "allow",
            f"approved by {answer.by} ({answer.via}): approval request {pending.request_id} for {asked}",
            decision.updated_input,
            decision.additional_context,
            decision.hooks,
            details,
            warnings,
        )
    if answer is not None:
        details = {
            **decision.details,
            "approval": {
                "id": pending.request_id,
                "status": "denied",
                "by": answer.by,
                "via": answer.via,
                "waited_s": waited,
            },
        }
        why = f"denied by {answer.by} ({answer.via}), approval request {pending.request_id}"
        rules = [DecidingRule(spec.id, _rule(spec), f"{answer.by} ({answer.via})", True, why) for spec in specs]
        return Decision(
            "deny", f"{why} for {asked}", hooks=decision.hooks, details=details, warnings=warnings, decided_by=rules
        )
    when = (
        "before the client's deadline"
        if pending.by_deadline
        else f"within {round(pending.until - pending.started)} s (approvals.timeout)"
    )
    why = f"no one answered approval request {pending.request_id} {when}: denied"
    details = {
        **decision.details,
        "approval": {"id": pending.request_id, "status": "expired", "by": None, "via": None, "waited_s": waited},
    }
    rules = [DecidingRule(spec.id, _rule(spec), "no one (the approval timed out)", False, why) for spec in specs]
    return Decision(
        "deny", f"{why} ({asked})", hooks=decision.hooks, details=details, warnings=warnings, decided_by=rules
    )


def unanswered(error: str, kind: str = "deadline") -> Decision:
    """The answer when the wait for a person ends without a sealed answer (the client's deadline, a store that failed): a deny."""
    why = f"no one approved this call: denied ({error})"
    rule = DecidingRule("guard.approval", "an approval no one gave is a deny", "no one", False, why)
    return Decision(
        "deny",
        why,
        details={"failure": kind, "error": error, "approval": {"status": "expired", "by": None, "via": None}},
        decided_by=[rule],
    )


def store_failed(pending: Pending, exc: Exception) -> Decision:
    """The answer when reading or expiring the request failed mid-wait: no sealed answer was read, so a deny."""
    log.debug("waiting for approval %s failed", pending.request_id, exc_info=True)
    return unanswered(
        f"the approvals store failed on request {pending.request_id}: {type(exc).__name__}: {exc}", kind="approval"
    )


def _rule(spec: HookSpec) -> str | None:
    from guard.core.explanation import rule_text

    return rule_text(spec)
