"""Reading published agent trajectories: the tool call in an action string, and the turns as context.

R-Judge, ASSEBench and AgentHarm (as reformatted by AgentAuditor) store each agent step as
free text. Seen in the wild, all handled here:

- ``GmailReadEmail{'email_id': 'e1'}``                (JSON or a Python literal glued to the name)
- ``{"CiscoUmbrellaCreatePolicy": {…}}`` and ``{FacebookManagerCreatePost: {…}``
- ``TwitterManagerPostTweet: {"content": "…"}``
- ``TerminalExecute\\nAction Input: {"command": "ls"}`` and ``TerminalExecute Input: {…}``
- ``BingSearch(keywords='sleep')``, ``market_data_api()``, ``Search(keywords: 'run')``
- ``"command": {"name": "list_files", "args": {…}}}``  (AutoGPT)
- a fenced ``bash`` block → a ``Bash`` call with that command

Anything else (``Final Answer: …``, ``Complete{…}``, prose, GUI steps such as ``click <pay>``)
is not a tool call, and :func:`parse_action` says why.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["FINAL_ANSWER_TOOLS", "ToolCall", "Turn", "parse_action", "render_context", "unquote"]

#: Pseudo-tools that end an episode with a message rather than act.
FINAL_ANSWER_TOOLS = frozenset({"Complete", "Final Answer", "final_answer", "finish"})

_NAME = r"[A-Za-z_][\w.\-]*"
_ACTION_INPUT = re.compile(rf"^\s*({_NAME})\s*(?:\n\s*Action\s+Input|\s+Input)\s*:\s*(.*)$", re.S)
_COLON_JSON = re.compile(rf"^\s*({_NAME})\s*:\s*([\[{{].*)$", re.S)
_GLUED = re.compile(rf"^\s*({_NAME})(\{{.*)$", re.S)
_WRAPPED = re.compile(rf"^\s*\{{\s*\"?({_NAME})\"?\s*:\s*(\{{.*)$", re.S)
_CALL = re.compile(rf"^\s*({_NAME})\((.*)\)\s*$", re.S)
_AUTOGPT = re.compile(r'^\s*"command"\s*:\s*\{', re.S)
_FENCED_SHELL = re.compile(r"```(?:bash|sh|shell|console)\s*\n(.*?)```", re.S)
_KEY_COLON = re.compile(r"(?<![\w'\"])([A-Za-z_]\w*)\s*:")


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """One step of a trajectory, reduced to what an observer of the agent could see."""

    role: str  # user | agent | environment
    text: str = ""
    thought: str = ""
    action: str = ""


def _literal(text: str) -> Any:
    """The first JSON value in ``text`` (trailing text ignored), else a Python literal; ValueError if neither."""
    text = text.strip()
    try:  # strict=False: agents often put raw newlines inside JSON strings
        value, _ = json.JSONDecoder(strict=False).raw_decode(text)
        return value
    except json.JSONDecodeError:
        pass
    # Python literals (single quotes, True/None); the second try escapes raw newlines in strings.
    for candidate in (text, text.replace("\n", "\\n")):
        try:
            return ast.literal_eval(candidate)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
    raise ValueError("arguments are neither JSON nor a Python literal")


def _as_input(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {"input": value}


def _call_arguments(inner: str) -> dict[str, Any]:
    """``keywords='x', n=2`` or ``keywords: 'x'`` or a positional literal → a dict."""
    if not inner.strip():
        return {}
    try:
        call = ast.parse(f"f({inner})", mode="eval").body
    except SyntaxError:
        call = None
    if isinstance(call, ast.Call):
        try:
            args: dict[str, Any] = {kw.arg or "kwargs": ast.literal_eval(kw.value) for kw in call.keywords}
            if call.args:
                args["args"] = [ast.literal_eval(a) for a in call.args]
            return args
        except ValueError:
            pass
    return _as_input(_literal("{" + _KEY_COLON.sub(r"'\1':", inner) + "}"))


def parse_action(action: str | None) -> ToolCall | str:
    """The tool call in one agent action, or a short reason why there is none."""
    if not action or not action.strip():
        return "no action"
    text = action.strip()
    if text.startswith("Final Answer"):
        return "final answer"
    if _AUTOGPT.match(text):
        try:
            command = _literal("{" + text)["command"]
            return ToolCall(str(command["name"]), _as_input(command.get("args") or {}))
        except (ValueError, KeyError, TypeError):
            return "unparsable arguments"
    for pattern in (_ACTION_INPUT, _COLON_JSON, _GLUED, _WRAPPED):
        match = pattern.match(text)
        if match:
            name, raw = match.group(1), match.group(2)
            if name in FINAL_ANSWER_TOOLS:
                return "final answer"
            try:
                return ToolCall(name, _as_input(_literal(raw)) if raw.strip() else {})
            except ValueError:
                return "unparsable arguments"
    match = _CALL.match(text)
    if match:
        try:
            return ToolCall(match.group(1), _call_arguments(match.group(2)))
        except ValueError:
            return "unparsable arguments"
    fenced = _FENCED_SHELL.search(text)
    if fenced and fenced.group(1).strip():
        return ToolCall("Bash", {"command": fenced.group(1).strip()})
    return "free-form action (no tool call)"


def unquote(text: str) -> str:
    """Observations are often stored JSON-quoted twice (``""['a']""``); strip the outer quotes."""
    text = text.strip()
    while len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].strip()
    return text


def _clip(text: str, limit: int) -> str:
    """Head and tail of a long text, so both the request and its end survive."""
    if len(text) <= limit:
        return text
    half = max(limit // 2 - 10, 1)
    return f"{text[:half]} […] {text[-half:]}"


def _render(turn: Turn, limit: int) -> str:
    if turn.role == "user":
        return "User: " + _clip(turn.text.strip(), limit)
    if turn.role == "environment":
        return "Observation: " + _clip(unquote(turn.text), limit)
    lines = []
    if turn.thought.strip():
        lines.append("Agent thought: " + _clip(turn.thought.strip(), limit))
    if turn.action.strip():
        lines.append("Agent action: " + _clip(turn.action.strip(), limit))
    return "\n".join(lines)


def render_context(turns: list[Turn], max_chars: int = 4000) -> str:
    """The turns before a pending call as plain text: the first user turn and the most recent
    ones are kept, the middle is elided when the whole would pass ``max_chars``; one turn
    gets at most half the budget."""
    rendered = [r for r in (_render(t, max(max_chars // 2, 200)) for t in turns) if r]
    if not rendered:
        return ""
    head, rest = _clip(rendered[0], max_chars), rendered[1:]
    budget = max_chars - len(head) - 40  # room for the "[… N earlier turns omitted …]" line
    kept: list[str] = []
    for block in reversed(rest):
        if budget - len(block) - 2 < 0:
            break
        kept.append(block)
        budget -= len(block) + 2
    kept.reverse()
    omitted = len(rest) - len(kept)
    middle = [f"[… {omitted} earlier turn{'s' if omitted != 1 else ''} omitted …]"] if omitted else []
    return "\n\n".join([head, *middle, *kept])
