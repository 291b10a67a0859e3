"""Hook kinds: one :class:`Kind` per kind, in one registry that guard's kinds and a plugin's share.

A kind says which class runs it, which pydantic model reads a config entry's own
keys, and what the ``guard hook`` fast path may do with it: reach a verdict
without the engine (``verdict``), find one in the decision cache
(``cached_verdict``), or have guard keep its verdicts there (``cache``). Each is a
``"module:attribute"`` imported on first use, so a kind's model client or pydantic
loads only where it is needed: a config is read (``guard check``, compiling the
snapshot) where no hook runs, and a hook runs from the snapshot where no config
is read.

A package adds a kind under the ``guard.hook_kinds`` entry-point group, naming
its :class:`Kind`, exactly as guard's own are registered here::

    [project.entry-points."guard.hook_kinds"]
    deny_words = "guard_example_plugin:DENY_WORDS"

Standard library only: the runtime looks a kind up here on the ``guard hook`` path.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from guard.core.plugins import Seam

if TYPE_CHECKING:
    from guard.core.spec import HookSpec

__all__ = ["KINDS", "Kind", "judged", "kind_of", "quiet", "registered", "shown"]


class Kind:
    """One hook kind: its hook class, its options model, and what it allows the fast path and the decision cache."""

    __slots__ = (
        "cache",
        "cached_verdict",
        "expanded",
        "files",
        "hook",
        "judged",
        "name",
        "options",
        "quiet",
        "script_folders",
        "shown",
        "typed",
        "verdict",
        "written",
    )

    def __init__(
        self,
        name: str,
        hook: str,
        *,
        options: str | None = None,
        verdict: str | None = None,
        cached_verdict: str | None = None,
        cache: bool = False,
        judged: bool = False,
        expanded: tuple[str, ...] = (),
        shown: str | tuple[str, ...] | None = None,
        files: str | None = None,
        typed: str | None = None,
        written: bool = True,
        script_folders: bool = False,
        quiet: bool = False,
    ) -> None:
        self.name = name
        #: ``"module:Class"``: a :class:`~guard.core.hook.Hook` taking ``(spec, ctx)``
        self.hook = hook
        #: ``"module:Model"``: the pydantic model of the keys a config entry of this kind carries besides the common ones
        #: (id, matcher, tools, timeout, failure_mode, mode, final, on_ask); None: it takes no keys of its own
        self.options = options
        #: ``"module:function"`` ``(spec, payload, env) -> HookResult | None``: a verdict reached on the fast path, without
        #: the engine, an event loop or a model (None from it: the hook must run). It must be cheap and never wait.
        self.verdict = verdict
        #: ``"module:function"`` ``(spec, settings, payload, cache) -> HookResult | None``: this kind's verdict for the
        #: call as the decision cache holds it (the fast path asks before it runs the hook)
        self.cached_verdict = cached_verdict or ("guard.judge.keys:kept_verdict" if cache else None)
        #: whether guard keeps each verdict of this kind in the decision cache, keyed by the kind, its options and the
        #: payload without volatile fields, and answers the same call from there (a plugin's opt-in)
        self.cache = cache
        #: whether a model judges it: ``guard serve`` warms for it, ``guard eval`` and ``guard doctor`` look at its model
        self.judged = judged
        #: the options whose strings (a list's items, a mapping's values) take ``${VAR}`` / ``${VAR:-default}``, substituted
        #: from the environment each time the config loads (secrets, URLs): the compiled snapshot keeps them as written
        self.expanded = expanded
        #: the option messages show as what a hook of this kind runs (``guard check``'s deciding rule, ``guard backtest``),
        #: or several, the first that is set
        self.shown = (shown,) if isinstance(shown, str) else (shown or ())
        #: ``"module:function"`` ``(spec, workdir) -> list[str]``: the project files a hook runs (a command's scripts, a
        #: callable's module), found now: ``guard trust`` pins them (a hook whose file changed since is not run) and
        #: self-protection keeps the agent from changing them
        self.files = files
        #: ``"module:Class"``: the :class:`~guard.core.spec.TypedOptions` a spec of this kind holds its options in
        #: (typed attributes besides the mapping; the compiled snapshot reads them back as it); None: a plain mapping
        self.typed = typed
        #: whether a config may declare hooks of this kind (guard adds the self-protection rule itself)
        self.written = written
        #: whether the folders of the files it runs are protected with them: a script runs its neighbours unnamed
        self.script_folders = script_folders
        #: it runs on every call and speaks only to refuse: a result of it without a decision is not counted among the
        #: hooks that answered (a merged reason names its hook only when several did; ``guard view`` leaves it out)
        self.quiet = quiet

    def load(self, part: str) -> Any:
        """The object named by the attribute ``part`` (``"hook"``, ``"options"``, ``"verdict"``, ``"cached_verdict"``, ``"files"``,
        ``"typed"``)."""
        module_name, _, attribute = str(getattr(self, part)).partition(":")
        return getattr(importlib.import_module(module_name), attribute)

    @property
    def fast(self) -> bool:
        """Whether the fast path can answer for it (a verdict without the engine, or one the cache holds)."""
        return self.verdict is not None or self.cached_verdict is not None

    def __repr__(self) -> str:
        return f"Kind({self.name!r})"


SMART = Kind(
    "smart",
    "guard.hooks.smart:SmartHook",
    options="guard.config.kind_options:SmartOptions",
    verdict="guard.judge.keys:lane_verdict",
    cached_verdict="guard.judge.keys:cached_verdict",
    judged=True,
    expanded=("model",),
    shown=("rule", "prompt"),
    typed="guard.core.spec:SmartSettings",
)
COMMAND = Kind(
    "command",
    "guard.hooks.command:CommandHook",
    options="guard.config.kind_options:CommandOptions",
    shown="command",
    files="guard.config.hook_scripts:command_files",
    script_folders=True,
)
HTTP = Kind(
    "http",
    "guard.hooks.http:HttpHook",
    options="guard.config.kind_options:HttpOptions",
    expanded=("url", "secret", "headers"),
    shown="url",
)
CALLABLE = Kind(
    "callable",
    "guard.hooks.callable:CallableHook",
    options="guard.config.kind_options:CallableOptions",
    shown="callable",
    files="guard.config.hook_scripts:callable_files",
)
#: guard's self-protection rule: guard adds it, a config cannot name it
PROTECT = Kind(
    "protect",
    "guard.hooks.protect:ProtectHook",
    verdict="guard.hooks.protect:judge",
    typed="guard.core.spec:ProtectSettings",
    written=False,
    quiet=True,
)

#: kind name → its :class:`Kind`
KINDS = Seam(
    "guard.hook_kinds",
    "hook kind",
    {kind.name: f"guard.core.kinds:{kind.name.upper()}" for kind in (SMART, COMMAND, HTTP, CALLABLE, PROTECT)},
)


def kind_of(name: str) -> Kind:
    """The :class:`Kind` registered as ``name``; LookupError naming the choices (and the entry-point group) otherwise."""
    kind = KINDS.load(name)
    if not isinstance(kind, Kind):
        raise LookupError(
            f"hook kind {name!r}: the entry point {KINDS.group!r} names {kind!r}, not a guard.core.kinds.Kind"
        )
    return kind


def judged(name: str) -> bool:
    """Whether a model judges hooks of kind ``name`` (False for a name no installed kind has: its hook fails when it runs)."""
    kind = registered(name)
    return kind is not None and kind.judged


def quiet(name: str) -> bool:
    """Whether hooks of kind ``name`` speak only to refuse (:attr:`Kind.quiet`: the self-protection rule)."""
    kind = registered(name)
    return kind is not None and kind.quiet


def registered(name: str) -> Kind | None:
    """The :class:`Kind` registered as ``name``, or None when nothing registers one (its hook fails when it runs)."""
    try:
        return kind_of(name) if KINDS.known(name) else None
    except (LookupError, ImportError, AttributeError):
        return None


def shown(spec: HookSpec) -> str | None:
    """What ``spec`` runs as messages show it: the option its kind names ``shown`` (a rule, a command, a URL, a callable's
    name)."""
    kind = registered(spec.kind)
    values = (spec.options.get(name) for name in kind.shown) if kind is not None else ()
    return next((value for value in values if isinstance(value, str) and value), None)
