"""What a command that acts on a whole tree really touches: the files a patch names, an archive's listing, git clean's untracked files.

Self-protection refuses a command that sweeps a folder holding one of guard's
files unless it is proven to only read (:mod:`guard.protection.naming` marks such
a command ``tree``). Some of these commands say exactly what they touch, and are
judged by that instead:

* ``patch`` and ``git apply`` change the files their diff names: the diff is read
  (a file, a here-document, a here-string; bounded) and every name in its headers,
  at every strip level, is a path the command names;
* ``unzip -l``/``-t``/``-v``/``-z``, ``unzip -Z`` and ``tar -t``/``--list`` only list or
  test an archive, recognized only in exactly these spellings (unzip's ``--x``
  negation, a long option's abbreviation, an option from the environment keep
  the command a sweep);
* ``git clean`` removes only untracked files: a tracked file of guard's, in the
  index read at decision time, is not touched.

A command that may create files below the folder it sweeps (an extraction, a copy,
anything that runs another program) is told apart from one that only reads,
deletes or changes what is there (:func:`creates_files`): a protected path that
does not exist cannot be deleted or changed, only created. Standard library only,
every read bounded: it runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Mapping

__all__ = [
    "MAX_DIFF",
    "OPTION_VARIABLES",
    "PatchSources",
    "creates_files",
    "diff_names",
    "extracts",
    "SEARCHERS",
    "follows_links",
    "git_apply_args",
    "lists_only",
    "options_from_environment",
    "patch_sources",
    "tracked_files",
    "work_tree_root",
]

#: The most of a diff that is read; a larger one is not read (the command stays a sweep).
MAX_DIFF = 1024 * 1024
#: The most names a diff may hold (each at every strip level) before it is not read either.
MAX_NAMES = 2048
#: The largest git index read (a bigger repository's git clean stays a sweep).
MAX_INDEX = 64 * 1024 * 1024

#: Tree programs that never create a file below the folders they act on: they read, delete or change what is there.
_NO_NEW_FILES = frozenset(
    {"grep", "egrep", "fgrep", "ag", "ack", "ls", "tree", "du", "chmod", "chown", "chgrp", "rm", "diff"}
)
#: Options by which a tree program runs another program (which may create anything): find's, fd's, rg's, zip's, git grep's.
_RUNS = {
    "find": ("-exec", "-execdir", "-ok", "-okdir"),
    "rg": ("--pre",),
    "zip": ("-TT", "--unzip-command"),
    "fd": ("-x", "-X", "--exec"),
    "fdfind": ("-x", "-X", "--exec"),
}

#: unzip 6.0 (Info-ZIP, unzip.c uz_opts): a word of these letters lists (l, v), tests (t) or shows the comment (z), never extracts;
#: ``-`` inside a word negates the next letter, so it is not among them.
_UNZIP_LISTING = re.compile(r"-[lvtqz]+")
#: GNU tar: the listing mode and options that change nothing but the output and the decompressor (no -I, --to-command, -F …).
_TAR_LETTERS = frozenset("tvzjJ")
_TAR_LONG = frozenset(
    {"--list", "--verbose", "--gzip", "--gunzip", "--ungzip", "--bzip2", "--xz", "--zstd", "--lzma", "--lzip"}
)

#: GNU patch 2.7 options (``patch --help``): short ones taking a value, short flags, long ones with and without a value.
_PATCH_VALUES = frozenset("pFioDrVBYzgd")
_PATCH_FLAGS = frozenset("lcnuNRbEZTtfsv")
_PATCH_LONG_VALUES = frozenset(
    {
        "strip",
        "fuzz",
        "input",
        "output",
        "reject-file",
        "ifdef",
        "version-control",
        "prefix",
        "basename-prefix",
        "suffix",
        "get",
        "directory",
        "reject-format",
        "read-only",
        "quoting-style",
        "merge",
    }
)
_PATCH_LONG_FLAGS = frozenset(
    {
        "ignore-whitespace",
        "context",
        "normal",
        "unified",
        "forward",
        "reverse",
        "merge",
        "remove-empty-files",
        "set-utc",
        "set-time",
        "backup",
        "backup-if-mismatch",
        "no-backup-if-mismatch",
        "batch",
        "force",
        "quiet",
        "silent",
        "verbose",
        "dry-run",
        "posix",
        "binary",
        "version",
        "help",
    }
)
#: Options that name backup files after the files patched (a suffix could turn ``.claude/settings`` into ``settings.json``).
_PATCH_BACKUP_NAMES = frozenset({"V", "B", "Y", "z", "version-control", "prefix", "basename-prefix", "suffix"})
#: The environment patch reads backup names and options from.
_PATCH_ENV = ("SIMPLE_BACKUP_SUFFIX", "VERSION_CONTROL", "PATCH_VERSION_CONTROL", "POSIXLY_CORRECT", "PATCH_GET")
#: git apply options that read no file and write none but the diff's own (``--build-fake-ancestor`` writes one: not here).
_GIT_APPLY_FLAGS = frozenset(
    {
        "--check",
        "--stat",
        "--numstat",
        "--summary",
        "--apply",
        "-R",
        "--reverse",
        "--reject",
        "-v",
        "--verbose",
        "-q",
        "--quiet",
        "--index",
        "--cached",
        "-3",
        "--3way",
        "--unidiff-zero",
        "--allow-empty",
        "--recount",
        "--ignore-space-change",
        "--ignore-whitespace",
        "--inaccurate-eof",
        "--no-add",
        "-N",
        "--intent-to-add",
        "-z",
    }
)
_GIT_APPLY_VALUES = re.compile(r"^(?:-p\d+|-C\d+|--whitespace=\w+|--include=.*|--exclude=.*)$")
#: The header lines a diff names its files on (unified, context, git, Index:), and an ed script's command line.
_HEADER = re.compile(r"^(?:--- |\+\+\+ |\*\*\* |Index: |rename from |rename to |copy from |copy to )(.*)$")
_GIT_HEADER = re.compile(r"^diff --git (.*)$")
_ED_COMMAND = re.compile(r"^\d+(?:,\d+)?[acdis]$")


def creates_files(program: str, args: list[str]) -> bool:
    """Whether a command that acts on a whole tree may create files below it: anything but a known reader, deleter or
    changer of what is there, or one of those told to run another program."""
    runs = _RUNS.get(program, ())
    if any(
        arg == option or arg.startswith(option + "=") or (option in ("-x", "-X") and _cluster_has(arg, option[1]))
        for arg in args
        for option in runs
    ):
        return True
    if program == "git":
        sub = args[0] if args else ""
        return not (
            sub == "clean" or (sub == "grep" and not any(a.startswith("--o") or _cluster_has(a, "O") for a in args))
        )
    return program not in _NO_NEW_FILES | {"find", "rg", "zip", "fd", "fdfind"}


#: ``cmake -E`` commands that write nothing, or only the paths they name (CMake 3.25's ``cmake -E`` help); every other
#: one may copy, move, remove, extract or run a command in a folder it names.
_CMAKE_NAMED_ONLY = frozenset(
    {"echo", "echo_append", "capabilities", "environment", "sleep", "true", "false", "compare_files", "cat"}
    | {"make_directory", "touch", "touch_nocreate"}
    | {f"{name}sum" for name in ("md5", "sha1", "sha224", "sha256", "sha384", "sha512")}
)


def extracts(program: str, args: list[str]) -> str | None:
    """Where an archiver that is a sweep only in some modes extracts, read loosely: ``"here"`` (the working directory, or
    the folder it names: ``pax -r``, ``jar x``, ``ar x``, ``dpkg -x``, ``unsquashfs``, ``python -m zipfile -e``, any
    ``cmake -E`` command but those that write only what they name, which copy, move, remove or extract what they name), ``"anywhere"`` (a name the input holds
    may be absolute or climb out with ``..``: ``uudecode`` without ``-o``, ``python -m tarfile -e``), or None."""
    first = args[0] if args else ""
    if program == "uudecode":
        return None if any(arg.startswith(("-o", "--o")) for arg in args) else "anywhere"
    if program == "python":
        if args[:1] != ["-m"] or len(args) < 3 or not ({"-e", "--extract"} & set(args[2:])):
            return None
        return {"tarfile": "anywhere", "zipfile": "here"}.get(args[1])
    modes = {
        "pax": any(_cluster_has(arg, "r") for arg in args),
        "jar": "x" in first.lstrip("-") or first.startswith("--e"),
        "ar": "x" in first.lstrip("-"),
        "dpkg": any(_cluster_has(arg, m) for arg in args for m in "xXR") or any("extract" in arg for arg in args),
        "unsquashfs": True,
        "cmake": first == "-E" and (args[1:2] or [""])[0] not in _CMAKE_NAMED_ONLY,
    }
    modes["dpkg-deb"] = modes["dpkg"]
    return "here" if modes.get(program) else None


#: How a tree program is told to follow the symbolic links it meets below the folders it walks (GNU, libarchive and
#: the searchers' own spellings): the letters of a short option cluster, and long options, which count when abbreviated
#: too. This loose reading backs up the prover's exact one for the programs it models (``grep``, ``rg``, ``find`` …:
#: :func:`guard.protection.readonly.tree_walk`), which reads nothing it cannot parse. A recursive zip follows
#: them unless ``-y``, which is not read (a value such as ``-P -y`` would look like it): every recursive zip counts.
_FOLLOWS: dict[str, tuple[str, tuple[str, ...]]] = {
    "grep": ("R", ("--dereference-recursive",)),
    "egrep": ("R", ("--dereference-recursive",)),
    "fgrep": ("R", ("--dereference-recursive",)),
    "rg": ("L", ("--follow",)),
    "fd": ("L", ("--follow",)),
    "fdfind": ("L", ("--follow",)),
    "ag": ("f", ("--follow",)),
    "ack": ("", ("--follow",)),
    "tree": ("l", ()),
    "du": ("L", ("--dereference",)),
    "cp": ("L", ("--dereference",)),
    "tar": ("h", ("--dereference",)),
    "bsdtar": ("Lh", ("--dereference",)),
    "rsync": ("Lk", ("--copy-links", "--copy-unsafe-links", "--copy-dirlinks")),
    "cpio": ("L", ("--dereference",)),
    "chmod": ("L", ()),
    "chown": ("L", ()),
    "chgrp": ("L", ()),
    "zip": ("rR", ("--recurse-paths", "--recurse-patterns")),
    "scp": ("r", ()),  # OpenSSH's scp follows every link of a tree it copies to another host (its manual's -r)
}
#: Searchers that walk whenever they follow links: checked whether or not naming read them as acting on a tree.
SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "fd", "fdfind", "ag", "ack", "tree", "find", "ls", "du", "diff"})
#: The variables a tree program takes more options from: their words, or the lines of the file they name (``*PATH``,
#: ``ACKRC``). An option there is the program's own (``TAR_OPTIONS=-h``, a ripgreprc holding ``--follow``).
OPTION_VARIABLES: dict[str, tuple[str, ...]] = {
    "rg": ("RIPGREP_CONFIG_PATH",),
    "tar": ("TAR_OPTIONS",),
    "zip": ("ZIPOPT", "ZIP"),
    "grep": ("GREP_OPTIONS",),  # BSD grep's (macOS); GNU grep 3.6 and later ignore it
    "egrep": ("GREP_OPTIONS",),
    "fgrep": ("GREP_OPTIONS",),
    "ack": ("ACK_OPTIONS", "ACKRC"),
}
_OPTION_FILES = frozenset({"RIPGREP_CONFIG_PATH", "ACKRC"})
#: The most of an options file that is read; a larger one counts as following links.
MAX_OPTIONS_FILE = 64 * 1024


def _spelled(args: list[str], letters: str, long: tuple[str, ...], *, bundled_first: bool) -> bool:
    """Whether ``args`` hold one of the short ``letters`` in a cluster, or one of the ``long`` options (abbreviated or
    not): read loosely, so a word that only looks like one counts too (the command is refused, never wrongly proven);
    a braced word (``{-h,-cf}``) counts as the options it may expand to."""
    for k, arg in enumerate(args):  # past a ``--`` too: it may be an option's value
        for word in [arg, *re.split(r"[{},]", arg)] if "{" in arg else [arg]:
            name = word.partition("=")[0]
            if name.startswith("--") and len(name) > 4 and any(option.startswith(name) for option in long):
                return True
            if (word.startswith("-") and not word.startswith("--")) or (
                bundled_first and k == 0 and word[:1].isalpha()
            ):
                if set(letters) & set(word.lstrip("-")):
                    return True
    return False


def follows_links(program: str, args: list[str]) -> bool:
    """Whether ``program`` with ``args`` follows the symbolic links below the folders it walks: a link the call does
    not name, which may lead to guard's secret (``grep -R``, ``cp -rL``, ``tar -h``, ``rsync -L``, ``chmod -RL``,
    ``zip -r``), read loosely. find (``-L``, ``-follow``), ls (``-L`` with ``-R``) and diff (``-r``, which follows them
    unless ``--no-dereference``) are read word by word."""
    if program == "find":
        return any(arg in ("-L", "-follow") for arg in args)
    if program == "ls":
        return _spelled(args, "L", ("--dereference",), bundled_first=False) and _spelled(
            args, "R", ("--recursive",), bundled_first=False
        )
    if program == "diff":
        recursive = _spelled(args, "r", ("--recursive",), bundled_first=False)
        return recursive and not any(arg == "--no-dereference" for arg in args)
    if program == "ack" and "--noenv" not in args:
        return True  # it reads options from every .ackrc from the folder up, which the call does not show
    if program in ("7z", "7za"):  # 7-Zip 21 and later follow links into an archive unless -snl (p7zip with -l)
        return args[:1] in (["a"], ["u"]) and "-snl" not in args
    if program in _FOLLOWS:
        letters, long = _FOLLOWS[program]
        return _spelled(args, letters, long, bundled_first=program == "tar")
    return False


def options_from_environment(program: str, env: Mapping[str, str]) -> list[str] | None:
    """The options ``program`` takes from ``env`` (:data:`OPTION_VARIABLES`) besides its arguments, split loosely;
    None when they cannot be read (a file that is not a regular one, or too large)."""
    from guard.core.regular_file import read_bytes  # only where such a variable is set: off the other calls' path

    options: list[str] = []
    for name in OPTION_VARIABLES.get(program, ()):
        value = env.get(name)
        if not value:
            continue
        if name not in _OPTION_FILES:
            options += value.split()
            continue
        if not os.path.lexists(value):
            continue  # the program warns and goes on without it
        data = read_bytes(value, MAX_OPTIONS_FILE)
        if data is None or len(data) > MAX_OPTIONS_FILE:
            return None
        options += [line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    return options


def _cluster_has(arg: str, letter: str) -> bool:
    return arg.startswith("-") and not arg.startswith("--") and letter in arg[1:]


def lists_only(program: str, args: list[str], env: Mapping[str, str]) -> bool:
    """Whether ``unzip``/``tar`` with ``args`` only lists or tests the archive, in a spelling known exactly (else it may extract)."""
    if program == "unzip":
        if env.get("UNZIP") or env.get("UNZIPOPT") or env.get("ZIPINFO") or env.get("ZIPINFOOPT"):
            return False  # options (even a zip file name) prepended from the environment
        if args and args[0].startswith("-Z"):
            return len(args) > 1  # zipinfo mode: it only lists
        listing, i = False, 0
        while i < len(args) and args[i].startswith("-"):
            if not _UNZIP_LISTING.fullmatch(args[i]):
                return False
            listing = listing or bool(set(args[i]) & set("lvtz"))
            i += 1
        return listing and i < len(args)  # a zip file follows the options
    if program == "tar":
        return not env.get("TAR_OPTIONS") and _tar_lists(args)
    return False


def _tar_lists(args: list[str]) -> bool:
    """GNU tar's ``-t``/``--list`` with only verbosity, decompression and ``-f ARCHIVE`` (a local one)."""
    modes: set[str] = set()
    archives: list[str] = []
    i = 0
    if args and not args[0].startswith("-"):  # the old style: tvf ARCHIVE
        letters, i = args[0], 1
        if not set(letters) <= _TAR_LETTERS | {"f"}:
            return False
        modes |= set(letters) & {"t"}
        for _ in range(letters.count("f")):
            if i >= len(args):
                return False
            archives.append(args[i])
            i += 1
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            break
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name == "--file":
                if not eq:
                    if i >= len(args):
                        return False
                    value, i = args[i], i + 1
                archives.append(value)
            elif name not in _TAR_LONG or eq:
                return False
            modes |= {"t"} if name == "--list" else set()
        elif arg.startswith("-") and arg != "-":
            for at, letter in enumerate(arg[1:], start=1):
                if letter == "f":
                    value = arg[at + 1 :]
                    if not value:
                        if i >= len(args):
                            return False
                        value, i = args[i], i + 1
                    archives.append(value)
                    break
                if letter not in _TAR_LETTERS:
                    return False
                modes |= {"t"} if letter == "t" else set()
    return modes == {"t"} and all(archive and ":" not in archive for archive in archives)


class PatchSources:
    """Where ``patch`` reads its diff from, and the folder its names are relative to."""

    __slots__ = ("files", "stdin", "directory", "origfile")

    def __init__(self) -> None:
        self.files: list[str] = []
        self.stdin = True
        self.directory: str | None = None
        self.origfile: str | None = None


def patch_sources(args: list[str], env: Mapping[str, str]) -> PatchSources | None:
    """The diff files (``-i``, the second operand) of GNU ``patch ARGS``, or None when they cannot be told exactly
    (an abbreviated or unknown option, an ed script, backup names from an option or the environment)."""
    if any(env.get(name) for name in _PATCH_ENV):
        return None
    found, operands, i = PatchSources(), [], 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            operands += args[i:]
            break
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name in _PATCH_BACKUP_NAMES or name == "ed":
                return None
            if name in _PATCH_LONG_VALUES and (eq or name not in _PATCH_LONG_FLAGS):
                if not eq:
                    if i >= len(args):
                        return None
                    value, i = args[i], i + 1
                found = _patch_value(found, name, value)
            elif name not in _PATCH_LONG_FLAGS or eq:
                return None
            continue
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
            continue
        for at, letter in enumerate(arg[1:], start=1):
            if letter in _PATCH_BACKUP_NAMES or letter == "e":
                return None
            if letter in _PATCH_VALUES:
                value = arg[at + 1 :]
                if not value:
                    if i >= len(args):
                        return None
                    value, i = args[i], i + 1
                found = _patch_value(found, {"i": "input", "d": "directory"}.get(letter, letter), value)
                break
            if letter not in _PATCH_FLAGS:
                return None
    if len(operands) > 2:
        return None
    if operands:
        found.origfile = operands[0]
    if len(operands) == 2:
        found.files.append(operands[1])
        found.stdin = False
    return found


def _patch_value(found: PatchSources, name: str, value: str) -> PatchSources:
    if name == "input":
        found.files.append(value)
        found.stdin = False
    elif name == "directory":
        found.directory = value
    return found


def git_apply_args(args: list[str]) -> tuple[list[str], str] | None:
    """(the diff files, the ``--directory`` prefix) of ``git apply ARGS``, or None for an option not known exactly."""
    files, prefix = [], ""
    for arg in args:
        if arg.startswith("--directory="):
            prefix = arg.partition("=")[2]
        elif arg.startswith("-") and arg != "-":
            if arg not in _GIT_APPLY_FLAGS and not _GIT_APPLY_VALUES.match(arg):
                return None
        else:
            files.append(arg)
    return files, prefix


def diff_names(text: str) -> list[str] | None:
    """Every name a diff's headers give, each at every strip level (``a/b/c``, ``b/c``, ``c``), or None for a diff that
    is not read: too large, too many names, or an ed script (patch hands it to ``ed``, whose ``w`` writes any file)."""
    if len(text) > MAX_DIFF:
        return None
    names: set[str] = set()
    for line in text.splitlines():
        if _ED_COMMAND.match(line):
            return None
        header = _HEADER.match(line)
        git = _GIT_HEADER.match(line) if header is None else None
        found = header or git
        if found is None:
            continue
        rest = found.group(1)
        named = [rest.split("\t", 1)[0].strip(), rest.split(None, 1)[0] if rest.strip() else ""]
        if git is not None:
            at = rest.rfind(" b/")
            named += rest.split() + ([rest[:at], rest[at + 1 :]] if at > 0 else [])
        for name in filter(None, map(_unquoted, named)):
            parts = name.split("/")
            names |= {"/".join(parts[k:]) for k in range(len(parts))} - {""}
            if name.startswith("/"):
                names.add(name)
        if len(names) > MAX_NAMES:
            return None
    return sorted(names)


def _unquoted(name: str) -> str:
    """A git-quoted name (``"a/caf\\303\\251"``) decoded; any other name as it is."""
    if len(name) < 2 or name[0] != '"' or name[-1] != '"':
        return name
    try:
        raw = name[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1")
        return raw.decode("utf-8", "replace")
    except (UnicodeError, ValueError):
        return name[1:-1]


def work_tree_root(cwd: str) -> str | None:
    """The folder holding the ``.git`` git finds from ``cwd`` (itself, then each folder above), or None."""
    folder = os.path.abspath(cwd)
    while not os.path.lexists(os.path.join(folder, ".git")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return folder


def tracked_files(cwd: str, env: Mapping[str, str]) -> tuple[str, frozenset[str]] | None:
    """(the work tree's root, the files its git index tracks, absolute), for a plain repository git finds from ``cwd``.

    None when the index cannot be read exactly: no repository, a ``.git`` file (a linked worktree, a submodule),
    ``GIT_DIR`` or ``GIT_INDEX_FILE`` in the environment, a split or sparse index, an index over :data:`MAX_INDEX` bytes.
    """
    if any(name in env for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR")):
        return None
    root = work_tree_root(cwd)
    dot_git = os.path.join(root or "", ".git")
    if root is None or not os.path.isdir(dot_git) or os.path.islink(dot_git):
        return None
    names = _index_names(os.path.join(dot_git, "index"))
    return None if names is None else (root, frozenset(os.path.join(root, name) for name in names))


def _index_names(path: str) -> list[str] | None:
    """The paths in a git index file (versions 2 to 4; git's Documentation/gitformat-index.txt)."""
    from guard.core.regular_file import read_bytes  # only git clean reads a file here: off the other hook calls' path

    if not os.path.lexists(path):
        return []  # a new repository: nothing is tracked
    data = read_bytes(path, MAX_INDEX)
    if data is None or len(data) > MAX_INDEX or len(data) < 12 or data[:4] != b"DIRC":
        return None
    version, count = struct.unpack(">LL", data[4:12])
    if version not in (2, 3, 4):
        return None
    names: list[str] = []
    previous, at = b"", 12
    try:
        for _ in range(count):
            flags = struct.unpack(">H", data[at + 60 : at + 62])[0]
            start = at + 62 + (2 if version >= 3 and flags & 0x4000 else 0)
            if version == 4:
                strip, start = _varint(data, start)
                end = data.index(b"\0", start)
                name = previous[: len(previous) - strip] + data[start:end]
                at = end + 1
            else:
                end = data.index(b"\0", start)
                name = data[start:end]
                at += (end - at + 8) & ~7  # the entry is padded with 1 to 8 NULs to a multiple of 8 bytes
            if name.endswith(b"/"):
                return None  # a sparse index's directory entry: the files below it are not listed
            previous = name
            names.append(name.decode("utf-8", "surrogateescape"))
        while at + 8 <= len(data) - 20:  # extensions, then the checksum
            signature, size = data[at : at + 4], struct.unpack(">L", data[at + 4 : at + 8])[0]
            if signature == b"link":
                return None  # a split index: the shared index holds the rest
            at += 8 + size
    except (struct.error, ValueError):
        return None
    return names


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """git's offset varint (index version 4's prefix length)."""
    byte = data[at]
    value = byte & 0x7F
    while byte & 0x80:
        at += 1
        byte = data[at]
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, at + 1
