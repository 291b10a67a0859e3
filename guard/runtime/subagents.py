"""A record of subagent runs, built from ``subagent_start`` / ``subagent_stop`` events.

Every subagent run fires one start and at least one stop, failed, over-budget and
cancelled runs included, so the pair is enough to keep a complete log per run.
When a cancel lands while the stop hooks are still running, a second stop with
``status: cancelled`` arrives for the same ``task_id``: the last stop is the
truth, so it replaces what the earlier one said (which is kept in ``previous``).
"""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass, field
from typing import Any

from guard.core.events.model import Event, SubagentStart, SubagentStop
from guard.core.spec import HookSpec
from guard.runtime.registry import Registry

__all__ = ["SubagentRun", "SubagentTracker"]


@dataclass
class SubagentRun:
    """One subagent run as its events described it; ``status`` is ``running`` until a stop."""

    task_id: str
    agent_type: str | None = None
    task_description: str | None = None
    trace_id: str | None = None
    status: str = "running"
    success: bool | None = None
    duration_seconds: float | None = None
    result: Any = None
    error: str | None = None
    previous: list[str] = field(default_factory=list)  # statuses of stops the last one replaced


class SubagentTracker:
    """Subagent runs by task_id (the newest ``max_runs``), fed by hooks it registers itself."""

    def __init__(self, max_runs: int = 4096) -> None:
        self.max_runs = max_runs
        self._runs: collections.OrderedDict[str, SubagentRun] = collections.OrderedDict()
        self._lock = threading.Lock()

    def record(self, event: Event) -> SubagentRun | None:
        """Fold one event in; returns the run it touched (None for other events)."""
        if not isinstance(event, (SubagentStart, SubagentStop)):
            return None
        with self._lock:
            run = self._runs.get(event.task_id) or SubagentRun(event.task_id)
            self._runs[event.task_id] = run
            self._runs.move_to_end(event.task_id)
            while len(self._runs) > self.max_runs:
                self._runs.popitem(last=False)
            run.agent_type = event.agent_type or run.agent_type
            run.trace_id = event.trace_id or run.trace_id
            if isinstance(event, SubagentStart):
                run.task_description = event.task_description or run.task_description
            else:
                if run.status != "running":
                    run.previous.append(run.status)
                run.status = event.status or ("completed" if event.success else "failed")
                run.success, run.duration_seconds = event.success, event.duration_seconds
                run.result, run.error = event.result, event.error
            return run

    def get(self, task_id: str) -> SubagentRun | None:
        with self._lock:
            return self._runs.get(task_id)

    def runs(self) -> list[SubagentRun]:
        """Every tracked run, least recently updated first."""
        with self._lock:
            return list(self._runs.values())

    async def _observe(self, event: Event) -> None:
        self.record(event)  # observes only: abstains, so it never changes a decision

    def register(self, registry: Registry) -> list[HookSpec]:
        """Add the two observing hooks (subagent_start, subagent_stop) to ``registry``."""
        return [
            registry.add(
                HookSpec(
                    id=f"subagent-tracker:{event}", kind="callable", event=event, source="library", func=self._observe
                )
            )
            for event in ("subagent_start", "subagent_stop")
        ]
