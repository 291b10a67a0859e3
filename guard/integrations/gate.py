"""``guard.Gate``: the gate of the Python API and the SDK integrations, which the warm service may answer for.

A program deciding in-process asks ``guard serve`` as ``guard hook`` does
(``GUARD_SERVER``, ``server.url``, one a session started for this config);
``service=False`` decides only in this process. This is the library's builder: it
makes the gate's deciders from the keywords a program passes.
"""

from __future__ import annotations

from collections.abc import Mapping

from guard.core.settings import LoadedConfig
from guard.core.spec import HookSpec
from guard.runtime import gate
from guard.runtime.deciders import in_process
from guard.server.decider import ServiceDecider

__all__ = ["Gate"]


class Gate(gate.Gate):
    """A :class:`guard.runtime.gate.Gate` that asks the fast path, then the warm service (unless ``service=False``), then
    runs the hooks in this process.

    ``config``: a guard.yaml path (default: guard's usual search), read as it is on disk
    unless ``pinned`` (the copy the user trusted: the SDK integrations' default); ``loaded``:
    a config already loaded instead. ``server`` and ``start_service`` go to the service's
    decider (:class:`~guard.server.decider.ServiceDecider`), ``fail_closed`` and
    ``fail_open_config`` to the failure policy; ``specs`` and ``env`` as
    :class:`guard.runtime.gate.Gate` takes them.
    """

    def __init__(
        self,
        config: str | None = None,
        *,
        service: bool = True,
        server: str | None = None,
        start_service: bool = True,
        pinned: bool = False,
        loaded: LoadedConfig | None = None,
        specs: list[HookSpec] | None = None,
        env: Mapping[str, str] | None = None,
        fail_closed: bool = False,
        fail_open_config: bool = False,
    ) -> None:
        fast_path, local = in_process()
        warm = (ServiceDecider(server, start_service=start_service),) if service else ()
        super().__init__(
            gate.ConfigFile(config, pinned=pinned) if loaded is None else loaded,
            deciders=(fast_path, *warm, local),
            specs=specs,
            env=env,
            policy=gate.FailurePolicy(fail_closed=fail_closed, fail_open_config=fail_open_config),
        )
