"""Whether git, started now in a folder, can only read: no config, attribute, hook or variable makes it run a program.

``git status`` / ``diff`` / ``log`` / ``show`` read, but git runs programs that its
configuration names: ``core.fsmonitor`` on every index refresh, ``diff.external`` and a
``.gitattributes`` driver's ``diff.<driver>.textconv`` / ``command`` on every diff, a
``filter.<driver>`` on status, ``core.pager`` / ``pager.<cmd>`` / ``GIT_PAGER`` on a tty,
a ``post-index-change`` hook when status rewrites the index, a promisor remote's fetch for
a missing blob, and a submodule's own config when status looks into it. The agent can
write all of those in an earlier call, so the proof is taken when the call is decided,
from what is known to be harmless, never from what is known to be bad:

* no ``GIT_*`` variable but a few that name who commits or which editor (none a reading
  command uses);
* the repository found as git finds it (``.git`` in the folder or above) is a plain
  ``.git`` folder: a ``.git`` file (a linked worktree, a submodule), a ``commondir``, a
  bare repository or an invalid ``.git`` (git would walk past it) is not proven;
* every config file git would read (system, ``$XDG_CONFIG_HOME/git/config``,
  ``~/.gitconfig``, the repository's) parses, is small, has no ``include``/``includeIf``,
  and holds only keys on :data:`_KEYS`;
* no hook but ``*.sample`` files, no ``.gitmodules``, no ``modules/`` and no submodule
  (gitlink) entry in the index;
* no ``filter=`` attribute and no ``diff=`` naming a driver that is not git's built-in
  function-name pattern, in the repository's root ``.gitattributes``, ``info/attributes``
  or the global and system attribute files. (A driver only runs through a config key,
  which the config check already refuses; this is the second lock.)

Files are read in Python, a few hundred microseconds on the ``guard hook`` path: no
``git config`` subprocess. Standard library only.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Mapping

__all__ = ["MAX_FILE", "git_problem"]

#: A config or attribute file larger than this is not read, and the call is not proven.
MAX_FILE = 64 * 1024
#: An index larger than this is not scanned for submodules, and the call is not proven.
_MAX_INDEX = 64 * 1024 * 1024
#: ``GIT_*`` variables that no reading subcommand acts on (identity, editors, prompts, TLS: commits, auth and the network only).
_HARMLESS_ENV = frozenset(
    {
        "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR",
        "GIT_TERMINAL_PROMPT",
        "GIT_OPTIONAL_LOCKS",
        "GIT_ASKPASS",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
        "GIT_SSL_CAINFO",
        "GIT_SSL_CAPATH",
        "GIT_SSL_NO_VERIFY",
    }
)
_ANY = frozenset({"*"})
#: Config keys that no reading subcommand turns into a program run, by section: ``(keys without a subsection, keys
#: with one)``. ``*`` is any key. Keys for commands that are never proven (difftool, mergetool, merge drivers, push,
#: credential helpers: git authenticates only on the network, and a reading command never fetches once
#: ``extensions.partialClone`` and ``remote.*.promisor`` are refused) are harmless here.
_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "core": (
        frozenset(
            {
                "repositoryformatversion",
                "filemode",
                "bare",
                "logallrefupdates",
                "ignorecase",
                "precomposeunicode",
                "symlinks",
                "autocrlf",
                "eol",
                "safecrlf",
                "quotepath",
                "abbrev",
                "checkstat",
                "trustctime",
                "preloadindex",
                "untrackedcache",
                "editor",
                "excludesfile",
                "whitespace",
                "compression",
                "loosecompression",
                "commentchar",
                "commentstring",
                "warnambiguousrefs",
                "longpaths",
                "fscache",
                "sharedrepository",
                "packedgitwindowsize",
                "packedgitlimit",
                "deltabasecachesize",
                "bigfilethreshold",
                "multipackindex",
                "commitgraph",
                "fsync",
                "fsyncmethod",
                "checkroundtripencoding",
                "filesreflocktimeout",
                "packedrefstimeout",
            }
        ),
        frozenset(),
    ),
    "user": (frozenset({"name", "email", "signingkey", "useconfigonly"}), frozenset()),
    "author": (frozenset({"name", "email"}), frozenset()),
    "committer": (frozenset({"name", "email"}), frozenset()),
    "init": (frozenset({"defaultbranch"}), frozenset()),
    "color": (_ANY, _ANY),
    "column": (_ANY, frozenset()),
    "advice": (_ANY, frozenset()),
    "alias": (_ANY, frozenset()),  # an alias never shadows a built-in subcommand
    "log": (
        frozenset(
            {
                "date",
                "decorate",
                "abbrevcommit",
                "follow",
                "showroot",
                "mailmap",
                "excludedecoration",
                "graphcolors",
                "diffmerges",
                "initialdecorationset",
            }
        ),
        frozenset(),
    ),
    "diff": (
        frozenset(
            {
                "renames",
                "renamelimit",
                "algorithm",
                "mnemonicprefix",
                "noprefix",
                "relative",
                "colormoved",
                "colormovedws",
                "context",
                "interhunkcontext",
                "indentheuristic",
                "statgraphwidth",
                "statnamewidth",
                "dirstat",
                "ignoresubmodules",
                "wserrorhighlight",
                "suppressblankempty",
                "orderfile",
                "srcprefix",
                "dstprefix",
                "autorefreshindex",
                "tool",
                "guitool",
            }
        ),
        frozenset(),
    ),
    "status": (
        frozenset(
            {
                "showuntrackedfiles",
                "short",
                "branch",
                "relativepaths",
                "aheadbehind",
                "renames",
                "renamelimit",
                "showstash",
                "displaycommentprefix",
            }
        ),
        frozenset(),
    ),
    "branch": (
        frozenset({"autosetupmerge", "autosetuprebase", "sort"}),
        frozenset({"remote", "merge", "rebase", "pushremote", "description"}),
    ),
    "remote": (
        frozenset({"pushdefault"}),
        frozenset(
            {"url", "pushurl", "fetch", "push", "mirror", "tagopt", "prune", "skipdefaultupdate", "skipfetchall"}
        ),
    ),
    "url": (frozenset(), frozenset({"insteadof", "pushinsteadof"})),
    "credential": (_ANY, _ANY),
    "http": (_ANY, _ANY),
    "protocol": (_ANY, _ANY),
    "push": (frozenset({"default", "followtags", "autosetupremote"}), frozenset()),
    "pull": (frozenset({"rebase", "ff"}), frozenset()),
    "fetch": (frozenset({"prune", "prunetags", "parallel", "writecommitgraph", "fsckobjects"}), frozenset()),
    "merge": (
        frozenset(
            {
                "conflictstyle",
                "ff",
                "log",
                "renames",
                "renamelimit",
                "defaulttoupstream",
                "autostash",
                "tool",
                "guitool",
            }
        ),
        frozenset({"name", "driver", "recursive"}),
    ),
    "difftool": (_ANY, _ANY),
    "mergetool": (_ANY, _ANY),
    "rebase": (
        frozenset(
            {
                "autosquash",
                "autostash",
                "updaterefs",
                "stat",
                "abbreviatecommands",
                "missingcommitscheck",
                "instructionformat",
            }
        ),
        frozenset(),
    ),
    "commit": (frozenset({"verbose", "template", "cleanup", "status", "gpgsign"}), frozenset()),
    "tag": (frozenset({"sort", "gpgsign", "forcesignannotated"}), frozenset()),
    "gc": (
        frozenset(
            {
                "auto",
                "autodetach",
                "autopacklimit",
                "reflogexpire",
                "reflogexpireunreachable",
                "pruneexpire",
                "writecommitgraph",
            }
        ),
        frozenset(),
    ),
    "pack": (
        frozenset({"threads", "windowmemory", "packsizelimit", "compression", "usebitmaps", "writebitmaphashcache"}),
        frozenset(),
    ),
    "index": (frozenset({"version", "threads"}), frozenset()),
    "feature": (frozenset({"manyfiles", "experimental"}), frozenset()),
    "safe": (frozenset({"directory", "barerepository"}), frozenset()),
    "rerere": (frozenset({"enabled", "autoupdate"}), frozenset()),
    "blame": (
        frozenset(
            {
                "coloring",
                "date",
                "showemail",
                "showroot",
                "blankboundary",
                "ignorerevsfile",
                "markunblamablelines",
                "markignoredlines",
            }
        ),
        frozenset(),
    ),
    "grep": (
        frozenset(
            {"linenumber", "column", "patterntype", "extendedregexp", "fullname", "fallbacktonoindex", "threads"}
        ),
        frozenset(),
    ),
    "i18n": (frozenset({"commitencoding", "logoutputencoding"}), frozenset()),
    "transfer": (frozenset({"fsckobjects"}), frozenset()),
    "checkout": (frozenset({"defaultremote", "workers"}), frozenset()),
    "clone": (frozenset({"defaultremotename"}), frozenset()),
    "mailmap": (frozenset({"file", "blob"}), frozenset()),
    "extensions": (frozenset({"objectformat"}), frozenset()),
    "lfs": (frozenset({"repositoryformatversion"}), frozenset()),
}
#: git-lfs's own filter, as ``git lfs install`` writes it: a known program, allowed only with exactly these values.
_LFS_FILTER = {
    "clean": "git-lfs clean -- %f",
    "smudge": "git-lfs smudge -- %f",
    "process": "git-lfs filter-process",
    "required": "true",
}
#: ``diff=NAME`` drivers built into git (function-name patterns): without a ``diff.NAME.*`` key they run nothing.
_BUILTIN_DIFF = frozenset(
    {
        "ada",
        "bash",
        "bibtex",
        "cpp",
        "csharp",
        "css",
        "dts",
        "elixir",
        "fortran",
        "fountain",
        "golang",
        "html",
        "java",
        "kotlin",
        "markdown",
        "matlab",
        "objc",
        "pascal",
        "perl",
        "php",
        "python",
        "ruby",
        "rust",
        "scheme",
        "tex",
    }
)
_DRIVER = re.compile(r"(?:^|\s)(filter|diff)=(\S*)")
_SYSTEM_CONFIGS = ("/etc/gitconfig", "/usr/local/etc/gitconfig", "/opt/homebrew/etc/gitconfig")
_SYSTEM_ATTRIBUTES = ("/etc/gitattributes", "/usr/local/etc/gitattributes", "/opt/homebrew/etc/gitattributes")
_GITLINK = b"\x00\x00\xe0\x00"  # an index entry's mode 0160000: a submodule
_PLAIN_VALUE = re.compile(r'([^"\\#;\n]*)(?:\n|\Z)')
_KEY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
_SECTION = re.compile(r'\[\s*([A-Za-z0-9.-]+)\s*(?:"((?:[^"\\\n]|\\.)*)")?\s*\]')


class _Unreadable(Exception):
    """A config file that is too large or that this reader cannot parse as git would: not proven."""


def _read(path: str) -> str | None:
    """A small text file's content, or None when there is none; :class:`_Unreadable` when it is too large or not text."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a folder, or a fifo that would hang the hook
            raise _Unreadable(f"{path} is not a regular file")
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _Unreadable(f"{path} cannot be read") from exc
    if len(data) > MAX_FILE:
        raise _Unreadable(f"{path} is larger than {MAX_FILE} bytes")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise _Unreadable(f"{path} is not UTF-8") from exc


def _value(text: str, i: int) -> tuple[str, int]:
    """A config value from ``text[i]`` to its end of line, as git reads it (quotes, escapes, ``\\`` continuations)."""
    plain = _PLAIN_VALUE.match(text, i)
    if plain:  # no quote, escape or comment: the common case
        return plain.group(1).strip(" \t\r"), plain.end()
    out: list[str] = []
    quoted, pending_space = False, False
    while i < len(text):
        c = text[i]
        i += 1
        if c == "\n":
            if quoted:
                raise _Unreadable("a quoted value runs over the end of its line")
            break
        if not quoted and c in " \t":
            pending_space = bool(out)
            continue
        if not quoted and c in "#;":
            i = text.find("\n", i)
            i = len(text) if i < 0 else i + 1
            break
        if pending_space:
            out.append(" ")
            pending_space = False
        if c == "\\":
            if i >= len(text):
                raise _Unreadable("a value ends in a lone backslash")
            escaped = text[i]
            i += 1
            if escaped == "\n":
                continue
            if escaped not in 'ntb"\\':
                raise _Unreadable(f"an unknown escape \\{escaped} in a value")
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(escaped, escaped))
        elif c == '"':
            quoted = not quoted
        else:
            out.append(c)
    if quoted:
        raise _Unreadable("a quoted value is never closed")
    return "".join(out), i


def _entries(text: str) -> list[tuple[str, str | None, str, str | None]]:
    """Each ``(section, subsection, key, value)`` of a config file (section and key lower-cased, as git compares them)."""
    entries: list[tuple[str, str | None, str, str | None]] = []
    section: str | None = None
    subsection: str | None = None
    i = 0
    while i < len(text):
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif c in "#;":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end + 1
        elif c == "[":
            header = _SECTION.match(text, i)
            if header is None:
                raise _Unreadable("a section header this reader cannot read")
            name, quoted = header.group(1), header.group(2)
            if quoted is not None:
                if "." in name:
                    raise _Unreadable("a section header with both a dot and a quoted subsection")
                section, subsection = name.lower(), re.sub(r"\\(.)", r"\1", quoted)
            else:
                head, _, rest = name.partition(".")
                section, subsection = head.lower(), (rest.lower() if rest else None)
            i = header.end()
        else:
            key = _KEY_NAME.match(text, i)
            if key is None or section is None:
                raise _Unreadable(f"a line this reader cannot read: {text[i : i + 40]!r}")
            i = key.end()
            while i < len(text) and text[i] in " \t":
                i += 1
            value: str | None = None
            if i < len(text) and text[i] == "=":
                value, i = _value(text, i + 1)
            elif i < len(text) and text[i] == "\r" and text[i + 1 : i + 2] == "\n":
                i += 2
            elif i < len(text) and text[i] not in "\n#;":
                raise _Unreadable(f"a key followed by {text[i]!r}")
            entries.append((section, subsection, key.group().lower(), value))
    return entries


def _config_problem(path: str) -> str | None:
    """Why the config file at ``path`` may make a reading git run a program, or None (none there, or only harmless keys)."""
    text = _read(path)
    if text is None:
        return None
    try:
        entries = _entries(text)
    except _Unreadable as exc:
        return f"{path}: {exc}"
    for section, subsection, key, value in entries:
        name = f"{section}.{subsection + '.' if subsection is not None else ''}{key}"
        if section == "filter" and subsection == "lfs" and _LFS_FILTER.get(key) == value:
            continue
        plain, sub = _KEYS.get(section, (frozenset(), frozenset()))
        allowed = sub if subsection is not None else plain
        if key not in allowed and "*" not in allowed:
            return f"{path} sets {name}, which is not known to be harmless"
    return None


def _attributes_problem(path: str) -> str | None:
    """Why the attribute file at ``path`` names a filter or a diff driver, or None."""
    text = _read(path)
    for match in _DRIVER.finditer(text or ""):
        if match.group(1) == "filter" or match.group(2) not in _BUILTIN_DIFF:
            return f"{path} sets {match.group().strip()}: a driver that can run a program"
    return None


def _repository(cwd: str) -> tuple[str, str] | str | None:
    """``(work tree, git dir)`` of the repository git would use in ``cwd``; None when there is none; why, when its layout is not a plain one."""
    folder = os.path.realpath(cwd)
    while True:
        dot_git = os.path.join(folder, ".git")
        if os.path.isdir(dot_git):
            if not (
                os.path.isfile(os.path.join(dot_git, "HEAD"))
                and os.path.isdir(os.path.join(dot_git, "objects"))
                and os.path.isdir(os.path.join(dot_git, "refs"))
            ):
                return f"{dot_git} is not a repository git would use (it would look further up)"
            return folder, dot_git
        if os.path.lexists(dot_git):
            return f"{dot_git} is not a folder (a linked worktree or a submodule)"
        if os.path.lexists(os.path.join(folder, "HEAD")):
            return f"{folder} may be a git folder or a bare repository"
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _repository_problem(work_tree: str, git_dir: str) -> str | None:
    """Why the repository's own files may make a reading git run a program: hooks, submodules, config, attributes."""
    for name in ("commondir", "gitdir", "modules"):
        if os.path.lexists(os.path.join(git_dir, name)):
            return f"{git_dir} has {name} (a linked worktree or submodules)"
    if os.path.lexists(os.path.join(work_tree, ".gitmodules")):
        return f"{work_tree} has submodules (.gitmodules): git looks into each with its own config"
    try:
        hooks = [name for name in os.listdir(os.path.join(git_dir, "hooks")) if not name.endswith(".sample")]
    except FileNotFoundError:
        hooks = []
    except OSError:
        return f"{git_dir}/hooks cannot be listed"
    if hooks:
        return f"{git_dir}/hooks/{sorted(hooks)[0]} is a hook git may run"
    try:
        info = os.stat(os.path.join(git_dir, "index"))
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_INDEX:
            return f"{git_dir}/index is not a regular file of at most {_MAX_INDEX} bytes"
        with open(os.path.join(git_dir, "index"), "rb") as handle:
            if _GITLINK in handle.read():
                return f"{git_dir}/index may hold a submodule"
    except FileNotFoundError:
        pass
    except OSError:
        return f"{git_dir}/index cannot be read"
    if any(name.startswith("sharedindex.") for name in os.listdir(git_dir)):
        return f"{git_dir} has a split index"
    return (
        _config_problem(os.path.join(git_dir, "config"))
        or _attributes_problem(os.path.join(work_tree, ".gitattributes"))
        or _attributes_problem(os.path.join(git_dir, "info", "attributes"))
    )


def git_problem(cwd: str, env: Mapping[str, str]) -> str | None:
    """Why git started in ``cwd`` with ``env`` may run a program the repository, the user's config or the variables name; None when it cannot."""
    variable = next((name for name in sorted(env) if name.startswith("GIT_") and name not in _HARMLESS_ENV), None)
    if variable:
        return f"{variable} is set"
    homes = dict.fromkeys(h for h in (env.get("HOME"), os.path.expanduser("~")) if h)
    xdg = [env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config") for home in homes]
    program = shutil.which("git", path=env.get("PATH", os.defpath))
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(program))) if program else "/usr"
    systems = dict.fromkeys((*_SYSTEM_CONFIGS, os.path.join(prefix, "etc", "gitconfig")))  # git's own $(prefix)/etc
    try:
        for path in (
            *systems,
            *(os.path.join(x, "git", "config") for x in xdg),
            *(os.path.join(h, ".gitconfig") for h in homes),
        ):
            problem = _config_problem(path)
            if problem:
                return problem
        for path in (*_SYSTEM_ATTRIBUTES, *(os.path.join(x, "git", "attributes") for x in xdg)):
            problem = _attributes_problem(path)
            if problem:
                return problem
        found = _repository(cwd)
        if isinstance(found, str):
            return found
        return _repository_problem(*found) if found else None
    except _Unreadable as exc:
        return str(exc)
    except OSError as exc:
        return f"{exc.filename or cwd} cannot be read"
