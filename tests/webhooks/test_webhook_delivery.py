"""fire_and_forget webhooks: never delay or change a decision, bounded queue, drained at exit."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fixtures.processes import SOURCE_ROOT
from fixtures.webhook import Receiver, made_and_closed

from guard.core.settings import Settings
from guard.core.spec import HookSpec
from guard.hooks.http import DELIVERY_QUEUE
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry
from guard.webhooks.delivery import DeliveryQueue

LOCAL = Settings(allow_networks=("127.0.0.0/8",), audit_path=None)
EVENT = {"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"}}


def notify(url: str, **options: Any) -> HookSpec:
    options = {"url": url, "fire_and_forget": True, **options}
    return HookSpec(id="notify", kind="http", event="pre_tool_use", options=options, failure_mode="fail_closed")


@pytest.fixture
def queues() -> Iterator[Callable[..., DeliveryQueue]]:
    yield from made_and_closed(DeliveryQueue)


def engine(spec: HookSpec, queue: DeliveryQueue, settings: Settings = LOCAL) -> Engine:
    eng = Engine(settings, Registry([spec]))
    eng.ctx.resources[DELIVERY_QUEUE] = queue
    return eng


async def test_a_slow_receiver_neither_delays_nor_changes_the_decision(
    make_receiver: Callable[..., Receiver], queues: Callable[..., DeliveryQueue]
) -> None:
    receiver = make_receiver(reply=(200, json.dumps({"decision": "deny"}).encode(), {}), delay=5)
    eng = engine(notify(receiver.url(), secret="k"), queues())
    started = time.monotonic()
    decision = await eng.decide(EVENT)
    assert time.monotonic() - started < 0.5
    assert decision.decision == "allow"  # the receiver's deny is never read
    assert decision.hooks[0].decision is None and decision.hooks[0].details == {"fire_and_forget": "queued"}
    assert receiver.wait_for(1)
    assert json.loads(receiver.requests[0].body) == EVENT


@pytest.mark.parametrize("failure", ["refused", "error"])
async def test_failures_are_only_logged(
    failure: str,
    make_receiver: Callable[..., Receiver],
    queues: Callable[..., DeliveryQueue],
    guard_log: pytest.LogCaptureFixture,
) -> None:
    receiver = make_receiver(reply=(500, b"down", {}))
    queue = queues()
    settings = Settings(audit_path=None) if failure == "refused" else LOCAL
    decision = await engine(notify(receiver.url()), queue, settings).decide(EVENT)
    assert decision.decision == "allow" and decision.hooks[0].error is None  # fail_closed does not apply
    assert queue.drain(5)
    assert queue.failed == 1 and queue.sent == 0
    expected = "loopback" if failure == "refused" else "HTTP 500"
    assert any(expected in r.getMessage() and r.levelno == logging.WARNING for r in guard_log.records)
    assert receiver.connections == (0 if failure == "refused" else 1)


async def test_a_full_queue_drops_new_notifications_with_a_warning(
    make_receiver: Callable[..., Receiver], queues: Callable[..., DeliveryQueue], guard_log: pytest.LogCaptureFixture
) -> None:
    receiver = make_receiver(delay=5)
    queue = queues(max_items=2, workers=1)
    eng = engine(notify(receiver.url()), queue)
    await eng.decide(EVENT)
    assert receiver.wait_for(1)  # the only worker is now stuck on the slow receiver
    outcomes = [(await eng.decide(EVENT)).hooks[0].details["fire_and_forget"] for _ in range(5)]
    assert outcomes == ["queued", "queued", "dropped", "dropped", "dropped"]
    assert queue.dropped == 3 and queue.pending() == 3
    assert sum("queue full" in r.getMessage() for r in guard_log.records) == 3


async def test_pending_bytes_are_bounded(
    make_receiver: Callable[..., Receiver], queues: Callable[..., DeliveryQueue]
) -> None:
    receiver = make_receiver(delay=5)
    queue = queues(max_bytes=4096, workers=1)
    eng = engine(notify(receiver.url()), queue)
    big = {**EVENT, "tool_input": {"content": "x" * 3000}}
    outcomes = [(await eng.decide(big)).hooks[0].details["fire_and_forget"] for _ in range(3)]
    assert outcomes == ["queued", "dropped", "dropped"]


SCRIPT = """
import sys
from guard.runtime.engine import Engine
from guard.core.spec import HookSpec
from guard.runtime.registry import Registry
from guard.core.settings import Settings

spec = HookSpec(
    id="notify", kind="http", event="session_end", options={"url": sys.argv[1], "fire_and_forget": True}
)
engine = Engine(Settings(allow_networks=("127.0.0.0/8",), audit_path=None), Registry([spec]))
print(engine.decide_sync({"hook_event_name": "SessionEnd", "session_id": "s"}).decision, flush=True)
"""


def run_script(url: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    env = {**os.environ, "PYTHONPATH": SOURCE_ROOT}  # the guard this test imported, wherever the process starts
    done = subprocess.run([sys.executable, "-c", SCRIPT, url], capture_output=True, text=True, timeout=30, env=env)
    return done, time.monotonic() - started


def test_a_short_lived_process_still_delivers_before_exiting(make_receiver: Callable[..., Receiver]) -> None:
    receiver = make_receiver(delay=0.3)
    done, _ = run_script(receiver.url())
    assert done.returncode == 0 and done.stdout.strip() == "allow"
    assert len(receiver.requests) == 1
    assert json.loads(receiver.requests[0].body)["hook_event_name"] == "SessionEnd"


@pytest.mark.slow
def test_exit_waits_only_a_short_deadline_for_a_dead_receiver(make_receiver: Callable[..., Receiver]) -> None:
    receiver = make_receiver(delay=30)
    done, elapsed = run_script(receiver.url())
    assert done.returncode == 0 and done.stdout.strip() == "allow"
    assert "abandoned" in done.stderr
    assert elapsed < 6  # start-up + the 2 s exit deadline, not the receiver's 30 s
