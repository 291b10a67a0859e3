"""The hook-kind seams: which class runs a kind, and which options model a config entry of that kind is read with.

Two registries, because they are needed in different processes: a config is read
(``guard check``, compiling the snapshot) where no hook runs, and a hook runs from
the compiled snapshot where no config is read. A kind's class may import a model
client or a subprocess runner; its options model imports only pydantic.

guard's kinds register here exactly as a plugin's do through its entry points::

    [project.entry-points."guard.hook_kinds"]
    deny_words = "guard_example_plugin.kind:DenyWordsHook"
    [project.entry-points."guard.hook_options"]
    deny_words = "guard_example_plugin.kind:DenyWordsOptions"

Standard library only: the runtime looks a kind up here on the ``guard hook`` path.
"""

from __future__ import annotations

from guard.core.plugins import Seam

__all__ = ["KINDS", "OPTIONS"]

#: kind → a :class:`~guard.core.hook.Hook` class taking ``(spec, ctx)``
KINDS = Seam("guard.hook_kinds", "hook kind", {
    "smart": "guard.hooks.smart:SmartHook",
    "command": "guard.hooks.command:CommandHook",
    "http": "guard.hooks.http:HttpHook",
    "callable": "guard.hooks.callable:CallableHook",
    "protect": "guard.hooks.protect:ProtectHook",
})

#: kind → the pydantic model of the keys a config entry of that kind carries besides the common ones (id, matcher,
#: tools, timeout, failure_mode, mode, final). A kind with no model here takes no keys of its own.
OPTIONS = Seam("guard.hook_options", "hook kind options", {
    "smart": "guard.config.kind_options:SmartOptions",
    "command": "guard.config.kind_options:CommandOptions",
    "http": "guard.config.kind_options:HttpOptions",
    "callable": "guard.config.kind_options:CallableOptions",
})
