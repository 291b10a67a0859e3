"""HookSpec: what one configured hook is, independent of where it was declared.

Standard library only, so the registry and the ``guard hook`` fast path can match
events against hooks without loading pydantic or any hook implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal, Self, get_args

from guard.core.kinds import registered
from guard.core.record import FrozenRecord

__all__ = [
    "DEPTHS",
    "EXTERNAL_SOURCES",
    "Depth",
    "FailureMode",
    "HookKind",
    "HookMode",
    "HookSpec",
    "KindOptions",
    "OnAsk",
    "ProtectSettings",
    "SmartSettings",
    "Source",
    "TypedOptions",
]

#: guard's own hook kinds, the names :data:`guard.core.kinds.KINDS` registers first (a plugin's kind is a ``str``).
HookKind = Literal["smart", "command", "http", "callable", "protect"]
FailureMode = Literal["fail_open", "fail_closed"]
#: Which tier judges a smart hook: ``quick``, ``thorough``, or ``auto`` (quick, then thorough when unsure).
Depth = Literal["quick", "thorough", "auto"]
DEPTHS: tuple[str, ...] = get_args(Depth)
#: ``enforce``: the hook's verdict counts; ``shadow``: judged, cached and audited, never part of the answer.
HookMode = Literal["enforce", "shadow"]
#: What the hook's ``ask`` becomes: the client's own question, or a request a person answers (:mod:`guard.approvals`).
OnAsk = Literal["client", "approval"]
#: Where a hook was declared: its own config, a client's settings.json, a skill, a plugin, user config, Python, guard itself,
#: or the signed org policy (docs/org-policy.md), whose hooks nothing in a project or user config removes.
Source = Literal["config", "settings", "skill", "plugin", "user", "library", "builtin", "org"]

#: Sources whose hooks get the stricter command analysis and fail closed in standalone mode.
EXTERNAL_SOURCES = frozenset({"skill", "plugin", "user"})


def _frozen(value: Any) -> Any:
    """A hashable stand-in for a JSON value (mappings and lists as tuples), for hashing options."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(key), _frozen(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    return value


class KindOptions(Mapping[str, Any]):
    """A kind's own options, as its options model validated them (JSON values): read-only, hashed by value.

    A plugin's kind reads its settings here (``spec.options["words"]``); the compiled
    snapshot stores them as they are, so running a hook never needs the options model.
    """

    __slots__ = ("_values",)
    _values: dict[str, Any]

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "_values", dict(values or {}))

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Self:
        """The options ``values`` (a snapshot's JSON, a changed copy's) stand for."""
        return cls(values)

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (an option substituted from the environment, a variant's model)."""
        return self.from_values({**self._values, **changes})

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __hash__(self) -> int:
        return hash(_frozen(self._values))

    def __eq__(self, other: object) -> bool:
        return dict(self) == dict(other) if isinstance(other, Mapping) else NotImplemented

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot assign {name!r} (use .replace())")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle rebuild through from_values (attributes cannot be set)
        return (self.from_values, (self._values,))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._values!r})"


class TypedOptions(KindOptions):
    """The options of a kind that names them (:attr:`guard.core.kinds.Kind.typed`): each key in ``__slots__`` is also a
    typed attribute, so guard's code reads ``settings.depth`` where a plugin's reads ``spec.options["words"]``.

    ``__init__`` takes the fields as keywords (the snapshot's JSON lists read back as tuples). Equal only to a value of
    its own type, and hashed by its fields as they are: the self-protection rule's hundred paths hash in microseconds.
    """

    __slots__: tuple[str, ...] = ()

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Self:
        return cls(**values)

    @classmethod
    def of(cls, spec: HookSpec) -> Self:
        """``spec``'s options, which a hook of this kind holds as this type; TypeError naming the hook otherwise."""
        if not isinstance(spec.options, cls):
            raise TypeError(
                f"hook {spec.id!r} ({spec.kind}): its options are not {cls.__name__} (got {spec.options!r})"
            )
        return spec.options

    def _set(self, values: dict[str, Any]) -> None:
        """Set every field from ``values`` (``__init__`` passes ``locals()``): attributes and the mapping alike."""
        fields = {name: values[name] for name in self.__slots__}
        KindOptions.__init__(self, fields)
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __hash__(self) -> int:  # its fields are hashable as they are (tuples, not lists): no JSON walk
        return hash((type(self), *self._values.values()))

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values == other._values if isinstance(other, KindOptions) else False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{name}={value!r}' for name, value in self.items())})"


def _pairs(pairs: Iterable[Iterable[str]]) -> tuple[tuple[str, str], ...]:
    return tuple((label, path) for label, path in pairs)


class SmartSettings(TypedOptions):
    """What a smart hook judges by, and what its verdicts are cached and skipped by: built by the config pass from
    :class:`guard.config.kind_options.SmartOptions`, held in ``spec.options``, stored in the compiled snapshot.

    ``rule`` the plain-English rule, or ``prompt`` a user's own template ($ARGUMENTS) from Claude/SKILL prompt hooks;
    ``depth`` quick | thorough | auto; ``model`` the hook's own model (else the tier's); ``confidence_threshold`` below
    which auto asks the thorough tier; ``cache_ignore`` extra payload fields left out of the cache key, ``cache_keep``
    volatile fields kept in it after all; ``context`` event | request (+ the user's latest requests) | session (+
    requests and recent actions); ``skip_read_only`` the rule says a call proven to only read cannot break it, so such
    calls are allowed without a model (:mod:`guard.judge.read_only_lane`; ``paths`` then holds what such a read may not
    name, the self-protection rule's, added on every load); ``skip_project_writes`` says the same of a call proven to
    write only plain files inside the project with reading programs (and includes the reads); ``judge_together``
    (default true) lets the rule be judged in one model request with the other smart rules that apply to the same call
    at the same depth (:mod:`guard.judge.together`).
    """

    __slots__ = (
        "rule",
        "prompt",
        "depth",
        "model",
        "confidence_threshold",
        "cache_ignore",
        "cache_keep",
        "context",
        "skip_read_only",
        "skip_project_writes",
        "judge_together",
        "paths",
    )
    rule: str | None
    prompt: str | None
    depth: str
    model: str | None
    confidence_threshold: float
    cache_ignore: tuple[str, ...]
    cache_keep: tuple[str, ...]
    context: str
    skip_read_only: bool
    skip_project_writes: bool
    judge_together: bool
    paths: tuple[tuple[str, str], ...]

    def __init__(
        self,
        rule: str | None = None,
        prompt: str | None = None,
        depth: str = "auto",
        model: str | None = None,
        confidence_threshold: float = 0.7,
        cache_ignore: Iterable[str] = (),
        cache_keep: Iterable[str] = (),
        context: str = "event",
        skip_read_only: bool = False,
        skip_project_writes: bool = False,
        judge_together: bool = True,
        paths: Iterable[Iterable[str]] = (),
    ) -> None:
        cache_ignore, cache_keep, paths = tuple(cache_ignore), tuple(cache_keep), _pairs(paths)
        self._set(locals())

    @property
    def lane(self) -> str | None:
        """What the rule says cannot break it, decided without a model: ``read_only``, ``project_writes`` (reads too), or None."""
        return "project_writes" if self.skip_project_writes else ("read_only" if self.skip_read_only else None)


class ProtectSettings(TypedOptions):
    """The self-protection rule's: ``paths``, the (label, absolute file or folder) pairs no tool call may change."""

    __slots__ = ("paths",)
    paths: tuple[tuple[str, str], ...]

    def __init__(self, paths: Iterable[Iterable[str]] = ()) -> None:
        paths = _pairs(paths)
        self._set(locals())


class HookSpec(FrozenRecord):
    """One hook: its kind, the event and tools it applies to, and its kind's settings.

    A frozen value like the dataclass it replaces (equal and hashed by every field
    but ``func``; :meth:`replace` makes changed copies).

    ``kind`` is one of guard's :data:`HookKind` or a plugin's kind (:mod:`guard.core.kinds`);
    ``options`` the kind's own settings as its options model validated them (what a
    plugin's kind reads, and guard's: http's ``url``, ``secret``, ``headers``,
    ``fire_and_forget``, command's ``command``, callable's ``callable``), or the typed value a kind names for them
    (:class:`TypedOptions`: smart's :class:`SmartSettings`, the self-protection rule's :class:`ProtectSettings`).
    Fields: ``event`` is the canonical event name; ``matcher`` is a Claude Code
    matcher on tool_name; ``tools`` fnmatch globs on tool_name; ``timeout`` seconds
    (1..600); ``origin`` the file (and key path) it was declared in, for messages;
    ``workdir`` the declaring config's folder (where a command hook's relative command runs).
    Callable: ``func`` the function a library registered (the config's
    ``callable`` option names one as "module:function"). ``scripts``: the
    (absolute path, sha256) of each script a command hook runs, as the user trusted
    them (``guard trust``; empty for a hook that runs none); None when the config was read
    from disk untrusted (``guard check``), so nothing is compared before the command runs.
    ``mode``: enforce, or shadow (judged and recorded, never changes the answer).
    ``final``: whether this hook's deny is final (the agent must not try another
    form; None: protection and deterministic hooks are, a model's judgement is not).
    ``on_ask``: ``approval`` turns this hook's ask into a request a person answers
    (``guard approve``, ``guard view``) while the call waits; ``client`` leaves it to the client.
    """

    __slots__ = (
        "id",
        "kind",
        "event",
        "matcher",
        "tools",
        "timeout",
        "failure_mode",
        "source",
        "origin",
        "workdir",
        "func",
        "scripts",
        "mode",
        "final",
        "options",
        "on_ask",
    )
    id: str
    kind: str
    event: str
    matcher: str | None
    tools: tuple[str, ...] | None
    timeout: float
    failure_mode: FailureMode
    source: Source
    origin: str | None
    workdir: str | None
    func: Callable[..., Any] | None
    scripts: tuple[tuple[str, str], ...] | None
    mode: HookMode
    final: bool | None
    options: KindOptions
    on_ask: OnAsk

    def __init__(
        self,
        id: str,
        kind: str,
        event: str,
        matcher: str | None = None,
        tools: tuple[str, ...] | None = None,
        timeout: float = 10.0,
        failure_mode: FailureMode = "fail_open",
        source: Source = "config",
        origin: str | None = None,
        workdir: str | None = None,
        func: Callable[..., Any] | None = None,
        scripts: tuple[tuple[str, str], ...] | None = None,
        mode: HookMode = "enforce",
        final: bool | None = None,
        options: Mapping[str, Any] | None = None,
        on_ask: OnAsk = "client",
    ) -> None:
        options = options if isinstance(options, KindOptions) else KindOptions(options)
        self._assign(locals())

    def _fields(self) -> tuple[str, ...]:
        return _COMPARED  # equal, hashed and shown without its callable

    @property
    def external(self) -> bool:
        """Declared by a skill, plugin or user config: stricter checks apply."""
        return self.source in EXTERNAL_SOURCES

    @property
    def fire_and_forget(self) -> bool:
        """It only notifies (the ``fire_and_forget`` option, an http hook's or any kind's): never re-run on a rewritten input, nor replayed."""
        return bool(self.options.get("fire_and_forget"))

    @property
    def shadow(self) -> bool:
        """Judged and recorded, but never part of the answer."""
        return self.mode == "shadow"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for the compiled config snapshot (callables by target name only).

        Typed options are marked ``typed``: :meth:`from_dict` reads them back through the kind, which names their type.
        """
        data = {name: getattr(self, name) for name in _COMPARED}
        if data["tools"] is not None:
            data["tools"] = list(data["tools"])
        if data["scripts"] is not None:
            data["scripts"] = [list(pair) for pair in data["scripts"]]
        if self.options:  # left out when empty: a hook without options keeps its form
            data["options"] = dict(self.options)
            if isinstance(self.options, TypedOptions):
                data["typed"] = True
        else:
            del data["options"]
        if self.on_ask == "client":  # likewise: a spec that does not ask for approvals keeps its form
            del data["on_ask"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HookSpec:
        data = dict(data)
        if data.get("tools") is not None:
            data["tools"] = tuple(data["tools"])
        if data.get("scripts") is not None:
            data["scripts"] = tuple(tuple(pair) for pair in data["scripts"])
        kind = registered(data["kind"]) if data.pop("typed", False) else None
        if kind is not None and kind.typed is not None:
            data["options"] = kind.load("typed").from_values(data.get("options", {}))
        return cls(**data)


_COMPARED = tuple(name for name in HookSpec.__slots__ if name != "func")
