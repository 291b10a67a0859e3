"""Processes whose imports misbehave on purpose, through a ``sitecustomize`` on PYTHONPATH.

``refuse`` makes modules unimportable, as in a venv without them (``importlib.util.find_spec``
raises, ``import`` fails); ``slow`` makes importing a module take that many seconds longer,
as LiteLLM does on a loaded machine. Either proves what a real ``guard`` process imports.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

_SITECUSTOMIZE = """
import os, sys, time
from importlib.machinery import PathFinder
REFUSED = set(filter(None, os.environ.get("TEST_REFUSE_MODULES", "").split(",")))
SLOW = {k: float(v) for k, v in (item.split("=") for item in filter(None, os.environ.get("TEST_SLOW_MODULES", "").split(",")))}
class SlowLoader:  # sleeps when the module's code runs, not when it is looked up (find_spec stays free)
    def __init__(self, loader, seconds):
        self.loader, self.seconds = loader, seconds
    def __getattr__(self, name):
        return getattr(self.loader, name)
    def create_module(self, spec):
        return self.loader.create_module(spec)
    def exec_module(self, module):
        time.sleep(self.seconds)
        self.loader.exec_module(module)
class Trap:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in REFUSED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        if name in SLOW:
            spec = PathFinder.find_spec(name, path)
            if spec is not None and spec.loader is not None:
                spec.loader = SlowLoader(spec.loader, SLOW[name])
            return spec
        return None
sys.meta_path.insert(0, Trap())
"""


def trapped_env(folder: Path, *, refuse: Sequence[str] = (), slow: dict[str, float] | None = None) -> dict[str, str]:
    """``os.environ`` plus the trap: ``refuse`` cannot be imported, each module in ``slow`` costs its seconds more to import."""
    traps = folder / ".import-traps"
    traps.mkdir(exist_ok=True)
    (traps / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(traps), os.environ.get("PYTHONPATH")])),
        "TEST_REFUSE_MODULES": ",".join(refuse),
        "TEST_SLOW_MODULES": ",".join(f"{name}={seconds}" for name, seconds in (slow or {}).items()),
    }
