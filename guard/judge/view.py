"""What a rule is shown of an event: the one view builder for ``guard hook``, ``guard serve`` and ``guard eval``.

The action is the payload as :func:`~guard.judge.prompts.judge_view` renders it,
with an ``effect`` block (:func:`effect_of`) that states what the call does in the
same words whichever client sent it, because a rule is about an effect and each
client names and shapes its tools differently:

=========  ===============================================  ===================================================
kind       tools                                            the effect block
=========  ===============================================  ===================================================
shell      Bash, bash, run_shell_command, exec, shell …     each file the command runs as a program (an
                                                            interpreter's script, ``./tool``, ``source f``):
                                                            its path and text (cut in the middle when long);
                                                            none when it runs no file
write      Write, write_file, create                        absolute path, inside the project or not, size,
                                                            new file / overwrite / emptying, a bounded diff
                                                            against the current file
edit       Edit, MultiEdit, NotebookEdit, replace, edit     absolute path, inside the project or not, old → new
patch      apply_patch (Codex)                              each file it adds, updates, moves or deletes
mcp        ``mcp__<server>__<tool>``                        server, tool and the argument names (the values
                                                            are the tool input, shown whole)
fetch      WebFetch, web_fetch                              method, URL and host
=========  ===============================================  ===================================================

The project is the event's ``cwd``. The current file is read from the disk —
bounded, regular files only, and only inside a project that is not ``/`` or the home
folder, so a write to ``~/.aws/credentials`` never sends that file's content to the model provider — except in
``guard eval``, where the case's ``files`` (the world the case describes) are put
on the payload under :data:`FILES_FIELD` and the disk is never read; the gate drops
that field from a client's payload. Every string is bounded, so a huge write adds
at most a few thousand characters.

A session-aware rule (``context: session``: every policy, and any hook that says
so; ``context: request`` shows the user's requests without the actions, so its
cache key changes only when the user speaks) is also shown the bounded session context found on the payload under
:data:`~guard.session.SESSION_FIELD` — put there by the gate from the
session store in production and from the case's ``session`` in eval — and an
empty one when there is none, so a missing history reads as "the user asked for
nothing", never as consent. Context-free rules are shown no session at all and
keep their cache key.

Standard library only: the ``guard hook`` fast path computes cache keys with it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from guard.core.actions import MCP_PREFIX, PATCH_LINE, patch_text, tool_kind
from guard.core.session import FILES_FIELD, REQUEST_CONTEXT, SESSION_FIELD, reads_session
from guard.core.spec import SmartSettings

if TYPE_CHECKING:
    from guard.core.spec import HookSpec
    from guard.session.context import SessionContext

__all__ = ["effect_of", "session_shown"]


#: A current file longer than this is described by its size alone (no diff).
MAX_FILE_BYTES = 64 * 1024
#: The most characters of diff, and of an edit's old or new text, the effect block shows (the tool input is shown whole).
DIFF_CHARS = 3000
TEXT_CHARS = 1000
_URL = re.compile(r"https?://[^\s\"'<>)]+")


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit:,} more characters]"


class _Place:
    """Where a call's path lands: absolute, with symlinks resolved, and whether that is inside the project."""

    def __init__(self, raw: str, cwd: str | None, payload: dict[str, Any]) -> None:
        on_disk = not isinstance(payload.get(FILES_FIELD), dict)  # eval: the case's world, not this machine's symlinks
        resolve = os.path.realpath if on_disk else os.path.normpath
        path = raw if not on_disk else os.path.expanduser(raw)
        if not os.path.isabs(path) and cwd:
            path = os.path.join(cwd, path)
        self.path = os.path.normpath(path)
        self.real = resolve(self.path) if os.path.isabs(self.path) else self.path
        self.project = resolve(cwd) if cwd and os.path.isabs(cwd) else None
        self.on_disk = on_disk

    @property
    def inside(self) -> bool | None:
        if self.project is None:
            return None
        return self.real == self.project or self.real.startswith(self.project.rstrip(os.sep) + os.sep)

    @property
    def hidden_because(self) -> str | None:
        """Why the current content may not be shown to the model, or None when it may.

        On the disk, only inside a known project that is not ``/``, the home folder or a folder above it:
        an agent started in ``~`` must not turn ``~/.aws/credentials`` into a "project file".
        """
        if not self.on_disk:
            return "outside the project" if self.inside is False else None  # eval: the case's own world
        if self.inside is None:
            return "no project folder (the event has no cwd)"
        if not self.inside:
            return "outside the project"
        home = os.path.realpath(os.path.expanduser("~"))
        if self.project is not None and (
            self.project == os.sep or home == self.project or home.startswith(self.project.rstrip(os.sep) + os.sep)
        ):
            return "the project folder is / or holds the home folder"
        return None

    def fields(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"path": self.path}
        if self.real != self.path:
            shown["resolves_to"] = self.real  # a symlink: where the write really lands
        if self.inside is not None:
            shown["inside_project"] = self.inside
        return shown


def _current(place: _Place, payload: dict[str, Any]) -> tuple[bool, bytes | None, int]:
    """(exists, content when it may be shown, size) of the file at ``place`` now.

    Content only for a regular file of at most MAX_FILE_BYTES that may be shown (:attr:`_Place.hidden_because`);
    the disk is never touched when the payload carries the eval's files.
    """
    files = payload.get(FILES_FIELD)
    if isinstance(files, dict):
        text = files.get(place.path, files.get(place.real))
        if not isinstance(text, str):
            return False, None, 0
        data = text.encode()
        return True, data if place.hidden_because is None and len(data) <= MAX_FILE_BYTES else None, len(data)
    try:
        info = os.stat(place.real)
    except (OSError, ValueError):
        return False, None, 0
    if not stat.S_ISREG(info.st_mode):
        return True, None, info.st_size  # a folder, FIFO or device: never opened (a FIFO would block the hook)
    if place.hidden_because is not None or info.st_size > MAX_FILE_BYTES:
        return True, None, info.st_size
    try:
        with open(place.real, "rb") as fh:
            return True, fh.read(MAX_FILE_BYTES + 1), info.st_size
    except OSError:
        return True, None, info.st_size


@lru_cache(maxsize=4)  # the quick and the thorough prompt show the same diff
def _diff(old: bytes, new: str, path: str) -> str:
    import difflib  # only when a write replaces a file that is shown

    lines = difflib.unified_diff(
        old.decode(errors="replace").splitlines(keepends=True),
        new.splitlines(keepends=True),
        f"{path} (now)",
        f"{path} (after)",
    )
    return _bounded("".join(lines), DIFF_CHARS)


def _write(
    tool_input: dict[str, Any], cwd: str | None, payload: dict[str, Any], for_key: bool
) -> dict[str, Any] | None:
    raw = next(
        (tool_input[k] for k in ("file_path", "path", "absolute_path") if isinstance(tool_input.get(k), str)), None
    )
    content = next(
        (tool_input[k] for k in ("content", "file_text", "text") if isinstance(tool_input.get(k), str)), None
    )
    if raw is None or content is None:
        return None
    place = _Place(raw, cwd, payload)
    exists, old, old_size = _current(place, payload)
    size = len(content.encode())
    if not exists:
        change = "new empty file" if not content.strip() else "new file"
    elif not content.strip():
        change = "emptying" if old_size else "overwrite (already empty)"
    else:
        change = "unchanged" if old is not None and old == content.encode() else "overwrite"
    shown: dict[str, Any] = {"kind": "write", **place.fields(), "change": change, "size": size}
    if exists:
        shown["current_size"] = old_size
        if old is not None and change not in ("unchanged",):
            # the diff follows from the new content (in the payload) and the current one: a key needs only the latter's digest
            shown["diff"] = (
                hashlib.blake2b(old, digest_size=16).hexdigest() if for_key else _diff(old, content, place.path)
            )
        elif place.hidden_because is not None:
            shown["current_content"] = f"not shown: {place.hidden_because}"
    return shown


#: The most scripts, and characters of each (its start and its end), a shell call's effect shows.
MAX_SCRIPTS = 4
SCRIPT_HEAD, SCRIPT_TAIL = 2000, 800


def scripts_run(command: str) -> list[tuple[str | None, str]]:
    """(the folder it runs in, or None when a ``cd`` made it unknown; the word as written) of each file the line runs."""
    from guard.command_analysis.invocation import script_word
    from guard.command_analysis.shell_syntax import ShellSyntaxError, parse

    try:
        script = parse(command)
    except ShellSyntaxError:
        return []
    found: list[tuple[str | None, str]] = []
    folder: str | None = "."
    for pipeline in script.pipelines:
        for part in pipeline.commands:
            words = part.words
            if words and words[0].text == "cd":
                literal = len(words) == 2 and not (words[1].dynamic or words[1].glob) and folder is not None
                folder = (
                    os.path.join(folder, os.path.expanduser(words[1].text)) if literal and folder is not None else None
                )
                continue
            word = script_word(words)
            if word is not None:
                found.append((folder, "$" if word.dynamic or word.glob else word.text))
    return found[:MAX_SCRIPTS]


def _script_shown(
    raw: str, folder: str | None, cwd: str | None, payload: dict[str, Any], for_key: bool
) -> dict[str, Any]:
    """One script a shell call runs: where it is and, when it may be shown, its text (cut in the middle when long)."""
    from guard.protection.credentials import looks_like_credential

    if raw == "$" or folder is None:
        return {
            "path": raw if raw != "$" else "(expands at run time)",
            "content": "not shown: unresolved (it expands at run time, or follows a cd that does)",
        }
    place = _Place(os.path.join(folder, raw) if not os.path.isabs(raw) else raw, cwd, payload)
    shown = {**place.fields()}
    if place.hidden_because is not None:
        return {**shown, "content": f"not shown: {place.hidden_because}"}
    if looks_like_credential(
        os.path.relpath(place.real, place.project or "/")
    ):  # the project's own folders are not the name
        return {**shown, "content": "not shown: its name looks like a credential"}
    files = payload.get(FILES_FIELD)
    if isinstance(files, dict):
        text = files.get(place.path, files.get(place.real))
        data = text.encode() if isinstance(text, str) else None
    else:
        try:
            if not stat.S_ISREG(os.stat(place.real).st_mode):
                return {**shown, "content": "not shown: not a regular file"}
            with open(place.real, "rb") as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            data = None
        except (OSError, ValueError):
            return {**shown, "content": "not shown: it cannot be read"}
    if data is None:
        return {**shown, "missing": True}
    if for_key:
        return {**shown, "content": hashlib.blake2b(data, digest_size=16).hexdigest()}
    text = data[:MAX_FILE_BYTES].decode(errors="replace")
    if len(text) > SCRIPT_HEAD + SCRIPT_TAIL or len(data) > MAX_FILE_BYTES:
        cut = "of its first 64 KiB " if len(data) > MAX_FILE_BYTES else ""
        text = f"{text[:SCRIPT_HEAD]}\n[… {len(text) - SCRIPT_HEAD - SCRIPT_TAIL:,} characters {cut}not shown …]\n{text[-SCRIPT_TAIL:]}"
        shown["cut"] = True
    return {**shown, "content": text}


def _shell(
    tool_input: dict[str, Any], cwd: str | None, payload: dict[str, Any], for_key: bool
) -> dict[str, Any] | None:
    """The files a shell call runs as programs (``python3 repro.py``, ``bash run.sh``, ``./tool``, ``source env.sh``), with their
    text: code the agent wrote in an earlier call is judged when it runs, not only by the command that names it."""
    from guard.protection.readonly import command_text

    command = command_text(tool_input)
    if command is None:
        return None
    runs = [_script_shown(raw, folder, cwd, payload, for_key) for folder, raw in scripts_run(command)]
    return {"kind": "shell", "runs": runs} if runs else None


def _edits(tool_input: dict[str, Any]) -> list[dict[str, str]]:
    edits = tool_input.get("edits")
    pairs: list[Any] = edits if isinstance(edits, list) else [tool_input]
    found = []
    for pair in pairs:
        if not isinstance(pair, dict):
            continue
        old = next((pair[k] for k in ("old_string", "old_str") if isinstance(pair.get(k), str)), None)
        new = next((pair[k] for k in ("new_string", "new_str", "new_source") if isinstance(pair.get(k), str)), None)
        if old is not None or new is not None:
            found.append({"old": _bounded(old or "", TEXT_CHARS), "new": _bounded(new or "", TEXT_CHARS)})
    return found


def _edit(tool_input: dict[str, Any], cwd: str | None, payload: dict[str, Any]) -> dict[str, Any] | None:
    raw = next(
        (
            tool_input[k]
            for k in ("file_path", "path", "notebook_path", "absolute_path")
            if isinstance(tool_input.get(k), str)
        ),
        None,
    )
    if raw is None:
        return None
    place = _Place(raw, cwd, payload)
    exists, _, _ = _current(place, payload)
    shown: dict[str, Any] = {"kind": "edit", **place.fields(), "file_exists": exists, "changes": _edits(tool_input)}
    if tool_input.get("replace_all") or tool_input.get("expected_replacements", 1) not in (1, None):
        shown["every_occurrence"] = True
    return shown


def _patch(tool_input: dict[str, Any], cwd: str | None, payload: dict[str, Any]) -> dict[str, Any] | None:
    text = patch_text(tool_input)
    if text is None:
        return None
    files: list[dict[str, Any]] = []
    for line in text.splitlines():
        match = PATCH_LINE.match(line.strip())
        if match is None:
            continue
        if match.group(3) is not None and files:
            files[-1]["moved_to"] = _Place(match.group(3).strip(), cwd, payload).fields()
            continue
        place = _Place(match.group(2).strip(), cwd, payload)
        exists, _, size = _current(place, payload)
        change = {"Add": "overwrite" if exists else "new file", "Update": "edit", "Delete": "delete"}[match.group(1)]
        files.append({**place.fields(), "change": change, **({"current_size": size} if exists else {})})
    return {"kind": "patch", "files": files[:50]} if files else None


def _fetch(tool_input: dict[str, Any]) -> dict[str, Any] | None:
    from urllib.parse import urlsplit

    url = tool_input.get("url") if isinstance(tool_input.get("url"), str) else None
    urls = (
        [url] if url else _URL.findall(str(tool_input.get("prompt") or ""))[:10]
    )  # Gemini's web_fetch names URLs in its prompt
    if not urls:
        return None
    method = str(tool_input.get("method") or "GET").upper()
    hosts = sorted({urlsplit(u).hostname or "" for u in urls} - {""})
    return {
        "kind": "fetch",
        "method": method,
        **(
            {"url": _bounded(urls[0], TEXT_CHARS)}
            if len(urls) == 1
            else {"urls": [_bounded(u, TEXT_CHARS) for u in urls]}
        ),
        "hosts": hosts,
    }


def _mcp(tool_name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """Server and tool; the arguments are the tool input, shown whole right after the effect (never twice)."""
    server, _, tool = tool_name[len(MCP_PREFIX) :].partition("__")
    return {"kind": "mcp", "server": server, "tool": tool, "arguments": sorted(tool_input)}


def effect_of(payload: dict[str, Any], *, for_key: bool = False) -> dict[str, Any] | None:
    """What the call in ``payload`` does, in the same shape for every client (None: shown as sent).

    ``for_key``: as the decision cache keys it, with a digest of the current file in place of the diff
    (the same information; a diff of a large file costs milliseconds a cache hit should not pay).
    """
    tool_name = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    kind = tool_kind(tool_name if isinstance(tool_name, str) else None)
    if kind is None or not isinstance(tool_input, dict):
        return None
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    if kind == "write":
        return _write(tool_input, cwd, payload, for_key)
    if kind == "edit":
        return _edit(tool_input, cwd, payload)
    if kind == "patch":
        return _patch(tool_input, cwd, payload)
    if kind == "fetch":
        return _fetch(tool_input)
    if kind == "mcp":
        return _mcp(str(tool_name), tool_input)
    if kind == "shell":
        return _shell(tool_input, cwd, payload, for_key)
    return None


def session_shown(spec: HookSpec, payload: dict[str, Any]) -> SessionContext | None:
    """The session context ``spec`` is shown on ``payload``: None for a context-free rule, else bounded (maybe empty).

    Raises SessionShapeError (a ValueError) when the payload's session is malformed.
    """
    if not reads_session(spec):
        return None
    from guard.session.context import SessionContext  # only session-aware rules pay for it

    raw = payload.get(SESSION_FIELD)
    shown = SessionContext() if raw is None else SessionContext.from_dict(raw).bounded()
    return shown.requests_only() if SmartSettings.of(spec).context == REQUEST_CONTEXT else shown
