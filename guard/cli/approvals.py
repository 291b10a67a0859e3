"""``guard approve ID`` / ``guard deny ID`` / ``guard approvals``: a person answers a call that waits for approval (docs/approvals.md).

The agent must not answer its own request. ``guard approve`` refuses in an agent
client's environment, and approves only after a yes typed on the controlling
terminal (``/dev/tty``, which a tool call's pipes are not) or with the request's
proof (``--token``, from the link the webhook carried: an HMAC under the user's
secret, which the agent cannot read). The self-protection rule refuses a tool
call that runs guard at all. ``guard deny`` needs no terminal (a deny gives the
agent nothing) but is refused to an agent client too.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
import time
from typing import TYPE_CHECKING

from guard.approvals.request import excerpt, proves
from guard.approvals.store import APPROVED, DENIED, ApprovalStore
from guard.cli.terminal import printable
from guard.cli.user_consent import NoTerminal, ask, refusal
from guard.core.errors import GuardError

if TYPE_CHECKING:
    from guard.approvals.store import ApprovalRequest

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, verb in (("approve", "approve"), ("deny", "deny")):
        p: argparse.ArgumentParser = sub.add_parser(
            name,
            help=f"{verb} a call that waits for approval (on_ask: approval)",
            description=f"{verb.capitalize()} the waiting call of approval request ID (from the webhook's message, guard approvals or guard view). "
            + (
                "At a terminal you are shown the call and asked to confirm; --token answers without one."
                if name == "approve"
                else ""
            ),
        )
        p.add_argument("id", metavar="ID", help="the approval request's id")
        p.add_argument(
            "--token",
            metavar="PROOF",
            help="the request's proof (the t= of its guard view link): answers without a terminal",
        )
        p.add_argument(
            "--by", metavar="NAME", help="who answers, for the decision and the audit row (default: your user name)"
        )
        p.set_defaults(func=run, answer=name)
    listing = sub.add_parser(
        "approvals",
        help="list the calls waiting for approval",
        description="The approval requests of this user, newest first.",
    )
    listing.add_argument("--all", action="store_true", help="answered and expired ones too")
    listing.add_argument("--json", action="store_true", help="one JSON object per request")
    listing.set_defaults(func=run, answer=None)


def _list(args: argparse.Namespace) -> int:
    requests = ApprovalStore().listed(pending_only=not args.all)
    if args.json:
        for request in requests:
            print(json.dumps(request.to_dict(), ensure_ascii=False, default=str))
        return 0
    if not requests:
        print("no call waits for approval" if not args.all else "no approval requests yet")
    for request in requests:
        left = f"{max(request.expires - time.time(), 0):.0f} s left" if request.status == "pending" else request.status
        rules = ", ".join(rule["id"] for rule in request.rules)
        who = f" by {request.answered_by} ({request.answered_via})" if request.answered_by else ""
        print(printable(f"{request.id}  {left}{who}  {request.tool or '-'}  {excerpt(request.input, 120)}  [{rules}]"))
    return 0


def _confirm(request: ApprovalRequest, verb: str) -> bool:
    rules = "\n".join(
        f"  rule {rule['id']}: {rule.get('rule') or ''}\n    asked: {rule.get('reason') or ''}"
        for rule in request.rules
    )
    text = (
        f"approval request {request.id} from {request.user}@{request.machine}, waiting {max(request.expires - time.time(), 0):.0f} s more\n"
        f"  tool: {request.tool}\n  input: {json.dumps(request.input, ensure_ascii=False, indent=2)}\n  in: {request.cwd}\n{rules}"
    )
    try:
        return ask(
            f"{verb.capitalize()} this call?", text=printable(text)
        )  # the input is the agent's: no escape sequence reaches the terminal
    except NoTerminal as exc:
        raise GuardError(
            f"guard {verb} asks you to confirm at a terminal, and this process has none ({exc.strerror}); "
            "pass --token with the request's proof (the t= of its guard view link) to answer without one"
        ) from exc


def run(args: argparse.Namespace) -> int:
    if args.answer is None:
        return _list(args)

    refused = refusal(f"guard {args.answer}")
    if refused:
        print(f"guard {args.answer}: error: {refused}", file=sys.stderr)
        return 1
    store = ApprovalStore()
    request = store.get(args.id)
    if request is None:
        raise GuardError(f"there is no approval request {args.id} (guard approvals lists the waiting ones)")
    if request.status != "pending":
        raise GuardError(f"approval request {args.id} is {request.status}: no call waits on it")
    if args.token is not None:
        if not proves(request.id, args.token):
            raise GuardError(f"that is not approval request {args.id}'s proof: nothing was answered")
        via = "token"
    elif args.answer == "approve":
        if not _confirm(request, "approve"):
            print(f"not approved: request {args.id} still waits")
            return 1
        via = "terminal"
    else:
        via = "command"
    by = args.by or getpass.getuser()
    try:
        store.answer(
            request.id, APPROVED if args.answer == "approve" else DENIED, by=by, via=f"guard {args.answer}, {via}"
        )
    except ValueError as exc:
        raise GuardError(str(exc)) from exc
    print(
        f"{'approved' if args.answer == 'approve' else 'denied'} request {args.id} as {by}: the waiting call {'runs' if args.answer == 'approve' else 'is denied'}"
    )
    return 0
