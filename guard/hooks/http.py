"""Webhook hooks: POST the event JSON to a URL and read the reply as a decision.

The reply is read like a command hook's stdout (Claude Code shape or canonical
decision JSON); an empty or plain-text 2xx body abstains. Everything that can go
wrong raises (refused by the SSRF check, timeout, non-2xx, redirect, unreadable
reply) so the engine applies the hook's failure_mode. ``fire_and_forget`` hooks
abstain at once and hand the delivery to a background queue: they can never
delay or change a decision.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

from guard.core.decision import HookResult
from guard.core.errors import HookError
from guard.core.events.model import Event
from guard.core.hook import Hook, HookContext
from guard.core.spec import HookSpec
from guard.hooks.reply import decode_reply, parse_reply
from guard.webhooks.client import Delivery

__all__ = ["DELIVERY_QUEUE", "WEBHOOK_THREADS", "HttpHook"]

#: The HookContext resource holding the fire-and-forget queue (tests put their own there).
DELIVERY_QUEUE = "webhook_delivery_queue"
#: Blocking webhook calls get their own threads: slow receivers must not starve the
#: default executor that sync callable hooks (and other engines' work) share.
WEBHOOK_THREADS = "webhook_threads"


def _thread_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=32, thread_name_prefix="guard-webhook-call")


class HttpHook(Hook):
    """POSTs each event to the ``url`` option (see :mod:`guard.webhooks.client` for the transport).

    Its options (``url``, ``secret``, ``headers``, ``fire_and_forget``) are in ``spec.options``, as
    :class:`guard.config.kind_options.HttpOptions` validated them and the config's ``${VAR}`` expanded them.
    """

    def __init__(self, spec: HookSpec, ctx: HookContext) -> None:
        url, secret, headers = spec.options.get("url"), spec.options.get("secret"), spec.options.get("headers") or {}
        if not url or not isinstance(url, str):
            raise HookError(f"hook {spec.id}: an http hook needs a url")
        self.spec = spec
        self.ctx = ctx
        self.url: str = url
        self.secret: str | None = str(secret) if secret else None
        self.headers = tuple(sorted((str(name), str(value)) for name, value in dict(headers).items()))

    def _delivery(self, event: Event) -> Delivery:
        # ASCII JSON: any string (lone surrogates included) encodes, and receivers see no charset issues.
        body = json.dumps(event.payload(), separators=(",", ":")).encode()
        return Delivery(
            hook_id=self.spec.id,
            url=self.url,
            body=body,
            event=event.event,
            secret=self.secret,
            headers=self.headers,
            timeout=self.spec.timeout,
            allow_networks=self.ctx.settings.allow_networks,
        )

    async def run(self, event: Event) -> HookResult:
        delivery = self._delivery(event)
        if self.spec.fire_and_forget:
            return self._enqueue(delivery)
        pool = self.ctx.resource(WEBHOOK_THREADS, _thread_pool)
        data = await asyncio.get_running_loop().run_in_executor(pool, delivery.send)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HookError(f"hook {self.spec.id}: webhook reply is not UTF-8") from exc
        reply = decode_reply(text, hook_id=self.spec.id)
        if reply is None:  # empty or plain text: the receiver had nothing to decide
            return HookResult(id=self.spec.id, type="http")
        return parse_reply(reply, hook_id=self.spec.id, kind="http", event=event.event)

    def _enqueue(self, delivery: Delivery) -> HookResult:
        from guard.webhooks.delivery import shared_queue

        queued = self.ctx.resource(DELIVERY_QUEUE, shared_queue).submit(delivery)
        return HookResult(id=self.spec.id, type="http", details={"fire_and_forget": "queued" if queued else "dropped"})
