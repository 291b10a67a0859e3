"""Deciding recorded events again through a config, exactly as ``guard hook`` would, minus the side effects.

The replay goes through a :class:`Gate` (the one decision path: failure policy,
merging, stop-loop guard), with three changes that keep a backtest from touching
production: the audit log is off (a replay must not add rows to the log it reads),
no ``guard serve`` is asked (the service would audit the event), and
``fire_and_forget`` webhooks are left out (they never change a decision, and a
backtest must not notify anyone). The decision cache is used as in production:
verdicts a config already paid for are reused, and new ones are kept for when the
config ships.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Sequence

from guard.config.loading import load_config
from guard.core.decision import Decision
from guard.core.errors import GuardError
from guard.core.settings import SERVER_ENV, LoadedConfig
from guard.runtime.deciders import in_process
from guard.runtime.gate import Gate

__all__ = ["replay", "replay_gate"]


def replay_gate(config: str) -> Gate:
    """A gate for ``config`` that writes no audit row, asks no service and fires no webhook; ConfigError when it does not load."""
    if not os.path.isfile(config):
        raise GuardError(f"config {config}: no such file")
    loaded = load_config(config)
    settings = loaded.settings.replace(audit_path=None, server_url=None)
    quiet = LoadedConfig(settings=settings, specs=loaded.specs, sources=loaded.sources)
    env = {name: value for name, value in os.environ.items() if name != SERVER_ENV}
    return Gate(quiet, deciders=in_process(), specs=[s for s in loaded.specs if not s.fire_and_forget], env=env)


async def replay(gate: Gate, payloads: Sequence[dict[str, object]], *, concurrency: int) -> list[Decision]:
    """Each payload's decision under ``gate``, ``concurrency`` at a time, in order."""
    slots = asyncio.Semaphore(concurrency)

    async def one(payload: dict[str, object]) -> Decision:
        async with slots:
            return (await gate.adecide(copy.deepcopy(payload)))[1]

    return list(await asyncio.gather(*(one(p) for p in payloads)))
