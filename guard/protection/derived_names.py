"""Files a program writes under a name it makes from one it is given: a backup's, a compressor's, a download's.

``cp -b -S .yaml x ../guard`` renames ``../guard`` to ``../guard.yaml``; ``sed -i.json … .claude/settings`` keeps a
copy of ``.claude/settings`` as ``.claude/settings.json``; ``gunzip -f ../guard.yaml.gz`` (and ``gpg ../guard.yaml.gpg``)
writes ``../guard.yaml``; ``split -a1 --additional-suffix=.yaml x ../guar`` writes it as its fourth piece. No word of
these names guard's file, so each path such a program names also stands for the names it may make of it: any name that
starts with it (the pattern ``PATH*``: a suffix added) and each shorter one (a suffix taken off). A backup suffix
holding ``*`` (GNU sed) is a name of its own, with the file's name for the ``*`` (a glob's: any name). A downloader
saves to the URL's last part, or to a name the server gives (:func:`download`); Perl's rename to the name its
expression makes (:func:`renamed`: a plain substitution is applied, any other code may make any name). Options are
read loosely: a word that
only looks like one counts, at the cost of a name that is not guard's. Standard library only: loaded by
:mod:`guard.protection.naming` for these programs alone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Literal
from urllib.parse import unquote

__all__ = ["DOWNLOADERS", "Download", "Kind", "derived", "download", "renamed"]

#: How a program makes names: coreutils' backups (``-b``, ``-S``, ``--backup``, ``--suffix``), sed's in-place backup
#: (``-iSUFFIX``, ``--in-place=SUFFIX``), split's and csplit's pieces, a compressor's output (suffix added or taken off),
#: a downloader's (:func:`download`).
Kind = Literal["backup", "in_place", "pieces", "compress", "download"]
#: The most named paths whose derived names are added (each adds one pattern, and up to 255 shorter names).
MAX_PATHS = 64


def derived(kind: Kind, args: list[str], paths: set[str], cwd: str, *, globbed: bool) -> tuple[set[str], set[str]]:
    """(paths, patterns) the program of ``kind`` with ``args`` may write besides ``paths``, the absolute paths it names
    (``globbed``: and globs)."""
    suffixes = _in_place_suffixes(args) if kind == "in_place" else []
    if suffixes is None or (kind == "backup" and not _backs_up(args)):
        return set(), set()
    replaces_folders = kind in ("backup", "in_place") and any(_short(arg, "T") for arg in args)
    files = [p for p in sorted(paths)[:MAX_PATHS] if replaces_folders or not os.path.isdir(p)]
    patterns = {_glob_escape(path) + "*" for path in files}
    found: set[str] = set()
    if kind == "compress":  # gunzip a.gz, gzip -d -S x a.yamlx: the name with its end cut off
        found = {p[:k] for p in files for k in range(len(os.path.dirname(p)) + 2, len(p)) if p[k - 1] != "/"}
        if any(arg.startswith("--use-em") for arg in args):  # gpg --use-embedded-filename: the name the input holds
            patterns.add("*")
    for suffix in (s for s in suffixes if "*" in s):  # sed -i'../guard.yam*' l: the file's name in place of each *
        for path in files:
            name = suffix.replace("*", os.path.basename(path))
            found |= {os.path.normpath(os.path.join(folder, name)) for folder in (cwd, os.path.dirname(path))}
        if globbed:  # sed -i'../guard.yam*' 1p ?: the file's name is any the glob matches
            pattern = _glob_escape(suffix).replace("[*]", "*")
            patterns |= {
                os.path.normpath(os.path.join(folder, pattern)) for folder in {cwd, *map(os.path.dirname, files)}
            }
    return found, patterns


def _short(arg: str, letter: str) -> bool:
    """Whether ``arg`` is a cluster of short options holding ``letter`` (read loosely: a value's letters count too)."""
    return arg.startswith("-") and not arg.startswith("--") and letter in arg[1:]


def _backs_up(args: list[str]) -> bool:
    """Whether cp, mv, ln or install make backups: ``-b``, ``-S SUFFIX`` (which implies it), ``--backup``, ``--suffix``."""
    return any(_short(arg, "b") or _short(arg, "S") or arg.startswith(("--b", "--su")) for arg in args)


def _in_place_suffixes(args: list[str]) -> list[str] | None:
    """The backup suffixes of ``sed -i`` (``""`` when it keeps none), or None when sed does not edit in place."""
    suffixes: list[str] | None = None
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--i"):
            suffixes = (suffixes or []) + [arg.partition("=")[2]]
        elif _short(arg, "i"):
            suffixes = (suffixes or []) + [arg[arg.index("i") + 1 :]]
    return suffixes


def _glob_escape(path: str) -> str:
    """``path`` as a glob matching only itself (fnmatch has no backslash escape: each special character in brackets)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in path)


#: Downloaders and the files they read more options from, which may name any output (``output = …``, ``dir=…``);
#: ``~`` is the home folder, ``$X`` a variable of the environment.
DOWNLOADERS: dict[str, tuple[str, ...]] = {
    "curl": ("$CURL_HOME/.curlrc", "$XDG_CONFIG_HOME/.curlrc", "~/.curlrc"),
    "wget": ("$WGETRC", "~/.wgetrc"),
    "aria2c": ("$XDG_CONFIG_HOME/aria2/aria2.conf", "~/.aria2/aria2.conf"),
}
#: curl's ``#N`` in an output name: the Nth glob of the URL (``https://x/{guard}.yaml -o '#1.yaml'``).
_URL_PART = re.compile(r"#\d+")
#: The most of an options file that is read; a larger one counts as naming any file.
MAX_OPTIONS_FILE = 64 * 1024


#: wget's options known to keep a recursive download inside a folder per host (``-r -np -l 2 -P dir``), short without
#: a value, short with one, ``-n``'s letters (``-np``, ``-nv``: not ``-nH`` or ``-nd``), long without and with a value.
#: Any other (``-nH``, ``-nd``, ``-H``, ``-i``, ``-e``, ``--trust-server-names``, an abbreviation) may save elsewhere.
_WGET_SHORT, _WGET_SHORT_VALUED, _WGET_N = frozenset("rkKNcqvxEmpLS46"), frozenset("lPARwtTUIXoaDQO"), frozenset("vcpr")
_WGET_LONG = frozenset(
    "recursive no-parent convert-links backup-converted timestamping no-clobber continue quiet no-verbose verbose "
    "force-directories adjust-extension html-extension mirror page-requisites relative no-check-certificate "
    "random-wait server-response show-progress inet4-only inet6-only ignore-case no-cache no-cookies".split()
)
_WGET_LONG_VALUED = frozenset(
    "level directory-prefix accept reject wait tries timeout user-agent cut-dirs include-directories "
    "exclude-directories limit-rate header output-file append-output domains exclude-domains accept-regex "
    "reject-regex user password http-user http-password referer quota output-document".split()
)
#: wgetrc commands known to leave where wget saves alone (written as wget reads them: no ``_`` or ``-``, any case);
#: Debian's /etc/wgetrc sets ``passive_ftp``.
_WGETRC_KEEPS = frozenset(
    "passiveftp robots tries timeout waitretry checkcertificate useproxy httpproxy httpsproxy ftpproxy noproxy "
    "verbose quiet".split()
)
#: The wgetrc every user's wget reads first.
_SYSTEM_WGETRC = ("$SYSTEM_WGETRC", "/etc/wgetrc", "/usr/local/etc/wgetrc")
#: A host as a URL spells it, which a recursive wget makes a folder of (``example.com``, ``example.com:8080``).
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*(?::[0-9]+)?")


class Download:
    """What a downloader writes: ``names`` (a URL's last part, in the folder it saves to), ``patterns`` (relative globs:
    curl's ``-o '#1.yaml'`` takes a part of the URL), ``anywhere`` (names the server or a listing chooses: any file below
    that folder), ``hosts`` (for a recursive wget that keeps a folder per host: those folders, below each of which it
    may save any file), ``options`` (the text of the options files it reads)."""

    __slots__ = ("names", "patterns", "anywhere", "hosts", "options")

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.patterns: set[str] = set()
        self.anywhere = False
        self.hosts: set[str] = set()
        self.options: list[str] = []


def download(program: str, args: list[str], env: Mapping[str, str]) -> Download:
    """What ``curl``/``wget``/``aria2c`` with ``args`` may write under names no word spells: ``curl -O URL`` and
    ``wget URL`` save to the URL's last part (``https://x/guard.yaml``), ``curl -J``, ``wget -r``, ``aria2c`` to names the
    server gives; an options file (``~/.curlrc``) may say more. Read loosely."""
    found = Download()
    urls = [arg for arg in args if "://" in arg]
    if program == "curl":
        saves = any(_short(arg, "O") or arg.startswith("--remote-name") for arg in args)
        found.anywhere = any(
            _short(arg, "J") or _short(arg, "K") or arg.startswith(("--remote-h", "--conf")) for arg in args
        )
        found.patterns = {_URL_PART.sub("*", _glob_escape(arg)) for arg in args if _URL_PART.search(arg)}
    else:
        saves = True
        found.anywhere = program == "aria2c" or any(
            any(_short(arg, letter) for letter in "rmpiB")
            or arg.startswith(("--r", "--m", "--p", "--i", "--con", "--tr"))
            for arg in args
        )
    if saves:
        for url in urls:
            path = url.partition("://")[2].partition("/")[2]
            for name in {path.rsplit("/", 1)[-1], path.split("?")[0].split("#")[0].rsplit("/", 1)[-1]}:
                found.names |= {name, unquote(name)} - {""}
    unreadable = False
    if not (args[:1] == ["-q"] and program == "curl"):  # curl -q first reads no .curlrc
        unreadable = _options_files(program, env, found.options)
    if program == "wget" and found.anywhere and not unreadable:
        found.hosts = _host_folders(args, found.options, env)
        found.anywhere = not found.hosts
    found.anywhere = unreadable or found.anywhere
    return found


def _host_folders(args: list[str], options: list[str], env: Mapping[str, str]) -> set[str]:
    """The folders a recursive ``wget ARGS`` saves every file below, one per host of its URLs (it follows no link to
    another host without ``-H``, and names what a redirect brings after the URL asked for: wget 1.21's ``http.c`` and
    ``recur.c``): when every option is known
    to keep them (:data:`_WGET_LONG` …) and every wgetrc command too; else none (it may save anywhere)."""
    hosts: set[str] = set()
    rest = iter(args)
    for arg in rest:
        if arg.startswith("--") and arg != "--":
            name, equals, _ = arg[2:].partition("=")
            if name in _WGET_LONG_VALUED and not equals:
                next(rest, "")
            elif name not in _WGET_LONG_VALUED and (name not in _WGET_LONG or equals):
                return set()
        elif arg.startswith("-n") and arg != "-n":
            if not set(arg[2:]) <= _WGET_N:
                return set()
        elif arg.startswith("-") and arg not in ("-", "--"):
            for k, letter in enumerate(arg[1:], 1):
                if letter in _WGET_SHORT_VALUED:
                    if not arg[k + 1 :]:
                        next(rest, "")
                    break
                if letter not in _WGET_SHORT:
                    return set()
        elif arg != "--":  # a URL, with its scheme or without (wget reads example.com/docs as http://example.com/docs)
            host = re.split(r"[/?#]", arg.partition("://")[2] if "://" in arg else arg)[0].rpartition("@")[2]
            if not _HOST.fullmatch(host):
                return set()
            hosts |= {host.lower(), host.lower().partition(":")[0]}
    system = _system_wgetrc(env)
    if system is None:
        return set()
    commands = {line.split("#")[0].partition("=")[0] for text in [*options, *system] for line in text.splitlines()}
    if {c.strip().lower().replace("_", "").replace("-", "") for c in commands} - {""} - _WGETRC_KEEPS:
        return set()
    return hosts


def _system_wgetrc(env: Mapping[str, str]) -> list[str] | None:
    """The text of the system wgetrc files that exist (one read ahead of the user's), or None when one cannot be read."""
    from guard.core.regular_file import read_bytes

    texts = []
    for spelt in _SYSTEM_WGETRC:
        path = env.get(spelt[1:], "") if spelt.startswith("$") else spelt
        if path and os.path.lexists(path):
            data = read_bytes(path, MAX_OPTIONS_FILE)
            if data is None or len(data) > MAX_OPTIONS_FILE:
                return None
            texts.append(data.decode("utf-8", "replace"))
    return texts


def _options_files(program: str, env: Mapping[str, str], options: list[str]) -> bool:
    """Adds the text of each of ``program``'s options files that exists to ``options``; True when one cannot be read."""
    from guard.core.regular_file import read_bytes  # only where a downloader runs: off the other calls' path

    for spelt in DOWNLOADERS[program]:
        variable, _, rest = spelt[1:].partition("/") if spelt.startswith("$") else ("", "", "")
        if variable and not env.get(variable):
            continue
        path = env[variable] + ("/" + rest if rest else "") if variable else spelt.replace("~", env.get("HOME", "~"), 1)
        if not os.path.lexists(path):
            continue
        data = read_bytes(path, MAX_OPTIONS_FILE)
        if data is None or len(data) > MAX_OPTIONS_FILE:
            return True
        options.append(data.decode("utf-8", "replace"))
    return False


#: Perl's ``s/FROM/TO/`` with flags ``g`` and ``i`` only, any one-character delimiter but a bracket.
_SUBSTITUTION = re.compile(r"s([^\w\s\\{(<\[])((?:\\.|(?!\1).)*)\1((?:\\.|(?!\1).)*)\1([gi]*)", re.DOTALL)
#: Perl rename's options that take no value (file-rename 1.30: ``-v``, ``-n``, ``-f``, ``-0``, ``-d`` …); ``-e`` and ``-E``
#: take an expression each. Any other may read the names from somewhere else.
_RENAME_SHORT = frozenset("vnf0dhmV")
_RENAME_LONG = frozenset("verbose nono force null filename nopath path fullpath help man version".split())
#: What a regular expression or a Perl string reads as more than the characters themselves.
_REGEX_SPECIAL, _INTERPOLATES = frozenset(".^$*+?()[]{}|\\"), frozenset("$@\\")


def renamed(args: list[str], matches: Callable[[str], list[str] | None]) -> list[str] | None:
    """The names Perl's ``rename`` (Debian's ``rename``, ``file-rename``, ``prename``) gives the files ``args`` name, or
    None when they may be any: its expression (``-e``/``-E`` each, else the first operand) is Perl code that makes the
    name, so it is read only as a plain substitution (:func:`_plain`: ``s/evil/app/``, ``s/\\.txt$/.md/g``), applied
    to the whole operand and, for ``-d``, to its last part. Files named by ``matches`` where an operand is a glob or
    holds an expansion (None: not known); none named reads them from the input (any). util-linux's ``rename FROM TO
    FILES`` reads as an expression that is no substitution: guard cannot tell which rename runs, so it is any name."""
    expressions: list[str] = []
    operands: list[str] = []
    rest = iter(args)
    for arg in rest:  # Getopt::Long with bundling: options may follow the operands
        if arg == "--":
            operands += list(rest)
        elif arg == "-" or not arg.startswith("-"):
            operands.append(arg)
        elif arg.startswith("--"):
            if arg[2:] not in _RENAME_LONG:
                return None
        else:
            at = next((k for k, letter in enumerate(arg[1:], 1) if letter in "eE"), len(arg))
            if not set(arg[1:at]) <= _RENAME_SHORT:
                return None
            if at < len(arg):
                expressions.append(arg[at + 1 :] or next(rest, ""))
    if not expressions and operands:
        expressions.append(operands.pop(0))
    found = [_plain(expression) for expression in expressions]
    substitutions = [substitute for substitute in found if substitute is not None]
    if not operands or not substitutions or len(substitutions) < len(found):
        return None
    names: list[str] = []
    for operand in operands:
        files = matches(operand) if set(operand) & set("*?[$`") else [operand]
        if files is None:
            return None
        for name in files:
            whole, last = name, os.path.basename(name)
            for substitute in substitutions:
                whole, last = substitute(whole), substitute(last)
            names += [whole, os.path.join(os.path.dirname(name), last)]
    return names


def _plain(expression: str) -> Callable[[str], str] | None:
    """``s/FROM/TO/`` whose FROM is a literal text (``\\.`` and an escaped delimiter allowed), anchored by ``^`` or
    ``$`` or not, and TO a literal text, as a function of the name; None for any other Perl code."""
    found = _SUBSTITUTION.fullmatch(expression.strip())
    if found is None:
        return None
    delimiter, source, target, flags = found.groups()
    start, end = source.startswith("^"), source.endswith("$") and not source.endswith("\\$")
    literal = _literal(source[int(start) : len(source) - int(end)], delimiter, _REGEX_SPECIAL)
    replacement = _literal(target, delimiter, _INTERPOLATES)
    if not literal or replacement is None:
        return None
    pattern = re.compile(
        ("^" if start else "") + re.escape(literal) + ("$" if end else ""), re.I if "i" in flags else 0
    )
    count = 0 if "g" in flags else 1
    return lambda name: pattern.sub(lambda _: replacement, name, count=count)


def _literal(text: str, delimiter: str, special: frozenset[str]) -> str | None:
    """``text`` as the characters it stands for, when it holds none of ``special`` but ``\\.`` and an escaped
    delimiter; else None."""
    out: list[str] = []
    escaped = False
    for c in text:
        if escaped:
            if c not in (".", delimiter):
                return None
            out.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in special:
            return None
        else:
            out.append(c)
    return None if escaped else "".join(out)
