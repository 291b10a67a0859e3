"""Named extension points that third-party packages fill through entry points: hook kinds, clients, and the rest.

Each seam maps a name to a ``"module:attribute"`` target (or a bare ``"module"``).
guard's built-ins register the same way plugins are declared, so looking up a
built-in imports only its own module. The installed distributions' entry points
(``importlib.metadata``, several milliseconds) are read only when a name is not
known, once per process: ``guard hook`` with guard's own kinds and clients never
reads them. A plugin cannot replace a built-in: a name already registered wins.

Standard library only: the ``guard hook`` fast path looks its client up here.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from guard.core.errors import UnknownName

__all__ = ["Seam"]


class Seam:
    """One extension point: the names registered for it and the entry-point group plugins add theirs under."""

    def __init__(self, group: str, what: str, builtins: Mapping[str, str]) -> None:
        self.group = group
        self.what = what  # "hook kind", "client": for messages
        self.builtins = frozenset(builtins)
        self._targets: dict[str, str] = {}
        self._plugins_read = False
        for name, target in builtins.items():
            self.register(name, target)

    def register(self, name: str, target: str) -> None:
        """Make ``name`` resolve to ``target`` (``"module:attribute"`` or ``"module"``); the first registration stands."""
        self._targets.setdefault(name, target)

    def known(self, name: str) -> bool:
        """Whether ``name`` is registered, reading the plugins' entry points first when it is not yet."""
        if name not in self._targets and not self._plugins_read:
            self._read_plugins()
        return name in self._targets

    def names(self) -> tuple[str, ...]:
        """Every registered name, plugins included (reads the entry points)."""
        if not self._plugins_read:
            self._read_plugins()
        return tuple(self._targets)

    def load(self, name: str) -> object:
        """The object ``name`` stands for; :class:`~guard.core.errors.UnknownName` naming the choices when nothing registers it."""
        if not self.known(name):
            raise UnknownName(
                f"unknown {self.what} {name!r}; choose one of {', '.join(self._targets)}, "
                f"or install a plugin that adds it to the entry-point group {self.group!r}"
            )
        module_name, _, attribute = self._targets[name].partition(":")
        target: object = importlib.import_module(module_name)
        for part in filter(None, attribute.split(".")):
            target = getattr(target, part)
        return target

    def _read_plugins(self) -> None:
        from importlib.metadata import entry_points

        self._plugins_read = True
        for entry in entry_points(group=self.group):
            self.register(entry.name, entry.value)
