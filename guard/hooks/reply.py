"""Reading a hook's JSON reply, shared by command hooks (stdout) and webhooks (response body).

Two shapes are accepted, because users copy hooks written for Claude Code and
guard's own canonical decision JSON alike:

* Claude Code: ``hookSpecificOutput.permissionDecision`` (allow | deny | ask | defer)
  with ``permissionDecisionReason``, ``updatedInput``, ``additionalContext``; the
  PermissionRequest form ``hookSpecificOutput.decision.behavior``; top-level
  ``decision: "block" | "approve"`` + ``reason``; ``continue: false`` + ``stopReason``.
* Canonical: ``{"decision": "allow|deny|ask", "reason", "updated_input", "additional_context"}``.

When a reply says several things at once the strictest wins (deny > ask > allow),
so a hook can never loosen its own deny by adding an allow elsewhere. A reply that
names a decision guard does not know is an error, never read as allow.
"""

from __future__ import annotations

import json
from typing import Any

from guard.core.decision import HookResult, strictest
from guard.core.errors import HookError
from guard.core.events.names import canonical_event

__all__ = ["decode_reply", "parse_reply"]

#: Every decision word a hook may use, mapped to guard's; None = abstain.
_DECISION_WORDS: dict[str, str | None] = {
    "allow": "allow",
    "approve": "allow",
    "deny": "deny",
    "block": "deny",
    "ask": "ask",
    "defer": None,
}


def decode_reply(text: str, *, hook_id: str) -> dict[str, Any] | None:
    """The JSON object in ``text`` when its first non-blank character is ``{``, else None.

    That is Claude Code's rule for hook stdout: anything else is plain text.
    Broken JSON that starts like an object is an error, not plain text, so a
    malformed deny is never silently dropped.
    """
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        return None
    try:
        data: dict[str, Any] = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise HookError(
            f"hook {hook_id}: reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from exc
    return data  # text starting with "{" decodes to an object or fails above


def parse_reply(data: dict[str, Any], *, hook_id: str, kind: str, event: str) -> HookResult:
    """Turn one decoded JSON reply into a :class:`HookResult` for ``event`` (canonical name).

    Raises :class:`HookError` naming the offending field when the reply is unreadable.
    """
    reader = _ReplyReader(hook_id)
    specific = data.get("hookSpecificOutput")
    if specific is not None:
        reader.read_specific(reader.mapping(specific, "hookSpecificOutput"), event=event)
    if "decision" in data:
        reader.read_top_level(data)
    if data.get("continue") is False:
        reader.add("deny", reader.text(data.get("stopReason"), "stopReason") or "hook asked to stop (continue: false)")
    for key in ("updated_input", "updatedInput"):
        if key in data and data[key] is not None:
            reader.updated_input = reader.mapping(data[key], key)
    for key in ("additional_context", "additionalContext"):
        if key in data:
            reader.add_context(reader.text(data[key], key))
    return reader.result(kind=kind, system_message=data.get("systemMessage"))


def _same_event(name: str, event: str) -> bool:
    try:
        return canonical_event(name) == canonical_event(event)
    except ValueError:
        return False


class _ReplyReader:
    """Collects verdicts, reasons, rewrites and context from the parts of one reply."""

    def __init__(self, hook_id: str) -> None:
        self.hook_id = hook_id
        self.verdicts: list[tuple[str, str | None]] = []
        self.updated_input: dict[str, Any] | None = None
        self.contexts: list[str] = []
        self.notes: list[str] = []

    def fail(self, field: str, problem: str) -> HookError:
        return HookError(f"hook {self.hook_id}: reply field '{field}' {problem}")

    def mapping(self, value: Any, field: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(field, f"must be an object, got {type(value).__name__}")
        return value

    def text(self, value: Any, field: str) -> str | None:
        if value is None or isinstance(value, str):
            return value or None
        raise self.fail(field, f"must be a string, got {type(value).__name__}")

    def word(self, value: Any, field: str) -> str | None:
        if not isinstance(value, str) or value.lower() not in _DECISION_WORDS:
            known = ", ".join(sorted(_DECISION_WORDS))
            raise self.fail(field, f"has unknown decision {value!r} (expected one of {known})")
        return _DECISION_WORDS[value.lower()]

    def add(self, decision: str | None, reason: str | None) -> None:
        if decision is not None:
            self.verdicts.append((decision, reason))

    def add_context(self, context: str | None) -> None:
        if context:
            self.contexts.append(context)

    def read_specific(self, specific: dict[str, Any], *, event: str) -> None:
        """``hookSpecificOutput``: the PreToolUse fields and the PermissionRequest decision object.

        A ``hookEventName`` for another event is honoured anyway (a deny must not
        become a no-op over a typo) but noted, since Claude Code would ignore it.
        """
        named = specific.get("hookEventName")
        if isinstance(named, str) and named and not _same_event(named, event):
            self.notes.append(f"hookEventName {named!r} does not match the event {event!r}")
        if "permissionDecision" in specific:
            reason = self.text(specific.get("permissionDecisionReason"), "hookSpecificOutput.permissionDecisionReason")
            self.add(self.word(specific["permissionDecision"], "hookSpecificOutput.permissionDecision"), reason)
        if "decision" in specific:
            self.read_behavior(self.mapping(specific["decision"], "hookSpecificOutput.decision"))
        if specific.get("updatedInput") is not None:
            self.updated_input = self.mapping(specific["updatedInput"], "hookSpecificOutput.updatedInput")
        self.add_context(self.text(specific.get("additionalContext"), "hookSpecificOutput.additionalContext"))

    def read_behavior(self, decision: dict[str, Any]) -> None:
        """PermissionRequest: ``{"behavior": "allow|deny", "updatedInput", "message"}``."""
        field = "hookSpecificOutput.decision"
        if "behavior" in decision:
            reason = self.text(decision.get("message"), f"{field}.message")
            self.add(self.word(decision["behavior"], f"{field}.behavior"), reason)
        if decision.get("updatedInput") is not None:
            self.updated_input = self.mapping(decision["updatedInput"], f"{field}.updatedInput")

    def read_top_level(self, data: dict[str, Any]) -> None:
        """Top-level ``decision`` (Claude block/approve, Devin, Gemini, canonical) + ``reason``."""
        if data["decision"] is None:  # canonical JSON may carry an explicit abstention
            return
        self.add(self.word(data["decision"], "decision"), self.text(data.get("reason"), "reason"))

    def result(self, *, kind: str, system_message: Any) -> HookResult:
        decision = strictest([d for d, _ in self.verdicts]) if self.verdicts else None
        reasons = [r for d, r in self.verdicts if d == decision and r]
        details: dict[str, Any] = {}
        if isinstance(system_message, str) and system_message:
            details["system_message"] = system_message
        if self.notes:
            details["reply_notes"] = list(self.notes)
        return HookResult(
            id=self.hook_id,
            type=kind,
            decision=decision,
            reason="; ".join(dict.fromkeys(reasons)) or None,
            updated_input=self.updated_input if decision != "deny" else None,
            additional_context="\n".join(self.contexts) or None,
            details=details,
        )
