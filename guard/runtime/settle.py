"""What every decision gets last, whoever made it (a gate, or code that holds an engine): the stop-loop guard, the
explanation of a block, and whether it earns an audit row."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from guard.core.decision import Decision, guard_stop_loop
from guard.core.explanation import explain
from guard.core.spec import HookSpec

__all__ = ["audited", "settle"]


def settle(decision: Decision, event: str, payload: dict[str, Any], specs: Iterable[HookSpec]) -> Decision:
    """``decision`` after the stop-loop guard, a deny or ask naming the rules of ``specs`` that made it."""
    decision = guard_stop_loop(decision, event, payload)
    if decision.decision != "allow":
        explain(decision, specs)
    return decision


def audited(decision: Decision) -> bool:
    """Whether ``decision`` is written to the audit log: a hook judged it, or guard could not (a failure is never silent)."""
    return bool(decision.hooks) or "failure" in decision.details
