"""One tool vocabulary across clients: canonical actions (``@shell``, ``@write`` …) and each client's tool names.

A rule is about an effect, and every client names the tool that reaches it
differently (Claude Code ``Bash``, Copilot ``bash``, Gemini ``run_shell_command``,
Devin ``exec``). A matcher may name a canonical action instead of a tool, so one
guard.yaml covers every client. The tables list the built-in tools each client
documents; MCP tools are recognised by each client's naming scheme, and the writing
tools of well-known MCP servers (the reference filesystem server's ``write_file``,
``edit_file``, ``move_file``, ``create_directory``) also count as ``@write``/``@edit``,
so a rule about writes meets every route of a write. A tool guard cannot classify is
still ``@mcp``: a rule on ``@mcp`` (the starter's) judges it. :func:`tool_kind` gives a call's one kind of effect
(shell, write, edit, patch, mcp, fetch, read), the word the rule view, the record of written files and eval's routes use.
Standard library only: this module is on the path of every ``guard hook`` call.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = [
    "ACTIONS",
    "CLIENT_TOOLS",
    "MCP_PREFIX",
    "MCP_TOOLS",
    "PATCH_LINE",
    "TOOL_KINDS",
    "actions_of",
    "is_action",
    "is_name_list",
    "known_tool",
    "matcher_matches",
    "matcher_tokens",
    "patch_text",
    "tool_kind",
    "unknown_token_hint",
]

#: The canonical actions, in the order docs/actions.md lists them.
ACTIONS: tuple[str, ...] = ("@shell", "@write", "@edit", "@read", "@search", "@fetch", "@mcp", "@subagent")

_SHELL, _WRITE, _EDIT, _READ, _SEARCH, _FETCH, _SUBAGENT = (
    ("@shell",),
    ("@write",),
    ("@edit",),
    ("@read",),
    ("@search",),
    ("@fetch",),
    ("@subagent",),
)
_PATCH = ("@edit", "@write")  # a patch creates, changes and deletes files

#: Each client's built-in tool names (as its hooks report them) → the actions they perform.
CLIENT_TOOLS: dict[str, dict[str, tuple[str, ...]]] = {
    "claude": {
        "Bash": _SHELL,
        "BashOutput": _SHELL,
        "KillShell": _SHELL,
        "KillBash": _SHELL,
        "PowerShell": _SHELL,
        "Write": _WRITE,
        "Edit": _EDIT,
        "MultiEdit": _EDIT,
        "NotebookEdit": _EDIT,
        "Read": _READ,
        "NotebookRead": _READ,
        "LS": _READ,
        "Glob": _SEARCH,
        "Grep": _SEARCH,
        "WebSearch": _SEARCH,
        "WebFetch": _FETCH,
        "Task": _SUBAGENT,
        "Agent": _SUBAGENT,
        "TodoWrite": (),
        "ExitPlanMode": (),
        "Skill": (),
        "SlashCommand": (),
        "AskUserQuestion": (),
    },
    "codex": {
        "Bash": _SHELL,
        "shell": _SHELL,
        "local_shell": _SHELL,
        "exec_command": _SHELL,
        "write_stdin": _SHELL,
        "container.exec": _SHELL,
        "unified_exec": _SHELL,
        "apply_patch": _PATCH,
        "view_image": _READ,
        "read_file": _READ,
        "list_dir": _READ,
        "grep_files": _SEARCH,
        "web_search": _SEARCH,
        "spawn_agent": _SUBAGENT,
        "update_plan": (),
    },
    "devin": {
        "exec": _SHELL,
        "write": _WRITE,
        "edit": _EDIT,
        "multi_edit": _EDIT,
        "read": _READ,
        "ls": _READ,
        "grep": _SEARCH,
        "glob": _SEARCH,
        "web_search": _SEARCH,
        "web_fetch": _FETCH,
        "task": _SUBAGENT,
        "todo_write": (),
    },
    "gemini": {
        "run_shell_command": _SHELL,
        "write_file": _WRITE,
        "replace": _EDIT,
        "read_file": _READ,
        "read_many_files": _READ,
        "list_directory": _READ,
        "glob": _SEARCH,
        "grep_search": _SEARCH,
        "search_file_content": _SEARCH,
        "google_web_search": _SEARCH,
        "web_fetch": _FETCH,
        "invoke_agent": _SUBAGENT,
        "save_memory": (),
        "write_todos": (),
        "activate_skill": (),
        "ask_user": (),
    },
    "copilot": {
        "bash": _SHELL,
        "write_bash": _SHELL,
        "read_bash": _SHELL,
        "stop_bash": _SHELL,
        "list_bash": _SHELL,
        "powershell": _SHELL,
        "write_powershell": _SHELL,
        "read_powershell": _SHELL,
        "stop_powershell": _SHELL,
        "create": _WRITE,
        "edit": _EDIT,
        "str_replace_editor": _PATCH,
        "apply_patch": _PATCH,
        "view": _READ,
        "glob": _SEARCH,
        "grep": _SEARCH,
        "rg": _SEARCH,
        "web_fetch": _FETCH,
        "task": _SUBAGENT,
        "report_intent": (),
        "fetch_copilot_cli_documentation": (),
        "update_todo": (),
        "skill": (),
    },
}


#: Writing tools of well-known MCP servers, by tool name (whatever name the user gave the server): only ever adds
#: actions to a call, so more rules judge it, never fewer. The reference filesystem server
#: (@modelcontextprotocol/server-filesystem): write_file creates or overwrites a file, edit_file changes one,
#: move_file moves or renames (a write where it lands, an edit of where it was), create_directory makes folders.
MCP_TOOLS: dict[str, tuple[str, ...]] = {
    "write_file": _WRITE,
    "edit_file": _EDIT,
    "move_file": _PATCH,
    "create_directory": _WRITE,
}


def _folded(tables: dict[str, dict[str, tuple[str, ...]]]) -> dict[str, dict[str, frozenset[str]]]:
    return {
        client: {name.casefold(): frozenset(acts) for name, acts in tools.items()} for client, tools in tables.items()
    }


_BY_CLIENT = _folded(CLIENT_TOOLS)
_ANY: dict[str, frozenset[str]] = {}
for _tools in _BY_CLIENT.values():
    for _name, _acts in _tools.items():
        _ANY[_name] = _ANY.get(_name, frozenset()) | _acts

# MCP tool names: ``mcp__server__tool`` (Claude Code, Codex, Devin), ``mcp_server_tool`` (Gemini CLI),
# ``server-tool`` (Copilot CLI). Gemini and Copilot do not escape the separator inside names, so every
# split is a candidate: a hook on ``@mcp:my_server`` sees ``mcp_my_server_read`` whichever split was meant.
_DOUBLE = re.compile(r"^mcp__(?P<rest>.+)$")
_SINGLE = re.compile(r"^mcp_(?P<rest>[^_].*)$")


def _splits(rest: str, sep: str) -> list[tuple[str, str]]:
    parts = rest.split(sep)
    return [(sep.join(parts[:i]), sep.join(parts[i:])) for i in range(1, len(parts)) if parts[i - 1] and parts[i]]


def _mcp_calls(client: str | None, name: str) -> list[tuple[str, str]]:
    """Every (server, tool) reading of ``name`` as an MCP tool of ``client`` (any client when None)."""
    calls: list[tuple[str, str]] = []
    double = _DOUBLE.match(name)
    if double and client in (None, "claude", "codex", "devin", "gemini"):
        calls += _splits(double["rest"], "__")
    single = _SINGLE.match(name)
    if single and client in (None, "gemini"):
        calls += _splits(single["rest"], "_")
    if client in (None, "copilot") and "-" in name and name.casefold() not in _ANY:
        calls += _splits(name, "-")
    return calls


@lru_cache(maxsize=1024)
def actions_of(client: str | None, tool_name: str) -> frozenset[str]:
    """The canonical actions ``tool_name`` performs in ``client`` (every client's reading when None or unknown).

    Names compare ignoring case (Copilot ``bash`` is Claude Code's ``Bash``). An MCP
    tool gives ``@mcp``, ``@mcp:server`` and ``@mcp:server:tool`` for each reading of its name,
    and what a well-known server's writing tool of that name does (:data:`MCP_TOOLS`).
    """
    folded = tool_name.casefold()
    table = _BY_CLIENT.get(client or "")
    found = table.get(folded) if table is not None else None
    actions = set(found if found is not None else _ANY.get(folded, ()))
    for server, tool in _mcp_calls(client if table is not None else None, tool_name):
        actions.update(("@mcp", f"@mcp:{server}", f"@mcp:{server}:{tool}", *MCP_TOOLS.get(tool.casefold(), ())))
    return frozenset(actions)


def is_action(token: str) -> bool:
    """Whether ``token`` names a canonical action (``@shell``, ``@mcp:github``, ``@mcp:github:create_issue``)."""
    if token in ACTIONS:
        return True
    head, _, rest = token.partition(":")
    return head == "@mcp" and bool(rest) and all(rest.split(":", 1))


_NAME_LIST = re.compile(r"^[A-Za-z0-9_\-, |@:]+$")


def is_name_list(matcher: str) -> bool:
    """Whether ``matcher`` is a list of names and actions (letters, digits, ``_ - , | @ :``, spaces), not a regex."""
    return _NAME_LIST.match(matcher) is not None


def matcher_tokens(matcher: str) -> list[str]:
    """The names of a name-list matcher (``@shell|@write, Bash``)."""
    return [token.strip() for token in re.split(r"[|,]", matcher) if token.strip()]


@lru_cache(maxsize=512)
def _compiled(matcher: str) -> tuple[str, ...] | re.Pattern[str]:
    return tuple(matcher_tokens(matcher)) if is_name_list(matcher) else re.compile(matcher)


def _token_matches(token: str, client: str | None, tool_name: str) -> bool:
    if token.startswith("@"):
        return token in actions_of(client, tool_name)
    return token.casefold() == tool_name.casefold()


def matcher_matches(matcher: str | None, client: str | None, tool_name: str | None) -> bool:
    """Whether ``matcher`` accepts ``tool_name`` sent by ``client`` (None: any client).

    ``*``, empty or absent = every event; a name list = any of its tool names (ignoring
    case) or canonical actions; anything else = an unanchored regex on the tool name
    (raises ``re.error`` when invalid: validate first). A tool-less event matches
    only a matcher that filters on nothing.
    """
    if matcher in (None, "", "*"):
        return True
    assert matcher is not None
    if tool_name is None:
        return False
    compiled = _compiled(matcher)
    if isinstance(compiled, tuple):
        return any(_token_matches(token, client, tool_name) for token in compiled)
    return compiled.search(tool_name) is not None


def known_tool(name: str) -> bool:
    """Whether ``name`` is a built-in tool of some client, or has an MCP tool's shape."""
    return name.casefold() in _ANY or bool(_mcp_calls(None, name))


def unknown_token_hint(token: str) -> str | None:
    """Why a matcher name can match no known tool of any client, with a "did you mean"; None when it can."""
    if token.startswith("@"):
        if is_action(token):
            return None
        pool = list(ACTIONS)
    elif known_tool(token):
        return None
    else:
        pool = [*ACTIONS, *sorted({name for tools in CLIENT_TOOLS.values() for name in tools})]
    import difflib  # only a config's check pays for it, never a hook call

    folded = {candidate.casefold(): candidate for candidate in pool}
    close = difflib.get_close_matches(token.casefold(), list(folded), n=1, cutoff=0.6)
    kind = "is not a canonical action" if token.startswith("@") else "is no known tool of any client"
    hint = f"; did you mean {folded[close[0]]}?" if close else f"; the actions are {', '.join(ACTIONS)}"
    return f"{token!r} {kind}{hint}"


# What effect a tool has, as the rule view, the record of written files and eval's routes describe a call (one word
# per call, where a matcher's actions above may be several).

#: Each client's tool names, by the kind of effect they have (MCP tools are recognised by their ``mcp__`` prefix).
TOOL_KINDS: dict[str, str] = {
    **dict.fromkeys(
        ("Bash", "bash", "run_shell_command", "exec", "shell", "local_shell", "container.exec", "powershell"), "shell"
    ),
    **dict.fromkeys(("Write", "write_file", "create"), "write"),
    **dict.fromkeys(("Edit", "MultiEdit", "NotebookEdit", "replace", "edit"), "edit"),
    "apply_patch": "patch",
    **dict.fromkeys(("WebFetch", "web_fetch"), "fetch"),
    **dict.fromkeys(("Read", "read_file", "read_many_files", "view", "read"), "read"),
}
MCP_PREFIX = "mcp__"
#: A line of an ``apply_patch`` patch naming a file it adds, updates or deletes, or where it moves one.
PATCH_LINE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$")


def tool_kind(tool_name: str | None) -> str | None:
    """The kind of effect a client's tool has (shell, write, edit, patch, mcp, fetch, read), or None when unknown."""
    if not tool_name:
        return None
    if tool_name.startswith(MCP_PREFIX):
        return "mcp"
    return TOOL_KINDS.get(tool_name)


def patch_text(tool_input: dict[str, Any]) -> str | None:
    """The patch an ``apply_patch`` call carries, wherever its client put it (None when it carries none)."""
    for key in ("command", "input", "patch"):
        value = tool_input.get(key)
        if isinstance(value, list):
            value = next((v for v in value if isinstance(v, str) and "*** Begin Patch" in v), None)
        if isinstance(value, str) and "*** " in value:
            return value
    return None
