"""The user's own words, read from the client's transcript: the only consent a session-aware rule believes.

Any process the agent starts can run ``guard hook``, or post to the service, with
a ``UserPromptSubmit`` saying "delete the build folder"; so guard takes no user
message from an event. Claude Code and Codex write every turn to a transcript of
their own and name it in every hook event (``transcript_path``). guard reads one
only at that client's own location, never a path the payload chose elsewhere:

===========  ===============================================  ==========================  ===========================
client       transcript                                       user messages               earlier actions
===========  ===============================================  ==========================  ===========================
Claude Code  ``$CLAUDE_CONFIG_DIR`` (``~/.claude``)           ``user`` entries whose      ``tool_use`` blocks of
             ``/projects/<folder>/<session_id>.jsonl``        content is text (not a      ``assistant`` entries
                                                              tool result, meta entry,
                                                              subagent prompt or command
                                                              output)
Codex        ``$CODEX_HOME`` (``~/.codex``)                   ``event_msg`` /             ``function_call``,
             ``/sessions/…/rollout-*.jsonl``                  ``user_message``            ``custom_tool_call``,
                                                                                          ``local_shell_call``
===========  ===============================================  ==========================  ===========================

The file must be a regular file (no symlink) of this user, below that folder. A
client with no such transcript (Gemini CLI, Copilot, Devin, an SDK, an event
posted to ``guard serve`` without one) gives a rule no user message at all:
stricter, never looser. Reading is bounded: the file is read from its end, at
most :data:`MAX_BYTES`, until the newest messages and actions a judge is shown
are found; what lies further back is not shown. Self-protection write-protects
the transcript it reads (:func:`guard.protection.targets.event_paths`).
Standard library only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from guard.core.record import Record
from guard.protection.client_transcripts import Transcript

__all__ = ["MAX_BYTES", "TranscriptTurns", "read_turns"]

#: The most of a transcript read for one judgement (from its end).
MAX_BYTES = 16 << 20
_CHUNK = 1 << 20
#: Text Claude Code writes as a user entry that the user did not type.
_CLAUDE_GENERATED = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
    "<bash-stdout>",
    "<bash-stderr>",
    "<system-reminder>",
    "Caveat: ",
)


class TranscriptTurns(Record):
    """What a transcript shows of a session: the user's messages and the tool calls before this one (oldest first).

    ``actions`` are (tool_use_id, tool name, input).
    """

    __slots__ = ("user_messages", "actions")

    def __init__(self, user_messages: tuple[str, ...] = (), actions: tuple[tuple[str, str, Any], ...] = ()) -> None:
        self.user_messages, self.actions = user_messages, actions


def _lines_from_end(path: str) -> Iterator[bytes]:
    """The file's complete lines, newest first, from at most :data:`MAX_BYTES` at its end."""
    with open(path, "rb") as fh:
        end = fh.seek(0, os.SEEK_END)
        stop = max(end - MAX_BYTES, 0)
        pending = b""
        while end > stop:
            start = max(end - _CHUNK, stop)
            fh.seek(start)
            block = fh.read(end - start) + pending
            end = start
            lines = block.split(b"\n")
            pending = lines.pop(0) if end > 0 else b""  # a line cut by the chunk edge waits for the rest
            yield from reversed([line for line in lines if line.strip()])


def _claude_text(content: Any) -> str | None:
    """The text a user typed, from a Claude Code user entry's content; None for tool results and generated text."""
    if isinstance(content, str):
        text = content
    elif (
        isinstance(content, list)
        and content
        and all(isinstance(b, dict) and b.get("type") in ("text", "image") for b in content)
    ):
        text = "\n".join(str(b.get("text") or "") for b in content if b.get("type") == "text")
    else:
        return None
    text = text.strip()
    return text if text and not text.startswith(_CLAUDE_GENERATED) else None


def _claude(entry: dict[str, Any]) -> tuple[str | None, list[tuple[str, str, Any]]]:
    if entry.get("isSidechain") or entry.get("isMeta") or entry.get("isCompactSummary"):
        return None, []
    message = entry.get("message")
    if not isinstance(message, dict):
        return None, []
    if entry.get("type") == "user" and message.get("role") == "user":
        return _claude_text(message.get("content")), []
    if entry.get("type") == "assistant" and isinstance(message.get("content"), list):
        calls = [
            (str(b.get("id") or ""), str(b.get("name") or ""), b.get("input"))
            for b in message["content"]
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
        return None, calls
    return None, []


def _codex(entry: dict[str, Any]) -> tuple[str | None, list[tuple[str, str, Any]]]:
    payload = entry.get("payload")
    if not isinstance(payload, dict):
        return None, []
    kind = payload.get("type")
    if entry.get("type") == "event_msg" and kind == "user_message" and isinstance(payload.get("message"), str):
        return payload["message"].strip() or None, []
    if entry.get("type") != "response_item":
        return None, []
    call_id = str(payload.get("call_id") or payload.get("id") or "")
    if kind == "function_call":
        arguments = payload.get("arguments")
        try:
            tool_input = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            tool_input = arguments
        return None, [(call_id, str(payload.get("name") or ""), tool_input)]
    if kind == "custom_tool_call":
        return None, [(call_id, str(payload.get("name") or ""), payload.get("input"))]
    if kind == "local_shell_call":
        action = payload.get("action")
        return None, [(call_id, "local_shell", action.get("command") if isinstance(action, dict) else action)]
    return None, []


def _either(*names: str) -> tuple[bytes, ...]:
    """``"type":"x"`` as compact and as spaced JSON writes it."""
    return tuple(form for name in names for form in (f'"type":"{name}"'.encode(), f'"type": "{name}"'.encode()))


#: Bytes a line must hold to be parsed at all, and bytes that rule it out (a tool result is never the user's words nor a
#: call): most of a long transcript is tool output, and skipping it unparsed keeps a 500 KB transcript to a few milliseconds.
_WANTED = {
    "claude": _either("user", "tool_use"),
    "codex": _either("user_message", "function_call", "custom_tool_call", "local_shell_call"),
}
_UNWANTED = {"claude": _either("tool_result"), "codex": _either("function_call_output", "custom_tool_call_output")}


def read_turns(transcript: Transcript, *, pending: str | None = None) -> TranscriptTurns:
    """The newest user messages and tool calls of ``transcript``, leaving out the call being judged (``pending``, its id)."""
    from guard.session.context import (
        MAX_ACTIONS,
        MAX_USER_MESSAGES,
    )  # not at import: self-protection only needs client_transcript

    parse = _claude if transcript.client == "claude" else _codex
    wanted, unwanted = _WANTED[transcript.client], _UNWANTED[transcript.client]
    messages: list[str] = []
    actions: list[tuple[str, str, Any]] = []
    try:
        for line in _lines_from_end(transcript.path):
            if len(messages) >= MAX_USER_MESSAGES and len(actions) >= MAX_ACTIONS:
                break
            if not any(w in line for w in wanted) or any(u in line for u in unwanted):
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line still being written, or not JSON: never a user message
            if not isinstance(entry, dict):
                continue
            text, calls = parse(entry)
            if text is not None and len(messages) < MAX_USER_MESSAGES:
                messages.append(text)
            for call in reversed(calls):
                if call[0] != pending and len(actions) < MAX_ACTIONS:
                    actions.append(call)
    except OSError:
        return TranscriptTurns()
    return TranscriptTurns(tuple(reversed(messages)), tuple(reversed(actions)))
