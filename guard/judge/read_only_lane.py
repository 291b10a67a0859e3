"""The read-only lane: a rule that says reads cannot break it gets proven reads decided without a model.

A smart hook opts in with ``skip_read_only: true`` (a rule about deleting, overwriting,
pushing or uploading). A ``PreToolUse`` call is then allowed without a model call when
:func:`guard.protection.readonly.prove` proves it only reads, every path it names is inside
the project (the event's ``cwd``; never the root or the home folder), none is protected
(the hook's ``paths``: what the self-protection rule guards, and the event's own project
settings and transcript) and none looks like a credential (``.env``, ``.ssh``, ``*.pem`` …: as typed, as a glob
matches, where a link leads; a file with a second name is left out, as a hard link may be one); a search of a tree
that prints contents (``grep -r``, ``rg``) is left out when a credential-looking or hard-linked file is anywhere below; a ``git diff`` / ``show`` /
``grep`` / ``log -p`` prints the history, which may hold a credential no file shows, so is left to the judge. Whatever is
not proven goes to the judge as before. The result says where it came from:
``tier: read_only`` and ``details.decided_by: read_only_lane``, in the decision JSON,
the audit log and ``guard view``.

``skip_project_writes: true`` (a rule about effects outside the project) opens the same lane to
a call whose reading programs also redirect output (``>``, ``>>``), or whose file utilities
(:mod:`guard.protection.file_changes`: ``rm``, ``touch``, ``mkdir``, ``cp``, ``mv``, ``sed -i``) change,
only plain files and folders of the project named as written: no hidden part, no file other programs run unnamed (``conftest.py``,
``Makefile``, ``jest.config.js``, ``*.pth`` … :mod:`guard.protection.run_unnamed`, or a file the project's configs
name), no module Python would import instead of an installed or standard one
(:mod:`guard.protection.installed_modules`), not a link, not executable, and no ``cd`` in the line. Its allows
say ``tier: project_write``, ``details.decided_by: project_write_lane``.

Standard library only: this runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Iterator, Mapping
from typing import Any

from guard.core.decision import HookResult
from guard.core.spec import HookSpec, SmartSettings
from guard.protection.credentials import looks_like_credential

__all__ = ["LANE", "LANE_TIERS", "TIER", "WRITE_LANE", "WRITE_TIER", "lane_result"]

TIER = "read_only"
LANE = "read_only_lane"
#: ``skip_project_writes``: a call proven to write only files inside the project, running nothing.
WRITE_TIER = "project_write"
WRITE_LANE = "project_write_lane"
#: The tiers a lane decides with (no model): what ``guard eval`` scores as slices of their own.
LANE_TIERS = (TIER, WRITE_TIER)

_WORD = re.compile(r"[^\s'\"|;&<>()`]+")
#: Proven reads the lane still leaves to the judge: they print the environment's secrets.
_NOT_IN_LANE = frozenset({"env", "printenv"})
#: git subcommands that print contents from anywhere in the tree (a diff, a patch, a search), read like ``grep -r``;
#: the options that make a diff print only names and counts.
_GIT_CONTENTS = frozenset({"diff", "show", "grep"})
#: Options that print what the files held: a patch (``-p``, ``-u``, ``-U3``, ``-L``, alone or clustered: ``-wp``;
#: ``--binary`` implies one), or each line ``--check`` finds fault with.
_GIT_PATCH = re.compile(r"^-[^-]*[puUL]|^--(?:patch|unified|word-diff|full-diff|binary|check)(?:=.*)?$")
#: git's pickaxe (``-S``, ``-G``, alone or after clustered flags): which commits or files hold a string is read from the
#: contents of every version, an oracle into a credential the history holds.
_GIT_PICKAXE = re.compile(r"^-[^-]*[SG]")
_GIT_SUMMARY = frozenset(
    {"--stat", "--shortstat", "--numstat", "--name-only", "--name-status", "--no-patch", "-s", "--quiet"}
)
#: Programs and tools that read a whole tree (their root defaults to the working directory).
_TREE_READERS = frozenset(
    {
        "rg",
        "ag",
        "find",
        "fd",
        "tree",
        "du",
        "grep",
        "glob",
        "search_file_content",
        "grep_search",
        "file_search",
        "find_file",
        "glob_tool",
        "read_many_files",
    }
)
#: Programs and tools among them that print what the files they walk hold (the others print names, sizes and dates).
_CONTENT_SEARCHES = frozenset(
    {"grep", "egrep", "fgrep", "rg", "diff", "search_file_content", "grep_search", "read_many_files"}
)
_RECURSIVE_OPTION = re.compile(r"^-[a-zA-Z]*[rR][a-zA-Z]*$|^--(?:dereference-)?recursive$|^-d$|^--directories=recurse$")
_GLOB = re.compile(r"[*?\[]")
#: Programs whose first operand is a pattern or a script unless an option gives it.
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "sed"})
_PATTERN_OPTIONS = ("-e", "-f", "--regexp", "--file", "--expression")
#: bash builtins among the reading programs: PATH is not searched for them.
_BUILTINS = frozenset({"echo", "printf", "pwd", "true", "false", ":", "cd", "test", "[", "type"})
#: A name a written file may have, each part of its path below the project: no dot first (``.git``, ``.github``,
#: ``.claude``, ``.envrc``, ``.mcp.json``: what tools read as config), no dash first (an option), nothing the shell expands.
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+,=@-]*$")
#: The most files and folders a search of a tree is looked through for credentials before the lane leaves it to the judge.
_MOST_LOOKED_AT = 20_000
_BARE_CD = re.compile(r"(?:^|[;&|(\n])\s*cd\s*(?:$|[;&|)\n]|-(?:\s|$))")


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


def _operands(command: str) -> list[str] | None:
    """The words of a shell command as the shell splits them, and its redirection targets, less a grep or sed pattern
    (not a file it reads); None when the line cannot be read."""
    from guard.command_analysis.shell_syntax import ShellSyntaxError, parse

    try:
        script = parse(command)
    except ShellSyntaxError:
        return None
    words: list[str] = []
    for pipeline in script.pipelines:
        for part in pipeline.commands:
            texts = [w.text for w in part.words]
            named = any(
                t.startswith(_PATTERN_OPTIONS) for t in texts[1:]
            )  # -e / -f give the pattern: every operand is a file
            if texts and texts[0] in _PATTERN_FIRST and not named:
                first = next((i for i, t in enumerate(texts[1:], 1) if not t.startswith("-")), None)
                texts = [t for i, t in enumerate(texts) if i != first]
            words += texts + [r.target.text for r in part.redirects]
    return words


def _git_reads_contents(command: str) -> bool:
    """Whether a ``git`` command of the line prints files' contents from the repository: ``git diff``, ``git show``,
    ``git grep``, ``git log -p`` (not ``git diff --stat``, ``git log --oneline``, ``git status``: names and counts; not
    ``git show --stat`` of the last commit, though ``git show --stat SHA`` prints the blob SHA names)."""
    from guard.command_analysis.shell_syntax import ShellSyntaxError, parse

    try:
        script = parse(command)
    except ShellSyntaxError:
        return True
    for pipeline in script.pipelines:
        for part in pipeline.commands:
            texts = [w.text for w in part.words]
            if not texts or os.path.basename(texts[0]) != "git":
                continue
            args = [t for t in texts[1:] if t not in ("--no-pager", "-P", "--no-optional-locks")]
            sub, options = (args[0], args[1:]) if args else ("", [])
            patch = any(_GIT_PATCH.match(o) or _GIT_PICKAXE.match(o) for o in options)
            # git show prints a blob, or a tag pointing at one, whole whatever its options say: git show --stat <sha>
            named = sub == "show" and any(not o.startswith("-") for o in options)
            if (sub in _GIT_CONTENTS and (patch or named or not _GIT_SUMMARY & set(options))) or (
                sub == "log" and patch
            ):
                return True
    return False


def _planted(command: str, cwd: str, env: Mapping[str, str]) -> str | None:
    """Why a program the line runs may be one the agent wrote: PATH finds it in the project or the home folder
    (an activated ``.venv/bin``, ``~/.local/bin``), or through a relative PATH entry."""
    import shutil

    from guard.command_analysis.shell_syntax import ShellSyntaxError, parse

    try:
        script = parse(command)
    except ShellSyntaxError:
        return "the command cannot be read"
    path = env.get("PATH", os.defpath)
    homes = [h.rstrip("/") + "/" for h in (env.get("HOME"), os.path.expanduser("~")) if h and h != "/"]
    for pipeline in script.pipelines:
        for part in pipeline.commands:
            head = part.words[0].text if part.words else ""
            found = None if not head or "/" in head or head in _BUILTINS else shutil.which(head, path=path)
            if found is None:
                continue  # a builtin, a system path the prover allowed, or nothing to run
            real = os.path.realpath(found)
            if not os.path.isabs(found) or real.startswith(
                (cwd.rstrip("/") + "/", os.path.realpath(cwd).rstrip("/") + "/", *homes)
            ):
                return f"{head} is {found}, a program the agent may have written"
    return None


def _candidates(tool_name: str, tool_input: Mapping[str, Any]) -> Iterator[str]:
    """Each word of the call that could be a path (options' values included: ``--file=x``): a shell line's words, or each
    string of a tool's input whole (Read's ``file_path`` may hold a space, a quote or a ``;``: ``a b`` a link to
    ``~/.ssh/id_rsa``) and each word in it."""
    from guard.protection.readonly import command_text, is_shell_tool

    command = command_text(tool_input) if is_shell_tool(tool_name) else None
    shell = _operands(command) if command is not None else None
    texts = list(_strings(tool_input))
    words = shell if shell is not None else [*texts, *(w for text in texts for w in _WORD.findall(text))]
    for word in words:
        yield word.split("=", 1)[1] if word.startswith("-") and "=" in word else word


def _outside(cwd: str) -> str | None:
    """Why the lane is closed in ``cwd``: a project it is not (the root, the home folder or above)."""
    home = os.path.expanduser("~")
    if cwd == "/" or not os.path.isabs(cwd) or home == cwd or home.startswith(cwd.rstrip("/") + "/"):
        return f"{cwd} is not a project folder"
    odd = _odd_folder(cwd, hidden=False)
    return (
        f"{cwd} is inside {odd!r}, a folder of credentials (a shell's cd moved there), not a project" if odd else None
    )


def _odd_folder(folder: str, *, hidden: bool) -> str | None:
    """The part of ``folder``'s path below the home folder named like credentials (or, with ``hidden``, any hidden part,
    anywhere in the path): a client's shell that did ``cd ~/.ssh`` reports that folder as the event's ``cwd``."""
    home = os.path.expanduser("~").rstrip("/") + "/"
    below = folder[len(home) :].split("/") if folder.startswith(home) else []
    return next((part for part in below if looks_like_credential(part)), None) or (
        next((part for part in folder.split("/") if part.startswith(".")), None) if hidden else None
    )


def _place(word: str, cwd: str, protected: tuple[tuple[str, str], ...]) -> str | None:
    """Why ``word``, read as a path, keeps the call out of the lane: outside the project, or protected."""
    from guard.protection.glob_matching import glob_matches
    from guard.protection.naming import TooLarge

    joined = os.path.join(cwd, os.path.expanduser(word))
    target = os.path.normpath(joined)
    try:  # the kernel takes ``..`` after following a link: ``e/../x`` with ``e`` -> /etc is /x
        forms = {target, os.path.realpath(target), os.path.realpath(joined)}
        if _GLOB.search(target):  # what it matches, through links too: sub/*/x where sub/g leads out of the project
            forms.update(os.path.realpath(match) for match in glob_matches(target))
    except TooLarge:
        return f"{word!r} matches more names than guard looks at"
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
        if looks_like_credential(form[len(cwd) :]):  # what a glob matches, or a link leads to: cat .e*, cat link
            return f"{word!r} reaches {os.path.relpath(form, cwd)!r}, which may hold credentials"
        odd = None if glob else _odd_file(form)
        if odd:
            return f"{word!r} is {odd}"
    return None


def _odd_file(path: str, *, follow: bool = True) -> str | None:
    """What ``path`` is when reading it may read something other than a plain file of the project: a file with another
    name (a hard link the agent made to a secret reads as it), a device (``mknod disk b 8 0`` reads the whole disk), a
    FIFO or a socket (what another process writes)."""
    try:
        info = os.stat(path) if follow else os.lstat(path)
    except OSError:
        return None
    if stat.S_ISREG(info.st_mode):
        return (
            "a file with other names (a hard link may be a credential or a protected file)"
            if info.st_nlink > 1
            else None
        )
    if stat.S_ISDIR(info.st_mode) or stat.S_ISLNK(info.st_mode):
        return None
    return "a device, a FIFO or a socket, not a file"


def _write_problem(word: str, cwd: str, env: Mapping[str, str]) -> str | None:
    """Why writing to ``word`` keeps the call out of the write lane: it is not a plain, regular file of the project that
    only this path names (a symlink resolved, no second hard link to a file elsewhere), or a later command runs it unnamed
    (write now, run later): a file tools run by convention, one the project's configs name, a module Python would import
    instead of its own or an installed one."""
    problem = _name_problem(word, cwd, env)
    if problem is not None:
        return problem
    target = os.path.realpath(os.path.join(cwd, word))
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return None  # a new file
    except OSError:
        return f"it writes {word!r}, which cannot be looked at"
    if not stat.S_ISREG(info.st_mode):
        return f"it writes {word!r}, which is not a regular file"
    if info.st_nlink > 1:
        return f"it writes {word!r}, a file with other names (a hard link may be outside the project)"
    if info.st_mode & 0o111:
        return f"it writes {word!r}, an executable file"
    return None


def _folder_problem(word: str, cwd: str, env: Mapping[str, str]) -> str | None:
    """Why making the folder ``word`` (``mkdir``) keeps the call out of the write lane: its name is not one the lane writes
    (:func:`_name_problem`: an empty folder can stand in for a package), or something other than a folder is there."""
    problem = _name_problem(word, cwd, env)
    if problem is not None:
        return problem
    target = os.path.join(cwd, word)
    if os.path.lexists(target) and (os.path.islink(target) or not os.path.isdir(target)):
        return f"it makes the folder {word!r}, where something else is"
    return None


def _name_problem(word: str, cwd: str, env: Mapping[str, str]) -> str | None:
    """Why the path ``word`` is not one the write lane changes: outside the project (symlinks resolved), below a hidden or
    credential folder, a part of it not a plain name, or a file a later command runs unnamed."""
    from guard.protection.installed_modules import stands_in
    from guard.protection.run_unnamed import named_by_config, run_unnamed

    target = os.path.realpath(os.path.join(cwd, word))
    root = os.path.realpath(cwd)
    if not target.startswith(root.rstrip("/") + "/"):
        return f"it writes {word!r}, outside the project"
    odd = _odd_folder(root, hidden=True)
    if odd is not None:
        return f"the project folder {root} is inside {odd!r}, a hidden or credential folder"
    relative = os.path.relpath(target, root)
    parts = relative.split("/")
    odd = next((part for part in parts if not _PLAIN_NAME.match(part)), None)
    if odd is not None:
        return f"it writes {word!r}: {odd!r} is not a plain name (a hidden file or folder is often a tool's config)"
    run = run_unnamed(parts)
    if run is not None:
        return f"it writes {word!r}: a file like {run[0]!r} is run or read unnamed ({run[1]})"
    config = named_by_config(relative, root)
    if config is not None:
        return f"it writes {word!r}, which the project's {config} names: a tool runs it unnamed"
    shadow = stands_in(parts, root, env)
    return f"it writes {word!r}: {shadow}" if shadow is not None else None


def _reads_a_tree(tool: str, words: list[str]) -> bool:
    """Whether the call may read below the folders it names (or below its working directory): a search, a ``cd``."""
    if tool in _TREE_READERS:
        return True
    programs = set(words) & (_TREE_READERS | {"cd", "ls"})
    return bool(programs - {"grep", "ls"}) or (bool(programs) and any(_RECURSIVE_OPTION.match(w) for w in words))


def _above_guarded(root: str, cwd: str, protected: tuple[tuple[str, str], ...]) -> str | None:
    """Why reading the tree at ``root`` would read a protected path that is there."""
    folder = os.path.normpath(os.path.join(cwd, os.path.expanduser(root)))
    for label, path in protected:
        if path.startswith(folder.rstrip("/") + "/") and os.path.lexists(path):
            return f"{root!r} holds {path} ({label})"
    return None


def _guarded(
    payload: Mapping[str, Any], spec: HookSpec, env: Mapping[str, str], names: tuple[str, ...] = (), walks: bool = False
) -> str | None:
    """Why the call, though it only reads, is not for the lane: it reads outside the project, a protected path or a credential,
    or runs a program the agent may have put on PATH. ``names``: what the proof found the programs open, after bash's
    expansions (``cat {../x,y}`` opens ``../x``), checked with the words as typed; ``walks``: the proof read a program that
    searches a whole tree (``grep --dereferen``, an abbreviation of ``-R``)."""
    from guard.protection import targets
    from guard.protection.readonly import command_folder, command_text, is_shell_tool

    tool_input = payload.get("tool_input")
    assert isinstance(tool_input, Mapping)
    cwd = os.path.normpath(str(payload.get("cwd") or os.getcwd()))
    closed = _outside(cwd)
    if closed:
        return closed
    protected = SmartSettings.of(spec).paths + targets.event_paths(payload)
    folder = command_folder(tool_input)
    if folder is not None:  # the command runs there (Codex's workdir, Gemini's directory): its words are read from it
        problem = _place(folder, cwd, protected)
        if problem:
            return f"it runs in {folder}: {problem}"
        cwd = os.path.normpath(os.path.join(cwd, folder))
    tool = str(payload.get("tool_name") or "").lower()
    words = list(_candidates(tool, tool_input)) + list(names)
    if set(words) & _NOT_IN_LANE:
        return f"{sorted(set(words) & _NOT_IN_LANE)[0]} is left to the judge"
    if "cd" in words and _BARE_CD.search(str(tool_input.get("command") or "")):
        return "cd without a folder goes home"
    for word in words:
        if "$" in word or "`" in word:
            return f"{word!r} expands at run time"
        if "\n" in word:
            return "a quoted word runs over lines (or a quote is never closed)"
        if looks_like_credential(word):
            return f"{word!r} may hold credentials"
        problem = _place(word, cwd, protected)
        if problem:
            return problem
    command = command_text(tool_input) if is_shell_tool(tool) else None
    planted = _planted(command, cwd, env) if command is not None else None
    if planted:
        return planted
    if command is not None and "git" in words and _git_reads_contents(command):
        return (
            "git diff, show, grep, log -p and the pickaxe (-S, -G) read the contents of the repository's index and "
            "history, which may hold a credential no file of the folder shows"
        )
    if walks or _reads_a_tree(tool, words):
        for root in [cwd, *(w for w in words if not w.startswith("-"))]:
            problem = _above_guarded(root, cwd, protected)
            if problem:
                return problem
        prints_contents = tool in _CONTENT_SEARCHES or any(os.path.basename(w) in _CONTENT_SEARCHES for w in words)
        return _credential_below(cwd) if prints_contents else None
    return None


def _credential_below(folder: str) -> str | None:
    """Why a search of the tree at ``folder`` may print a credential: a file or folder below it named like one, a file
    with other names (a hard link to one), a device, a FIFO or a socket; links are not followed, as the proven searches do not follow them.
    Past :data:`_MOST_LOOKED_AT` entries, the tree is too large to look through."""
    pending, seen = [folder], 0
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    seen += 1
                    if seen > _MOST_LOOKED_AT:
                        return f"{folder!r} holds more than {_MOST_LOOKED_AT} files and folders to look through"
                    if looks_like_credential(entry.name):
                        return f"{os.path.relpath(entry.path, folder)!r} may hold credentials"
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                        continue
                    odd = None if entry.is_symlink() else _odd_file(entry.path, follow=False)
                    if odd:
                        return f"{os.path.relpath(entry.path, folder)!r} is {odd}"
        except OSError:
            return f"{current!r} cannot be looked through"
    return None


def lane_result(spec: HookSpec, payload: Mapping[str, Any], env: Mapping[str, str] | None = None) -> HookResult | None:
    """The allow a lane gives ``spec`` for this call without a model, or None when the judge must decide."""
    lane = SmartSettings.of(spec).lane
    if lane is None or spec.event != "pre_tool_use":
        return None
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, Mapping):
        return None
    from guard.protection.readonly import prove

    env = os.environ if env is None else env
    cwd = os.path.normpath(str(payload.get("cwd") or os.getcwd()))
    writes = lane == "project_writes"
    proof = prove(str(payload.get("tool_name") or ""), tool_input, cwd, env, writes=writes, changes=writes)
    if not proof.proven or _guarded(payload, spec, env, proof.names, proof.walks) is not None:
        return None
    if proof.written or proof.made:
        if any(_write_problem(word, cwd, env) for word in proof.written) or any(
            _folder_problem(word, cwd, env) for word in proof.made
        ):
            return None
        return HookResult(
            id=spec.id,
            type=spec.kind,
            decision="allow",
            reason=f"proven to write only inside the project, running nothing ({proof.reason}); the rule says such writes cannot break it",
            tier=WRITE_TIER,
            latency_ms=0.0,
            cost_usd=0.0,
            details={"decided_by": WRITE_LANE},
        )
    return HookResult(
        id=spec.id,
        type=spec.kind,
        decision="allow",
        reason=f"proven read-only ({proof.reason}); the rule says reads cannot break it",
        tier=TIER,
        latency_ms=0.0,
        cost_usd=0.0,
        details={"decided_by": LANE},
    )
