"""Which class implements each hook kind: imported by name when a hook of that kind first runs.

The runtime builds hooks through the kinds' registry instead of importing ``guard.hooks``,
so a no-match or cache-hit event never loads a hook implementation, and the
layers stay one-way. guard's kinds are registered in :mod:`guard.core.kinds`; a
package adds its own under the ``guard.hook_kinds`` entry-point group (a
:class:`~guard.core.kinds.Kind` naming a :class:`~guard.core.hook.Hook` taking
``(spec, ctx)``), read only for a kind guard does not know.
"""

from __future__ import annotations

from guard.core.errors import HookError
from guard.core.hook import Hook, HookContext
from guard.core.kinds import kind_of
from guard.core.spec import HookSpec

__all__ = ["build"]


def build(spec: HookSpec, ctx: HookContext) -> Hook:
    """The runnable hook for ``spec``, from the class its kind names."""
    try:
        cls = kind_of(spec.kind).load("hook")
    except LookupError as exc:
        raise HookError(f"hook {spec.id}: {exc}") from exc
    hook: Hook = cls(spec, ctx)
    return hook
