"""Files a program writes under a name it makes from one it is given: a backup's, a compressor's, a download's.

``cp -b -S .yaml x ../guard`` renames ``../guard`` to ``../guard.yaml``; ``sed -i.json … .claude/settings`` keeps a
copy of ``.claude/settings`` as ``.claude/settings.json``; ``gunzip -f ../guard.yaml.gz`` (and ``gpg ../guard.yaml.gpg``)
writes ``../guard.yaml``; ``split -a1 --additional-suffix=.yaml x ../guar`` writes it as its fourth piece. No word of
these names guard's file, so each path such a program names also stands for the names it may make of it: any name that
starts with it (the pattern ``PATH*``: a suffix added) and each shorter one (a suffix taken off). A backup suffix
holding ``*`` (GNU sed) is a name of its own, with the file's name for the ``*`` (a glob's: any name). A downloader
saves to the URL's last part, or to a name the server gives (:func:`download`). Options are read loosely: a word that
only looks like one counts, at the cost of a name that is not guard's. Standard library only: loaded by
:mod:`guard.protection.naming` for these programs alone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Literal
from urllib.parse import unquote

__all__ = ["DOWNLOADERS", "Download", "Kind", "derived", "download"]

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


class Download:
    """What a downloader writes: ``names`` (a URL's last part, in the folder it saves to), ``patterns`` (relative globs:
    curl's ``-o '#1.yaml'`` takes a part of the URL), ``anywhere`` (names the server or a listing chooses: any file below
    that folder), ``options`` (the text of the options files it reads)."""

    __slots__ = ("names", "patterns", "anywhere", "options")

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.patterns: set[str] = set()
        self.anywhere = False
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
    if not (args[:1] == ["-q"] and program == "curl"):  # curl -q first reads no .curlrc
        found.anywhere = _options_files(program, env, found.options) or found.anywhere
    return found


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
