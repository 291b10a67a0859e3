"""``guard.Gate``: the gate of the Python API and the SDK integrations, which the warm service may answer for.

A program deciding in-process asks ``guard serve`` as ``guard hook`` does
(``GUARD_SERVER``, ``server.url``, one a session started for this config);
``service=None`` decides only in this process.
"""

from __future__ import annotations

from typing import Any

from guard.runtime import gate
from guard.runtime.deciders import ServiceFactory
from guard.server.decider import ServiceDecider

__all__ = ["Gate"]


class Gate(gate.Gate):
    """A :class:`guard.runtime.gate.Gate` whose service decider is :class:`~guard.server.decider.ServiceDecider` unless ``service`` says otherwise."""

    def __init__(
        self, config: str | None = None, *, service: ServiceFactory | None = ServiceDecider, **options: Any
    ) -> None:
        super().__init__(config, service=service, **options)
