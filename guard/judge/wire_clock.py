"""How long a judge call spent on the wire (request sent → answer read), measured where the bytes move.

A comparison of judges times the providers, not the clients: building the request,
parsing the answer and LiteLLM's per-call logging are the same work for every
provider, and on a busy machine they queue behind each other. The ``openai/`` route
times its HTTP exchange itself; LiteLLM's HTTP transport (wrapped by
:func:`guard.judge.reply_limit.cap_litellm`) reports each exchange here, and the
LiteLLM transport collects them for the reply (:func:`measuring`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["measuring", "record"]

_spent: ContextVar[list[float] | None] = ContextVar("guard_wire_seconds", default=None)


@contextmanager
def measuring() -> Iterator[list[float]]:
    """Collect the seconds of every HTTP exchange made inside the block (in this task and the tasks it awaits)."""
    spent: list[float] = []
    token = _spent.set(spent)
    try:
        yield spent
    finally:
        _spent.reset(token)


def record(seconds: float) -> None:
    """One exchange's seconds, for whoever is :func:`measuring` (nobody: dropped)."""
    spent = _spent.get()
    if spent is not None:
        spent.append(seconds)
