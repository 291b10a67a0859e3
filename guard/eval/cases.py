"""What the judge sees of a case, and which hooks judge it.

The judge gets an event built from the case (event name, tool name, tool input, ``cwd``,
``context``, and the case's ``files`` as the current state of the files a write replaces; ``prompt`` too on user-turn cases; ``session`` on the field the gate puts
the session store's context on, so session-aware rules see it through the same view
builder as in production) and never the label, tags, notes or source. A case's
``rule`` text becomes a session-aware rule when the case carries a session.
Which hooks: ``rule`` naming a configured hook id = that hook alone; any other
``rule`` text = one smart hook with that rule; no ``rule`` = every configured hook
for the case's event and tool, exactly as ``guard hook`` would run them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guard.core.errors import DatasetError, GuardError
from guard.core.events.model import Event
from guard.core.kinds import judged
from guard.core.matching import compile_filter
from guard.core.session import FILES_FIELD, SESSION_FIELD
from guard.core.spec import HookSpec, SmartSettings
from guard.datasets import Case
from guard.datasets.check import CheckReport, read_rows
from guard.eval.schema import DatasetInfo
from guard.runtime.registry import Registry

__all__ = [
    "RULE_TIMEOUT",
    "SUMMARY_CHARS",
    "JudgedCase",
    "build_event",
    "companions",
    "input_summary",
    "load_datasets",
    "rule_name",
    "select_hooks",
]

#: Timeout of the smart hook made from a case's rule text (a thorough tier may need it).
RULE_TIMEOUT = 60.0
#: How much of a call's input a report shows (the whole input is in the dataset or the audit log).
SUMMARY_CHARS = 160
#: The tool input field a reviewer recognises a call by, in order of preference.
_SHOWN_FIELDS = ("command", "file_path", "url", "path", "pattern", "query", "prompt", "last_assistant_message")


def _shortened(text: str, limit: int = SUMMARY_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def input_summary(payload: dict[str, Any]) -> str:
    """The part of an event a reviewer recognises it by: the command, path, URL or prompt, shortened."""
    tool_input = payload.get("tool_input")
    if isinstance(tool_input, dict) and tool_input:
        shown = next((tool_input[k] for k in _SHOWN_FIELDS if isinstance(tool_input.get(k), str)), None)
        return _shortened(shown if shown is not None else json.dumps(tool_input, ensure_ascii=False))
    return _shortened(str(payload.get("prompt") or payload.get("hook_event_name") or ""))


def rule_name(spec: HookSpec) -> str:
    """How a report names a hook: its id, or for a dataset case's own rule text, that text (shortened)."""
    return f'"{_shortened(SmartSettings.of(spec).rule or "", 80)}"' if spec.origin == "dataset rule" else spec.id


@dataclass(frozen=True)
class JudgedCase:
    """A case ready to judge: its event and the hooks that judge it."""

    dataset: str
    case: Case
    event: Event
    specs: tuple[HookSpec, ...]
    #: The config's other smart rules on the same call: judged with the case's own under ``--judging together``.
    companions: tuple[HookSpec, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.case.id}"

    @property
    def summary(self) -> str:
        """The input a report shows for this case."""
        return input_summary(
            {
                "tool_input": self.case.tool_input,
                "prompt": (self.case.model_extra or {}).get("prompt"),
                "hook_event_name": self.case.event,
            }
        )

    @property
    def model_rules(self) -> str:
        """The hooks that ask a model about it (only they need a recording), as a report names them."""
        asked = [spec for spec in self.specs if judged(spec.kind)] or list(self.specs)
        return ", ".join(rule_name(spec) for spec in asked)


def build_event(case: Case) -> Event:
    """The event the hooks see; only fields a client would send, never the answer."""
    data: dict[str, Any] = {"hook_event_name": case.event}
    if case.cwd is not None:
        data["cwd"] = case.cwd
    if case.tool_name is not None:
        data["tool_name"] = case.tool_name
        data["tool_input"] = dict(case.tool_input)
        data[FILES_FIELD] = dict(case.files or {})  # the case's world: the judge's view never reads this machine's disk
    else:
        # events without a tool (UserPromptSubmit, Stop) carry their fields at the top level in
        # every client (prompt, last_assistant_message, stop_hook_active): datasets keep them in tool_input
        for key, value in case.tool_input.items():
            data.setdefault(key, value)
    if case.context is not None:
        data["context"] = case.context
    if case.session is not None:
        data[SESSION_FIELD] = case.session
    prompt = (case.model_extra or {}).get("prompt")
    if case.canonical_event == "user_turn" and isinstance(prompt, str):
        data["prompt"] = prompt
    return Event.model_validate(data)


def _rule_spec(case: Case, rule: str) -> HookSpec:
    context = "event" if case.session is None else "session"
    named = f"{case.canonical_event}\0{rule}" + (
        "" if case.session is None else "\0session"
    )  # context-free ids unchanged
    digest = hashlib.blake2b(named.encode(), digest_size=4).hexdigest()
    return HookSpec(
        id=f"rule-{digest}",
        kind="smart",
        event=case.canonical_event,
        timeout=RULE_TIMEOUT,
        source="library",
        origin="dataset rule",
        options=SmartSettings(rule=rule, context=context),
    )


def select_hooks(
    case: Case, config: Sequence[HookSpec], where: str, rule_specs: dict[str, HookSpec]
) -> tuple[HookSpec, ...]:
    """The hooks that judge ``case`` (see the module docstring); raises when none would.

    A shadow hook is scored as if enforced: an eval asks what the rule says, which is what promoting it needs to know.
    """
    config = [spec.replace(mode="enforce") if spec.shadow else spec for spec in config]
    by_id = {spec.id: spec for spec in config}
    if case.rule and case.rule in by_id:
        spec = by_id[case.rule]
        if spec.event != case.canonical_event or not compile_filter(spec.matcher, spec.tools)(case.tool_name):
            raise DatasetError(
                f"case {case.id!r}: hook {spec.id!r} does not apply to {case.event} {case.tool_name or ''}".rstrip(),
                file=where,
            )
        return (spec,)
    if case.rule:
        key = f"{case.canonical_event}\0{case.rule}\0{case.session is None}"
        if key not in rule_specs:
            rule_specs[key] = _rule_spec(case, case.rule)
        return (rule_specs[key],)
    specs = tuple(Registry(config).matching(case.canonical_event, case.tool_name))
    if not specs:
        raise DatasetError(
            f"case {case.id!r}: no hook judges it (give the case a rule, or configure a hook for {case.event} {case.tool_name or ''})".rstrip(),
            file=where,
        )
    return specs


def companions(case: Case, config: Sequence[HookSpec], specs: Sequence[HookSpec]) -> tuple[HookSpec, ...]:
    """The config's smart rules, other than ``specs``, that ``guard hook`` would judge on the case's call."""
    mine = {spec.id for spec in specs}
    shown = [spec.replace(mode="enforce") if spec.shadow else spec for spec in config]
    return tuple(
        s
        for s in Registry(shown).matching(case.canonical_event, case.tool_name)
        if isinstance(s.options, SmartSettings) and s.options.rule and s.id not in mine
    )


def load_datasets(paths: Sequence[str], config: Sequence[HookSpec]) -> tuple[list[DatasetInfo], list[JudgedCase]]:
    """Load and check every dataset; one DatasetError lists every bad line of every file (as ``guard datasets check`` does)."""
    infos: list[DatasetInfo] = []
    judged: list[JudgedCase] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    rule_specs: dict[str, HookSpec] = {}  # one spec per distinct (event, rule text), shared by its cases
    for path in paths:
        name = Path(path).stem
        if name in seen:
            raise GuardError(
                f"datasets {seen[name]} and {path} share the name {name!r}: case ids are keyed by file name; rename one"
            )
        seen[name] = path
        report = CheckReport()
        rows = read_rows(Path(path), report)
        problems += [str(finding) for finding in report.errors]
        if not rows and not report.errors:
            problems.append(f"{path}: error: no cases")
        for row in rows:
            try:
                specs = select_hooks(row.case, config, f"{path}:{row.line}", rule_specs)
                judged.append(
                    JudgedCase(name, row.case, build_event(row.case), specs, companions(row.case, config, specs))
                )
            except DatasetError as exc:
                problems.append(str(exc))
        if rows and not report.errors:
            infos.append(
                DatasetInfo(
                    name=name,
                    path=str(path),
                    cases=len(rows),
                    sha256=hashlib.sha256(Path(path).read_bytes()).hexdigest(),
                )
            )
    if problems:
        raise DatasetError(f"{len(problems)} problem(s) in the dataset(s), nothing judged:\n  " + "\n  ".join(problems))
    return infos, judged
