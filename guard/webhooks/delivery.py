"""The background queue behind ``fire_and_forget`` webhooks.

A notification must never delay or change a decision, and a slow or dead
receiver must never exhaust memory. So deliveries go to a bounded queue (by
count and by bytes) served by a few daemon threads; a full queue drops the new
delivery with a warning; failures are only logged. ``guard hook`` lives for one
event, so at process exit the queue gets a short deadline to finish what it
holds before the process goes (whatever is left is logged as abandoned).
Standard library only.
"""

from __future__ import annotations

import atexit
import collections
import logging
import threading
import time

from guard.webhooks.client import Delivery
from guard.webhooks.ssrf import Resolver

__all__ = ["DeliveryQueue", "shared_queue"]

log = logging.getLogger("guard.webhooks")


class DeliveryQueue:
    """Bounded, thread-served queue of webhook deliveries; failures are logged, never raised."""

    def __init__(
        self,
        *,
        max_items: int = 256,
        max_bytes: int = 8 << 20,
        workers: int = 2,
        exit_deadline: float = 2.0,
        resolve: Resolver | None = None,
    ) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.exit_deadline = exit_deadline
        self._resolve = resolve
        self._workers = workers
        self._items: collections.deque[Delivery | None] = collections.deque()
        self._cond = threading.Condition()
        self._bytes = 0  # bodies queued or in flight
        self._busy = 0
        self._threads: list[threading.Thread] = []
        self.sent = self.failed = self.dropped = 0

    def submit(self, delivery: Delivery) -> bool:
        """Queue ``delivery``; False (and a warning) when the queue is full."""
        with self._cond:
            if len(self._items) >= self.max_items or self._bytes + len(delivery.body) > self.max_bytes:
                self.dropped += 1
                log.warning(
                    "webhook %s: delivery queue full (%d queued, %d bytes pending); dropped a %s notification",
                    delivery.hook_id, len(self._items), self._bytes, delivery.event,
                )  # fmt: skip
                return False
            self._items.append(delivery)
            self._bytes += len(delivery.body)
            if not self._threads:
                self._start()
            self._cond.notify_all()
        return True

    def _start(self) -> None:
        for n in range(self._workers):
            thread = threading.Thread(target=self._work, name=f"guard-webhook-{n}", daemon=True)
            thread.start()
            self._threads.append(thread)
        atexit.register(self._drain_at_exit)

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._items:
                    self._cond.wait()
                delivery = self._items.popleft()
                if delivery is None:  # close()
                    return
                self._busy += 1
            try:
                delivery.send(resolve=self._resolve)
                ok = True
            except Exception as exc:  # a notification failure is only ever logged
                ok = False
                log.warning("webhook %s: %s notification not delivered: %s", delivery.hook_id, delivery.event, exc)
            with self._cond:
                self._busy -= 1
                self._bytes -= len(delivery.body)
                self.sent += ok
                self.failed += not ok
                self._cond.notify_all()

    def pending(self) -> int:
        """Deliveries queued or in flight."""
        with self._cond:
            return len(self._items) + self._busy

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every delivery to finish; True when none is left."""
        end = time.monotonic() + timeout
        with self._cond:
            while self._items or self._busy:
                remaining = end - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    def _drain_at_exit(self) -> None:
        if not self.drain(self.exit_deadline):
            log.warning(
                "process exiting: %d webhook notification(s) abandoned after %.1fs", self.pending(), self.exit_deadline
            )

    def close(self, timeout: float = 0.0) -> None:
        """Drain for up to ``timeout`` seconds, then stop the workers (queued leftovers are dropped)."""
        self.drain(timeout)
        with self._cond:
            self._bytes -= sum(len(d.body) for d in self._items if d is not None)
            self._items.clear()
            self._items.extend([None] * len(self._threads))
            self._cond.notify_all()
        atexit.unregister(self._drain_at_exit)
        for thread in self._threads:
            thread.join(timeout=0.1)
        self._threads.clear()


_shared: DeliveryQueue | None = None
_shared_lock = threading.Lock()


def shared_queue() -> DeliveryQueue:
    """The process-wide queue (one set of workers and one exit drain per process)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = DeliveryQueue()
        return _shared
