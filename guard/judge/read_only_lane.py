"""The read-only lane: a rule that says reads cannot break it gets proven reads decided without a model.

A smart hook opts in with ``skip_read_only: true`` (a rule about deleting, overwriting,
pushing or uploading). A ``PreToolUse`` call is then allowed without a model call when
:func:`guard.protection.readonly.prove` proves it only reads, every path it names is inside
the project (the event's ``cwd``; never the root or the home folder), none is protected
(the hook's ``paths``: what the self-protection rule guards, and the event's own project
settings and transcript) and none looks like a credential (``.env``, ``.ssh``, ``*.pem`` …). Whatever is
not proven goes to the judge as before. The result says where it came from:
``tier: read_only`` and ``details.decided_by: read_only_lane``, in the decision JSON,
the audit log and ``guard view``.

Standard library only: this runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

from guard.core.decision import HookResult
from guard.core.spec import HookSpec

__all__ = ["LANE", "TIER", "lane_result"]

TIER = "read_only"
LANE = "read_only_lane"

#: Names of files and folders that hold credentials: a read of one is never in the lane.
_SENSITIVE_NAMES = frozenset(
    {".ssh", ".aws", ".gnupg", ".kube", ".docker", ".netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc",
     ".azure", ".gcloud", "gcloud", ".config", ".password-store", ".vault-token", "credentials", "credentials.json",
     "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "shadow", "gshadow", "sudoers", ".bash_history", ".zsh_history"}
)
_SENSITIVE_PATTERNS = ("*.pem", "*.key", "*.p12", "*.pfx", "*.keystore", ".env", ".env.*", "*.env", "*secret*", "*token*", "*passw*")
_WORD = re.compile(r"[^\s'\"|;&<>()`]+")
#: Proven reads the lane still leaves to the judge: they print the environment's secrets, or run what a
#: repository's own config names (``core.fsmonitor``, ``diff.external``, textconv drivers), which the agent can write.
_NOT_IN_LANE = frozenset({"env", "printenv", "git"})
#: Programs and tools that read a whole tree (their root defaults to the working directory).
_TREE_READERS = frozenset({"rg", "ag", "find", "fd", "tree", "du", "grep", "glob", "search_file_content", "grep_search", "file_search",
                           "find_file", "glob_tool", "read_many_files"})
_RECURSIVE_OPTION = re.compile(r"^-[a-zA-Z]*[rR][a-zA-Z]*$|^--(?:dereference-)?recursive$|^-d$|^--directories=recurse$")
_GLOB = re.compile(r"[*?\[]")
_BARE_CD = re.compile(r"(?:^|[;&|(\n])\s*cd\s*(?:$|[;&|)\n]|-(?:\s|$))")


def _sensitive(word: str) -> bool:
    parts = [p for p in word.lower().split("/") if p]
    return any(p in _SENSITIVE_NAMES or any(fnmatch.fnmatchcase(p, pat) for pat in _SENSITIVE_PATTERNS) for p in parts)


def _strings(value: Any) -> Iterator[str]:
    """Every string in a tool input, however deep."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _candidates(tool_input: Mapping[str, Any]) -> Iterator[str]:
    """Each word of each string that could be a path (options' values included: ``--file=x``)."""
    for text in _strings(tool_input):
        for word in _WORD.findall(text):
            yield word.split("=", 1)[1] if word.startswith("-") and "=" in word else word


def _outside(cwd: str) -> str | None:
    """Why the lane is closed in ``cwd``: a project it is not (the root, the home folder or above)."""
    home = os.path.expanduser("~")
    if cwd == "/" or not os.path.isabs(cwd) or home == cwd or home.startswith(cwd.rstrip("/") + "/"):
        return f"{cwd} is not a project folder"
    return None


def _place(word: str, cwd: str, protected: tuple[tuple[str, str], ...]) -> str | None:
    """Why ``word``, read as a path, keeps the call out of the lane: outside the project, or protected."""
    target = os.path.normpath(os.path.join(cwd, os.path.expanduser(word)))
    try:
        forms = {target, os.path.realpath(target)}
    except (OSError, ValueError):
        return f"{word!r} cannot be resolved"
    for form in forms:
        if form == "/dev/null":
            continue
        if form != cwd and not form.startswith(cwd + "/"):
            return f"{word!r} is outside the project"
        glob = bool(_GLOB.search(form))
        for label, path in protected:
            if (glob and fnmatch.fnmatchcase(path, form)) or form == path or form.startswith(path.rstrip("/") + "/"):
                return f"it names {path} ({label})"
    return None


def _reads_a_tree(tool: str, words: list[str]) -> bool:
    """Whether the call may read below the folders it names (or below its working directory): a search, a ``cd``."""
    if tool in _TREE_READERS:
        return True
    programs = set(words) & (_TREE_READERS | {"cd", "ls"})
    return bool(programs - {"grep", "ls"}) or (bool(programs) and any(_RECURSIVE_OPTION.match(w) for w in words))


def _above_guarded(root: str, cwd: str, protected: tuple[tuple[str, str], ...]) -> str | None:
    """Why reading the tree at ``root`` would read a protected path or a credential file that is there."""
    folder = os.path.normpath(os.path.join(cwd, os.path.expanduser(root)))
    for label, path in protected:
        if path.startswith(folder.rstrip("/") + "/") and os.path.lexists(path):
            return f"{root!r} holds {path} ({label})"
    try:
        names = os.listdir(folder) if os.path.isdir(folder) else []
    except OSError:
        return None
    found = [name for name in names if _sensitive(name)]
    return f"{root!r} holds {found[0]!r}, which may hold credentials" if found else None


def _guarded(payload: Mapping[str, Any], spec: HookSpec) -> str | None:
    """Why the call, though it only reads, is not for the lane: it reads outside the project, a protected path or a credential."""
    from guard.protection import targets

    tool_input = payload.get("tool_input")
    assert isinstance(tool_input, Mapping)
    cwd = os.path.normpath(str(payload.get("cwd") or os.getcwd()))
    closed = _outside(cwd)
    if closed:
        return closed
    protected = spec.paths + targets.event_paths(payload)
    words = list(_candidates(tool_input))
    tool = str(payload.get("tool_name") or "").lower()
    if set(words) & _NOT_IN_LANE:
        return f"{sorted(set(words) & _NOT_IN_LANE)[0]} is left to the judge"
    if "cd" in words and _BARE_CD.search(str(tool_input.get("command") or "")):
        return "cd without a folder goes home"
    for word in words:
        if "$" in word or "`" in word:
            return f"{word!r} expands at run time"
        if _sensitive(word):
            return f"{word!r} may hold credentials"
        problem = _place(word, cwd, protected)
        if problem:
            return problem
    if _reads_a_tree(tool, words):
        for root in [cwd, *(w for w in words if not w.startswith("-"))]:
            problem = _above_guarded(root, cwd, protected)
            if problem:
                return problem
    return None


def lane_result(spec: HookSpec, payload: Mapping[str, Any], env: Mapping[str, str] | None = None) -> HookResult | None:
    """The allow the lane gives ``spec`` for this call without a model, or None when the judge must decide."""
    if not spec.skip_read_only or spec.event != "pre_tool_use":
        return None
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, Mapping):
        return None
    from guard.protection.readonly import prove

    proof = prove(str(payload.get("tool_name") or ""), tool_input, str(payload.get("cwd") or os.getcwd()), os.environ if env is None else env)
    if not proof.proven or _guarded(payload, spec) is not None:
        return None
    return HookResult(id=spec.id, type="smart", decision="allow", reason=f"proven read-only ({proof.reason}); the rule says reads cannot break it",
                      tier=TIER, latency_ms=0.0, cost_usd=0.0, details={"decided_by": LANE})
