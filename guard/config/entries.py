"""One hook entry → one HookSpec, whichever file declared it.

guard.yaml, a Claude Code ``settings.json`` and SKILL.md frontmatter all end
here, so a hook means the same thing wherever it is written. Validation errors
name the file and the key path (``guard.yaml: hooks.PreToolUse[1].timeout``).

An entry is the keys every hook has plus its kind's options
(:mod:`guard.config.kind_options`). ``kind: NAME`` names the kind, guard's own or
a plugin's (:mod:`guard.core.kinds`), and the kind's options model reads the rest;
without it the kind follows from the keys, as configs have always said it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from pydantic import BaseModel, ValidationError, model_validator

from guard.config.kind_options import (
    CallableFields,
    CommandFields,
    CommonFields,
    HttpFields,
    OptionFields,
    SmartFields,
)
from guard.config.typos import error_message
from guard.core.errors import ConfigError, UnknownName
from guard.core.kinds import KINDS, kind_of, registered
from guard.core.spec import EXTERNAL_SOURCES, FailureMode, HookKind, HookSpec, Source

__all__ = ["HookEntry", "spec_from_entry"]

#: The keys every hook has, whatever its kind (``kind`` names it).
COMMON_KEYS = frozenset({*CommonFields.model_fields, "kind"})


class HookEntry(CallableFields, HttpFields, CommandFields, SmartFields, CommonFields):  # fields listed common first
    """An entry without ``kind:``: every built-in kind's keys, exactly one of rule / command / url / callable / prompt."""

    @model_validator(mode="after")
    def _one_kind(self) -> HookEntry:
        kinds = [k for k in ("rule", "prompt", "command", "script", "url", "callable") if getattr(self, k)]
        if len(kinds) != 1:
            found = ", ".join(kinds) or "none"
            raise ValueError(
                f"a hook needs exactly one of rule, command, url, callable (or prompt / script); found {found}"
            )
        for lane in ("skip_read_only", "skip_project_writes"):
            if getattr(self, lane) and not (self.rule or self.prompt):
                raise ValueError(f"{lane} applies to a rule (or prompt): only a judged hook can skip the model")
        return self

    def options(self) -> Mapping[str, Any]:
        """The spec's options: the keys of its kind, as its hook reads them."""
        return _OPTION_FIELDS[self.kind()].own_options(self)

    def kind(self) -> HookKind:
        if self.rule or self.prompt:
            return "smart"
        if self.command or self.script:
            return "command"
        return "http" if self.url else "callable"


#: the keys each of guard's kinds reads from an entry without ``kind:``
_OPTION_FIELDS: dict[str, type[OptionFields]] = {
    "smart": SmartFields,
    "command": CommandFields,
    "http": HttpFields,
    "callable": CallableFields,
}


def _key_path(loc: tuple[Any, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def _validated(model: type[BaseModel], data: dict[str, Any], file: str, key: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(error_message(first, model), file=file, key=key + _key_path(first["loc"])) from exc


def _named_kind(entry: dict[str, Any], file: str, key: str) -> tuple[CommonFields, str, BaseModel | None]:
    """An entry with ``kind: NAME``: its common keys, the kind, and its options as the kind's model read them.

    Only a name guard does not know reads the installed plugins' entry points.
    """
    kind = entry["kind"]
    if not isinstance(kind, str) or not KINDS.known(kind):
        _unknown_kind(kind, file, key)
    try:
        found = kind_of(kind)
    except LookupError as exc:  # a plugin's entry point that names no Kind
        raise ConfigError(str(exc), file=file, key=f"{key}.kind") from exc
    if not found.written:  # guard adds it itself (the self-protection rule)
        _unknown_kind(kind, file, key)
    common = _validated(CommonFields, {k: v for k, v in entry.items() if k in COMMON_KEYS and k != "kind"}, file, key)
    options = {k: v for k, v in entry.items() if k not in COMMON_KEYS}
    model = found.load("options") if found.options is not None else None
    if model is None:
        if options:
            raise ConfigError(
                f"unknown key: hook kind {kind!r} takes no options", file=file, key=f"{key}.{next(iter(options))}"
            )
        return common, kind, None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise ConfigError(
            f"hook kind {kind!r}: its options ({found.options}) must be a pydantic model, got {model!r}",
            file=file,
            key=f"{key}.kind",
        )
    import difflib  # a common key mistyped reads as an option the kind does not have

    for name in options.keys() - model.model_fields.keys():
        close = difflib.get_close_matches(name, COMMON_KEYS, n=1, cutoff=0.6)
        if close:
            raise ConfigError(f"unknown key (did you mean {close[0]!r}?)", file=file, key=f"{key}.{name}")
    validated: BaseModel = _validated(model, options, file, key)
    return common, kind, validated


def _unknown_kind(kind: object, file: str, key: str) -> NoReturn:
    """Refuse ``kind:``, naming the kinds a config may declare (reading the installed plugins' entry points)."""
    choices = ", ".join(name for name in KINDS.names() if (found := registered(name)) is None or found.written)
    raise UnknownName(
        f"unknown hook kind {kind!r}; choose one of {choices}, or install a plugin that adds it to "
        f"the entry-point group {KINDS.group!r}",
        file=file,
        key=f"{key}.kind",
    )


def spec_from_entry(
    entry: Any, *, event: str, source: Source, origin: str, index: int, workdir: str | None = None
) -> HookSpec:
    """Validate one hook entry declared at ``origin`` (``file: key.path``) and build its spec.

    ``workdir`` is the folder the declaring file belongs to; a command hook runs
    there, so ``sh hooks/check.sh`` means the script beside that file whatever
    the event says its cwd is. Hooks from skills, plugins and user config fail
    closed unless they say otherwise.
    """
    file, _, key = origin.partition(": ")
    if not isinstance(entry, dict):
        raise ConfigError(f"a hook entry must be a mapping, got {type(entry).__name__}", file=file, key=key)
    common: CommonFields
    options: Mapping[str, Any] = {}
    if "kind" in entry:
        common, kind, validated = _named_kind(entry, file, key)
        if isinstance(validated, OptionFields):  # guard's own, in the form its hook reads
            options = validated.own_options()
        elif validated is not None:  # a plugin's, as its model validated them
            options = validated.model_dump(mode="json")
    else:
        parsed = _validated(HookEntry, entry, file, key)
        common, kind, options = parsed, parsed.kind(), parsed.options()
    tools = common.tools
    default_failure: FailureMode = "fail_closed" if source in EXTERNAL_SOURCES else "fail_open"
    return HookSpec(
        id=common.id or f"{event}[{index}]",
        kind=kind,
        event=event,
        matcher=common.matcher,
        tools=(tools,) if isinstance(tools, str) else (tuple(tools) if tools else None),
        timeout=common.timeout,
        failure_mode=common.failure_mode or default_failure,
        source=source,
        origin=origin,
        workdir=workdir,
        mode=common.mode,
        final=common.final,
        options=options,
        on_ask=common.on_ask,
    )
