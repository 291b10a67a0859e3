"""Deferred code: what the agent wrote that a call may run without naming it, as one rule's judge is shown it.

A test runner runs the test files the agent wrote; ``python x.py`` imports the module it just rewrote; ``make`` runs
the Makefile. When a call may run project code it does not name (:func:`guard.session.call_effects.runs_code`), the
gate puts the record of what the agent wrote on the payload (:mod:`guard.session.provenance`), and each rule's judge
is shown, after the call's effect, every changed file no judge of *that* rule has yet allowed to run:

- most relevant first: files the command names, then files tools run unnamed (``conftest.py``, ``Makefile``,
  ``package.json`` …) and modules a script it runs imports, then tests, then other code, then the rest;
- each as a diff against its content before the agent's first change where guard kept that, else whole; a deleted
  file as deleted;
- bounded (:data:`MAX_FILE_CHARS` a file, :data:`MAX_CHARS` in all); what is cut says so, and the files left out are
  named (``left_out``), so the judge knows it has not seen everything.

A file shown whole (not cut) to a judge that then allowed the call is recorded as seen by that rule (the result's
``details.deferred.seen``), and is not shown to it again until it changes. A script the call runs by name, shown
whole in its effect (``runs``), counts too. Only when nothing is unseen, and the project's walk was complete, may a
later call of the same code be answered from an earlier judgement (:func:`code_key_parts`): "judged once".

Standard library only: the ``guard hook`` fast path keys the cache on this view.
"""

from __future__ import annotations

import fnmatch
import os
import re
from typing import TYPE_CHECKING, Any

from guard.core.session import WRITTEN_FIELD
from guard.core.spec import SmartSettings

if TYPE_CHECKING:
    from guard.core.spec import HookSpec

__all__ = ["MAX_CHARS", "MAX_FILE_CHARS", "DeferredView", "code_key_parts", "deferred_view"]

#: The most characters of one file's diff or content shown.
MAX_FILE_CHARS = 6000
#: The most characters of all the files shown together.
MAX_CHARS = 12000
#: Files named in ``left_out`` at most (the count covers the rest).
_MAX_NAMED = 40
_WHY = (
    "this call may run project files without naming them (a test runner, an interpreter importing modules, a build "
    "tool): these files were written or changed by the agent, and no judge of this rule has seen them run yet"
)
#: Files build, test and docs tools read or run without being named, lower-cased.
_RUN_UNNAMED = (
    "conftest.py",
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "tox.ini",
    "noxfile.py",
    "pytest.ini",
    "manage.py",
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
    "__init__.py",
    "makefile",
    "gnumakefile",
    "*.mk",
    "justfile",
    "package.json",
    "*.config.js",
    "*.config.ts",
    "*.config.mjs",
    "cargo.toml",
    "build.rs",
    "go.mod",
    "cmakelists.txt",
    "build.gradle*",
    "pom.xml",
    "conf.py",
    "mkdocs.yml",
    "meson.build",
    "taskfile.yml",
    "rakefile",
    "gemfile",
)
_TEST = re.compile(r"(?:^|/)(?:tests?/|test_[^/]*$|[^/]*_test\.\w+$|[^/]*\.(?:test|spec)\.\w+$)")
_CODE = frozenset(
    {
        ".py",
        ".pyx",
        ".js",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".jsx",
        ".sh",
        ".bash",
        ".rb",
        ".go",
        ".rs",
        ".java",
        ".kt",
        ".c",
        ".cc",
        ".cpp",
        ".h",
        ".php",
        ".pl",
        ".lua",
        ".r",
        ".swift",
        ".scala",
        ".cs",
    }
)


class DeferredView:
    """One rule's view of the deferred code: the block its judge is shown, the files it saw whole, whether that was all."""

    __slots__ = ("block", "complete", "seen", "unseen")

    def __init__(
        self, block: dict[str, Any] | None, seen: list[tuple[str, str]], complete: bool, unseen: list[tuple[str, str]]
    ) -> None:
        self.block, self.seen, self.complete, self.unseen = block, seen, complete, unseen


def _state(payload: dict[str, Any]) -> dict[str, Any] | None:
    state = payload.get(WRITTEN_FIELD)
    return state if isinstance(state, dict) and "project" in state else None


def _walk_complete(state: dict[str, Any]) -> bool:
    """Whether the project's walk for changes covered all of it (a project tracked from this call on has nothing to walk)."""
    from guard.session.provenance import TRACKED_FROM_NOW

    return state.get("scan") in ("complete", TRACKED_FROM_NOW)


def _unseen(spec: HookSpec, state: dict[str, Any]) -> list[dict[str, Any]]:
    """The changed files no judge of ``spec``'s rule has allowed to run in their current content."""
    from guard.session.written import rule_key

    seen = state.get("seen", {}).get(rule_key(SmartSettings.of(spec)), {})
    return [f for f in state.get("files", []) if f["digest"] not in seen.get(f["path"], ())]


def _rank(file: dict[str, Any], command: str, scripts: str, project: str) -> int:
    """0 (most relevant) to 4: named by the command, run unnamed or imported, a test, other code, anything else."""
    path = file["path"]
    relative = os.path.relpath(path, project)
    name = os.path.basename(path).lower()
    stem = os.path.splitext(name)[0]
    if relative in command or path in command or (name in command and len(name) > 3):
        return 0
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in _RUN_UNNAMED) or (
        stem and re.search(rf"\b(?:import|from)\s+[\w.]*\b{re.escape(stem)}\b", scripts)
    ):
        return 1
    if _TEST.search(relative):
        return 2
    return 3 if os.path.splitext(name)[1] in _CODE else 4


def _text(data: bytes) -> str | None:
    """The content as text, or None for a binary file (a NUL byte)."""
    return None if b"\0" in data[:8192] else data.decode(errors="replace")


def _cut(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    head = limit * 2 // 3
    return f"{text[:head]}\n[… {len(text) - limit:,} characters not shown …]\n{text[-(limit - head) :]}", True


def _shown(file: dict[str, Any], base: str | None, project: str, limit: int) -> tuple[dict[str, Any], str | None, bool]:
    """(what the judge is shown of one file, the digest of the content shown, whether it was shown whole)."""
    from guard.session.written import DELETED, NEW, content_digest

    shown: dict[str, Any] = {"path": os.path.relpath(file["path"], project), "written_by": file["route"]}
    if not file.get("confirmed"):
        shown["recorded"] = "when the call was allowed (the client sent no PostToolUse for it)"
    if file["digest"] == DELETED:
        return {**shown, "change": "deleted"}, DELETED, True
    try:
        with open(file["path"], "rb") as fh:
            data = fh.read(64 * 1024 + 1)
    except OSError:
        return {**shown, "change": "changed", "content": "not shown: it cannot be read"}, None, False
    text = _text(data)
    if text is None or len(data) > 64 * 1024:
        return (
            {
                **shown,
                "change": "changed",
                "content": f"not shown: {'binary' if text is None else 'larger than 64 KiB'}",
            },
            None,
            False,
        )
    digest = content_digest(data)
    if base is not None and file.get("base") not in (None, NEW):
        import difflib

        diff = "".join(
            difflib.unified_diff(
                base.splitlines(keepends=True), text.splitlines(keepends=True), "before the agent", "now"
            )
        )
        body, cut = _cut(diff, limit)
        return {**shown, "change": "changed", "diff": body, **({"cut": True} if cut else {})}, digest, not cut
    body, cut = _cut(text, limit)
    change = "new file" if file.get("base") == NEW else "changed (no earlier content kept)"
    return {**shown, "change": change, "content": body, **({"cut": True} if cut else {})}, digest, not cut


def _run_scripts(payload: dict[str, Any]) -> list[tuple[str, bytes | None]]:
    """The scripts the call runs by name (their effect shows them, cut when long): (path, content when shown whole)."""
    from guard.judge.view import SCRIPT_HEAD, SCRIPT_TAIL, scripts_run
    from guard.protection.readonly import command_text

    tool_input = payload.get("tool_input")
    cwd = payload.get("cwd")
    command = command_text(tool_input) if isinstance(tool_input, dict) else None
    if not command or not isinstance(cwd, str):
        return []
    found: list[tuple[str, bytes | None]] = []
    for folder, raw in scripts_run(command):
        if folder is None or raw == "$":
            continue
        path = os.path.realpath(os.path.join(cwd, folder, os.path.expanduser(raw)))
        try:
            with open(path, "rb") as fh:
                data: bytes | None = fh.read(SCRIPT_HEAD + SCRIPT_TAIL + 1)
        except OSError:
            continue
        whole = data is not None and len(data) <= SCRIPT_HEAD + SCRIPT_TAIL and _text(data) is not None
        found.append((path, data if whole else None))
    return found


def deferred_view(spec: HookSpec, payload: dict[str, Any], *, for_key: bool = False) -> DeferredView | None:
    """What ``spec``'s judge is shown of the deferred code on ``payload`` (None: the call runs no unnamed project code).

    A script the call runs by name is shown in its effect (``runs``, keyed on its digest) and never here again.
    ``for_key``: only which files and digests would be shown, without reading them (what the decision cache keys on).
    """
    state = _state(payload)
    if state is None:
        return None
    from guard.session.written import content_digest  # after the check: a call with no record loads nothing more

    scripts = _run_scripts(payload)
    named = {path for path, _ in scripts}
    unseen = [f for f in _unseen(spec, state) if f["path"] not in named]
    pairs = [(f["path"], str(f["digest"])) for f in unseen]
    if for_key:
        cut = not _walk_complete(state)
        keyed: dict[str, Any] | None = (
            {"files": sorted(pairs), **({"walk_cut": True} if cut else {})} if pairs or cut else None
        )
        return DeferredView(keyed, [], False, pairs)
    command = str((payload.get("tool_input") or {}).get("command") or "")
    script_text = "\n".join(data.decode(errors="replace") for _, data in scripts if data is not None)
    project = state["project"]
    ordered = sorted(unseen, key=lambda f: (_rank(f, command, script_text, project), f["path"]))
    files: list[dict[str, Any]] = []
    seen = [(path, content_digest(data)) for path, data in scripts if data is not None]
    left: list[str] = []
    budget = MAX_CHARS
    complete = _walk_complete(state)
    for file in ordered:
        if budget < 200:
            left.append(os.path.relpath(file["path"], project))
            continue
        shown, digest, whole = _shown(
            file, state.get("bases", {}).get(file["path"]), project, min(MAX_FILE_CHARS, budget)
        )
        budget -= sum(len(str(v)) for v in shown.values())
        files.append(shown)
        if whole and digest is not None and digest == file["digest"]:
            seen.append((file["path"], digest))
        else:
            complete = False
    if left:
        complete = False
    if not files and not left:
        return DeferredView(None, seen, complete, [])
    block: dict[str, Any] = {"why": _WHY, "files": files}
    if left:
        block["left_out"] = left[:_MAX_NAMED] + (
            [f"… and {len(left) - _MAX_NAMED} more"] if len(left) > _MAX_NAMED else []
        )
        block["left_out_note"] = f"{len(left)} more changed files were not shown: this view is incomplete"
    if not _walk_complete(state):
        block["walk"] = (
            f"the walk of the project for changes was cut ({state.get('scan')}): other files may have changed"
        )
    return DeferredView(block, seen, complete, pairs)


def code_key_parts(
    spec: HookSpec, payload: dict[str, Any], *, judged: list[tuple[str, str]] | None = None
) -> dict[str, Any] | None:
    """What "the same code" is for an answer from an earlier judgement: the call's run identity and its files' digests,
    or None when it cannot be answered so (no identity, the walk was cut, or a changed file this rule's judges have not
    seen run). ``judged``: files the judgement just made saw whole, counted as seen (storing after a judgement)."""
    state = _state(payload)
    identity = state.get("identity") if state is not None else None
    if state is None or not isinstance(identity, dict):
        return None
    if not _walk_complete(state):
        return None
    done = set(judged or ())
    keyed = set(identity["code"])  # what it runs by name is keyed on its digest
    if any((f["path"], str(f["digest"])) not in done for f in _unseen(spec, state) if f["path"] not in keyed):
        return None
    return {"identity": identity["run"], "code": identity["code"]}
