"""Subagent events through the engine: typed fields reach hooks, the last stop per task_id counts."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fixtures.webhook import Receiver

from guard.core.events.model import Event, SubagentStart, SubagentStop
from guard.core.settings import Settings
from guard.core.spec import HookSpec
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry
from guard.runtime.subagents import SubagentTracker

SETTINGS = Settings(allow_networks=("127.0.0.0/8",), audit_path=None)


def start(task_id: str, **kw: Any) -> dict[str, Any]:
    return {"hook_event_name": "SubagentStart", "session_id": "s", "task_id": task_id, **kw}


def stop(task_id: str, **kw: Any) -> dict[str, Any]:
    return {"hook_event_name": "SubagentStop", "session_id": "s", "task_id": task_id, **kw}


def tracked() -> tuple[Engine, SubagentTracker, Registry]:
    registry = Registry()
    tracker = SubagentTracker()
    tracker.register(registry)
    return Engine(SETTINGS, registry), tracker, registry


async def test_hooks_receive_the_typed_subagent_fields() -> None:
    registry = Registry()
    seen: list[Event] = []

    @registry.callable("SubagentStart")
    async def on_start(event: Event) -> None:
        seen.append(event)

    @registry.callable("subagent_stop")
    def on_stop(event: Event) -> str | None:
        seen.append(event)
        return "deny" if isinstance(event, SubagentStop) and event.status == "failed" else None

    engine = Engine(SETTINGS, registry)
    await engine.decide(start("t1", agent_type="researcher", task_description="find the bug", trace_id="tr-9"))
    failed = await engine.decide(
        stop(
            "t1",
            agent_type="researcher",
            success=False,
            status="failed",
            duration_seconds=2.5,
            error="budget",
            trace_id="tr-9",
        )
    )

    first, second = seen
    assert isinstance(first, SubagentStart)
    assert (first.task_id, first.agent_type, first.task_description, first.trace_id) == (
        "t1",
        "researcher",
        "find the bug",
        "tr-9",
    )
    assert isinstance(second, SubagentStop)
    assert (second.success, second.status, second.duration_seconds, second.error, second.trace_id) == (
        False,
        "failed",
        2.5,
        "budget",
        "tr-9",
    )
    assert failed.decision == "deny"  # a subagent_stop hook can block, like Claude's SubagentStop


async def test_the_last_stop_for_a_task_counts() -> None:
    engine, tracker, _ = tracked()
    await engine.decide(start("t1", agent_type="coder", task_description="write tests", trace_id="tr"))
    assert tracker.get("t1").status == "running"  # type: ignore[union-attr]

    await engine.decide(
        stop("t1", agent_type="coder", success=True, status="completed", duration_seconds=12.0, result={"files": 3})
    )
    await engine.decide(
        stop(
            "t1",
            agent_type="coder",
            success=False,
            status="cancelled",
            duration_seconds=12.4,
            error="cancelled by user",
        )
    )

    run = tracker.get("t1")
    assert run is not None
    assert (run.status, run.success, run.duration_seconds, run.error) == ("cancelled", False, 12.4, "cancelled by user")
    assert run.result is None  # the completed stop's result was replaced along with it
    assert run.previous == ["completed"]
    assert (run.task_description, run.trace_id) == ("write tests", "tr")  # from the start event, kept


async def test_interleaved_runs_are_kept_apart_and_tracking_never_decides() -> None:
    engine, tracker, _ = tracked()
    for event in (
        start("a", agent_type="x"),
        start("b", agent_type="y"),
        stop("b", success=True, status="completed"),
        stop("a", success=False),
    ):
        decision = await engine.decide(event)
        assert decision.decision == "allow" and all(h.decision is None for h in decision.hooks)
    assert [(r.task_id, r.status) for r in tracker.runs()] == [("b", "completed"), ("a", "failed")]


async def test_a_stop_without_a_start_still_makes_a_record() -> None:
    engine, tracker, _ = tracked()
    await engine.decide(stop("late", agent_type="z", success=False, status="timed_out"))
    run = tracker.get("late")
    assert run is not None and (run.agent_type, run.status, run.previous) == ("z", "timed_out", [])


def test_the_tracker_keeps_only_the_newest_runs() -> None:
    tracker = SubagentTracker(max_runs=2)
    for task in ("a", "b", "c"):
        tracker.record(SubagentStart(hook_event_name="SubagentStart", task_id=task))
    assert [r.task_id for r in tracker.runs()] == ["b", "c"]


async def test_a_webhook_on_subagent_stop_gets_every_field(make_receiver: Callable[..., Receiver]) -> None:
    receiver = make_receiver()
    registry = Registry(
        [HookSpec(id="orchestration-log", kind="http", event="subagent_stop", options={"url": receiver.url()})]
    )
    event = stop(
        "t7",
        agent_type="reviewer",
        success=True,
        status="completed",
        duration_seconds=1.25,
        trace_id="tr-7",
        result="LGTM",
    )
    await Engine(SETTINGS, registry).decide(event)
    assert json.loads(receiver.requests[0].body) == event
