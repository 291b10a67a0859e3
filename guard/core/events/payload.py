"""The one parse boundary for event payloads: bytes or JSON in, a checked plain dict out.

Every entry point (``guard hook``, ``guard serve``, ``guard check``, the Python
API) reads events through :func:`read_payload`, so limits and repairs are the
same everywhere:

- size and nesting depth are bounded (a 1,000-level payload is a clear
  :class:`~guard.core.errors.EventError`, never a ``RecursionError``);
- invalid UTF-8 and lone surrogates (``"\\ud800"``) are replaced by U+FFFD so
  nothing downstream (the judge's prompt, the cache key, the audit row) can
  crash on them; the repair is reported so the decision can say so;
- the fields guard reads have the JSON types the clients send.

Standard library only: it runs on every hook call.
"""

from __future__ import annotations

import json
import re
from typing import Any

from guard.core.errors import EventError, EventTooLarge
from guard.core.events.names import canonical_event

__all__ = ["MAX_DEPTH", "MAX_EVENT_BYTES", "check_fields", "event_name", "read_json", "read_payload"]

#: Largest event accepted. A Write of a whole file fits; the judge would not see more anyway.
MAX_EVENT_BYTES = 8 << 20
#: Deepest nesting accepted; real tool inputs stay far below it.
MAX_DEPTH = 100

_SURROGATE = re.compile("[\ud800-\udfff]")
_STRING_FIELDS = (
    "session_id",
    "prompt_id",
    "transcript_path",
    "cwd",
    "permission_mode",
    "tool_name",
    "tool_use_id",
    "prompt",
)


def _repair(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def _walk(data: Any) -> tuple[Any, bool]:
    """Check the depth of ``data`` without recursion and replace lone surrogates; (data, repaired)."""
    repaired = False
    root: list[Any] = [data]
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        container, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise EventTooLarge(f"the event is nested deeper than {MAX_DEPTH} levels")
        items = container.items() if isinstance(container, dict) else enumerate(container)
        fixes: list[tuple[Any, Any, Any]] = []
        for key, value in items:
            if isinstance(value, str):
                if _SURROGATE.search(value):
                    fixes.append((key, key, _repair(value)))
            elif isinstance(value, (dict, list)):
                stack.append((value, depth + 1))
            if isinstance(key, str) and _SURROGATE.search(key):
                fixes.append((key, _repair(key), value if not isinstance(value, str) else _repair(value)))
        for old, new, value in fixes:
            if isinstance(container, dict) and old != new:
                del container[old]
            container[new] = value
            repaired = True
    return root[0], repaired


def _decode(raw: bytes | str) -> tuple[str, bool]:
    if isinstance(raw, str):
        return raw, False
    if len(raw) > MAX_EVENT_BYTES:
        raise EventTooLarge(f"the event is {len(raw)} bytes, over the {MAX_EVENT_BYTES}-byte limit")
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), True


def read_payload(raw: bytes | str | dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """One event as a dict, checked and repaired; ``(payload, repaired)``.

    Raises :class:`EventError` naming what is wrong: not JSON, not an object, too
    large, too deep, a missing or unknown event name, or a known field of the
    wrong type.
    """
    data, repaired = read_json(raw)
    check_fields(data)
    return data, repaired


def read_json(raw: bytes | str | dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A JSON object within the size and depth limits, lone surrogates repaired; ``(data, repaired)``.

    The fields are not checked: a client's own shape is normalised first.
    """
    repaired = False
    if isinstance(raw, dict):
        data: Any = dict(raw)  # repairs never touch the caller's object
    else:
        text, repaired = _decode(raw)
        if len(text) > MAX_EVENT_BYTES:
            raise EventTooLarge(f"the event is {len(text)} characters, over the {MAX_EVENT_BYTES}-byte limit")
        if not text.strip():
            raise EventError("no event (expected one JSON object)")
        try:
            data = json.loads(text)
        except RecursionError:
            raise EventTooLarge(f"the event is nested deeper than {MAX_DEPTH} levels") from None
        except json.JSONDecodeError as exc:
            raise EventError(f"the event is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
        except ValueError as exc:  # e.g. an integer past Python's digit limit
            raise EventError(f"the event is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise EventError(f"the event must be a JSON object, got {type(data).__name__}")
    data, fixed = _walk(data)
    return data, repaired or fixed


def check_fields(data: dict[str, Any]) -> str:
    """The canonical event name, once guard's fields are known to have the clients' types; else :class:`EventError`."""
    event = event_name(data)
    for name in _STRING_FIELDS:
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            raise EventError(f"field '{name}' must be a string, got {type(value).__name__}")
    tool_input = data.get("tool_input")
    if tool_input is not None and not isinstance(tool_input, dict):
        raise EventError(f"field 'tool_input' must be an object, got {type(tool_input).__name__}")
    active = data.get("stop_hook_active")
    if active is not None and not isinstance(active, bool):
        raise EventError(f"field 'stop_hook_active' must be true or false, got {type(active).__name__}")
    return event


def event_name(data: dict[str, Any]) -> str:
    """The canonical event name of ``data``, or an :class:`EventError` saying why there is none."""
    name = data.get("hook_event_name")
    if not isinstance(name, str) or not name:
        raise EventError("field 'hook_event_name' is missing or not a string")
    try:
        return canonical_event(name)
    except ValueError as exc:
        raise EventError(f"field 'hook_event_name': {exc}") from exc
