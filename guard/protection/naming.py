"""What a tool call names on disk: every string of its input, expanded the way the shell and the tool would.

Self-protection judges a call by the paths it names, not by its verbs. This
module walks ``tool_input`` (every field of any name, lists and nested objects),
reads a shell tool's command line with the shell reader, and turns each word or
string into the absolute paths it can stand for:

* quotes and escapes (the shell reader), braces (``guard.yam{l,}``), tilde,
  ``$HOME``, ``$XDG_*``, ``${…}`` and ``${X:-default}`` from the hook's
  environment and from literal assignments earlier in the command
  (:mod:`guard.protection.word_expansion`);
* each word is also split at ``' " ( ) , ; = : < > | &`` and spaces, so a
  path inside code or an option (``open('guard.yaml')``, ``--output=x``,
  ``file:///…``) is seen;
* globs, matched against the file system as bash may match them under any of its
  glob options (:mod:`guard.protection.glob_matching`; a call whose globs list
  more than the budget is too large), and against the protected paths themselves;
  ``//``, ``.`` and ``..`` against ``cwd``, the command's earlier literal ``cd``
  and any directory-like field (Gemini's ``directory``, Codex's ``workdir``);
  symlinks resolved;
* what a command runs besides itself, read as lines of their own: a runner's
  command, a shell's ``-c`` text and what it is fed, git's aliases, ``*COMMAND``
  variables (:mod:`guard.protection.runners`), a program's own code
  (:mod:`guard.protection.program_code`).

The modules named load only for a line that needs them. Fields that hold what a
tool writes into a file (``content``, ``new_string`` …) and prose
(``description``) are data, not names. Every step is bounded: a call with more
text, words or expansions than :data:`LIMITS` allows raises :class:`TooLarge`
(the caller refuses it: the agent chose its size). Standard library only: it runs
on the ``guard hook`` fast path.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from guard.command_analysis.invocation import Invocation, command_name, unwrap
from guard.command_analysis.shell_syntax import Command, Redirect, Script, ShellSyntaxError, Word, parse
from guard.protection.readonly import MAX_COMMAND, SHELL_TOOLS, command_text, prove_command

if TYPE_CHECKING:
    from guard.protection.derived_names import Kind

__all__ = [
    "COMMAND_VARIABLE",
    "FED_SHELLS",
    "LIMITS",
    "MAGIC",
    "PACKAGE_RUNNERS",
    "SECONDS",
    "UNKNOWN",
    "Budget",
    "TooLarge",
    "Unit",
    "named_by",
    "units",
    "value_of",
]

#: The bounds on what one call may make guard look at.
LIMITS = {
    "text": 1024 * 1024,
    "strings": 4096,
    "depth": 32,
    "tokens": 20_000,
    "commands": 4096,
    "braces": 256,
    "brace_groups": 64,
    "patterns": 512,
    "entries": 20_000,
    "folders": 64,
    "listing": 20_000,
    "command": MAX_COMMAND,
}
#: The most folders a writing command may name, each of which may be where what it names goes (``cp a b … dir``).
MAX_FOLDERS = 16
#: How long looking at one call may take, whatever the machine's load: past it, the call is too large to judge.
SECONDS = 1.0
#: Fields whose text a tool writes or shows, never opens: file contents, replacements, prose.
DATA_FIELDS = frozenset(
    {
        "content",
        "contents",
        "new_string",
        "old_string",
        "new_source",
        "description",
        "prompt",
        "text",
        "message",
        "body",
        "title",
        "summary",
        "explanation",
        "justification",
        "commit_message",
        "new_str",
        "old_str",
        "file_text",
        "insert_text",
        "oldtext",
        "newtext",
    }  # the MCP filesystem server's edit_file: {"edits": [{"oldText", "newText"}]}
)
#: Fields a tool matches against file names (Glob's pattern, read_many_files' paths); elsewhere ``*`` is just a character.
GLOB_FIELDS = frozenset({"pattern", "patterns", "glob", "include", "paths", "globs"})
#: Fields that name the folder a call runs in or searches.
DIRECTORY_FIELDS = frozenset(
    {"directory", "workdir", "cwd", "dir", "dir_path", "working_directory", "working_dir", "root"}
)
#: Programs that act on a whole tree (searchers, archivers, syncers): with no folder named, the working directory.
TREE_PROGRAMS = frozenset(
    {"find", "fd", "fdfind", "rg", "ag", "ack", "tar", "bsdtar", "rsync", "unzip", "7z", "7za", "cpio", "tree", "zip"}
)
#: Tree programs that act on the working directory when no folder is named (``grep -r x``, ``tar -x``, ``unzip a.zip``).
IN_WORKING_DIRECTORY = frozenset(
    {
        "find",
        "fd",
        "fdfind",
        "rg",
        "ag",
        "ack",
        "grep",
        "egrep",
        "fgrep",
        "ls",
        "tar",
        "bsdtar",
        "unzip",
        "7z",
        "7za",
        "cpio",
        "tree",
        "git",
        "du",
        "patch",
        "pax",
        "jar",
        "ar",
        "unsquashfs",
        "cmake",
        "python",
    }
)
#: Archivers that extract only in some modes, and cmake's ``-E`` commands (:func:`guard.protection.tree_effects.extracts`).
EXTRACTORS = frozenset({"pax", "jar", "ar", "dpkg", "dpkg-deb", "unsquashfs", "uudecode", "cmake", "python"})
#: ``patch`` options that take a value (what is left are the files it patches).
_PATCH_VALUES = frozenset({"-i", "-d", "-o", "-r", "-p", "-F", "-z", "-B", "-V", "-Y", "-D"})
#: git subcommands that act on the whole work tree.
GIT_TREE = frozenset({"clean", "grep", "apply", "am"})
#: Compressors, which write a file named after the one they are given (a suffix added or taken off).
COMPRESSORS = frozenset(
    {
        *("gzip", "gunzip", "pigz", "unpigz", "bzip2", "bunzip2", "pbzip2", "xz", "unxz", "lzma", "unlzma"),
        *("lzip", "plzip", "lzop", "zstd", "unzstd", "zstdmt", "lz4", "unlz4", "brotli", "compress", "uncompress"),
    }
)
#: Programs that write files under names they make from those they are given (:mod:`guard.protection.derived_names`).
DERIVES_NAMES: dict[str, Kind] = {
    **dict.fromkeys(("cp", "mv", "ln", "install"), "backup"),
    "sed": "in_place",
    **dict.fromkeys(("split", "csplit"), "pieces"),
    **dict.fromkeys((*COMPRESSORS, "gpg", "gpg2"), "compress"),  # gpg a.gpg decrypts to a
    **dict.fromkeys(("curl", "wget", "aria2c"), "download"),
}
#: Programs that move or rename the paths they are given (a folder with all it holds): coreutils' mv, util-linux's
#: and perl's rename (each of whose operands is renamed), GLib's gio (move, rename, trash) and the trash commands.
MOVERS = frozenset(
    {"mv", "rename", "rename.ul", "file-rename", "prename", "gio", "gvfs-move", "gvfs-trash", "trash-put", "trash"}
)
#: Perl's rename, whose expression makes each new name (:func:`guard.protection.derived_names.renamed`).
_PERL_RENAMES = frozenset({"rename", "file-rename", "prename"})
#: gio's commands that move what they name (``gio info ..`` and ``gio list ..`` only read it).
_GIO_MOVES = frozenset({"move", "rename", "trash"})
#: Programs where ``-r``/``-R``/``--recursive`` (and ``-a``/``--archive``) mean the whole tree.
RECURSIVE_OPTION = frozenset(
    {"grep", "egrep", "fgrep", "cp", "ls", "chmod", "chown", "chgrp", "rm", "scp", "diff", "zip", "du", *COMPRESSORS}
)
#: Tools that search a tree (a folder named, or the working directory).
SEARCH_TOOLS = frozenset(
    {
        "grep",
        "glob",
        "search_file_content",
        "glob_tool",
        "grep_search",
        "file_search",
        "find_file",
        "read_many_files",
        "list_dir",
    }
)
_SEPARATORS = str.maketrans({c: " " for c in "'\"(),;=:<>|&`\t\n\r"})
#: A word bash expands a ``~`` in after ``=`` or ``:``, as in an assignment (``PREFIX=~/x``).
_ASSIGNMENT_LIKE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: A program that opens none of its arguments and changes nothing: it prints them (``printf -v`` assigns a variable).
_PRINTS = "echo"
#: Redirections that feed text to a command's input, not a file: a here-document (its delimiter is no name) or here-string.
_FED = frozenset({"<<", "<<-", "<<<"})
MAGIC = frozenset("*?[")
#: Shells, whose arguments are code (``bash -c 'rm ../g*'``): a glob there is matched when the shell runs it, quoted or not.
_SHELL_PROGRAMS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
#: Programs that run the shell text they are given or fed (a shell's ``-c``, ``echo '…' | bash``, ``at now <<< '…'``).
FED_SHELLS = frozenset({*_SHELL_PROGRAMS, "at", "batch"})
#: The JavaScript package managers and runners, which run a command they are given (``npx -c '…'``, ``npm exec …``,
#: ``pnpm exec …``, ``yarn exec …``, ``bun x …``): read by :mod:`guard.protection.runners` only, and only then, so that
#: ``yarn add guard`` is not taken for running guard, nor ``npm view @openai/codex`` for vim's ``view``.
PACKAGE_RUNNERS = frozenset({"npm", "npx", "pnpx", "bunx", "pnpm", "yarn", "bun"})
#: An assignment whose value a program runs as a shell line (``GIT_SSH_COMMAND=…``, ``PAGER=…``, ``EDITOR=…``).
COMMAND_VARIABLE = re.compile(r"^\w*(?:COMMAND|PAGER|EDITOR|VISUAL|ASKPASS|EXTERNAL_DIFF|GIT_SSH|LESSOPEN|LESSCLOSE)=")
#: Programs whose own code (an awk program, a makefile, a crontab, Tcl) runs shell lines and writes files:
#: :mod:`guard.protection.program_code` reads it, loaded only for them.
_RUNS_ITS_CODE = frozenset({"awk", "gawk", "mawk", "nawk", "make", "gmake", "crontab", "expect", "tclsh", "wish"})


class TooLarge(ValueError):
    """The call holds more than guard will look at within its bounds."""


class Unit:
    """One thing that acts: a simple shell command, or the tool call itself.

    ``paths``: absolute paths it names (as written and with symlinks resolved);
    ``patterns``: absolute globs it may name (matched against protected paths too);
    ``command``: the shell command (None for a tool call); ``tree``: it acts on whole folders;
    ``program``, ``args``: what it runs, after wrappers; ``texts``: its words' text;
    ``only_names``: ``find … -name PATTERN`` (no ``-o``) acts only on names matching (pattern, case-insensitive);
    ``creates``: acting on a tree, it may create files below it (an extraction, a copy), not only read, delete or change
    what is there (:func:`guard.protection.tree_effects.creates_files`); ``spared``: files of that tree it leaves alone
    (``git clean`` and the tracked files), when known; ``onto_root``: the paths among ``paths`` it copies or moves onto
    the root (``cp -r tmp /`` writes into ``/tmp``); ``moves``: for a command that moves or renames what it names
    (``mv``), the paths of where it moves it, which stay; the folders it moves go whole, even the one it runs in or one
    above (``mv .. /tmp/p``); ``fed_by``: the command before it in its pipeline, whose output is
    its input (``find … | xargs grep``).
    """

    __slots__ = (
        "label",
        "cwd",
        "paths",
        "patterns",
        "command",
        "tree",
        "program",
        "args",
        "texts",
        "only_names",
        "creates",
        "spared",
        "onto_root",
        "moves",
        "fed_by",
    )

    def __init__(
        self,
        label: str,
        cwd: str,
        *,
        command: Command | None = None,
        tree: bool = False,
        program: str | None = None,
        args: list[str] | None = None,
        texts: list[str] | None = None,
    ) -> None:
        self.label, self.cwd, self.command, self.tree, self.program = label, cwd, command, tree, program
        self.paths: set[str] = set()
        self.patterns: set[str] = set()
        self.args: list[str] = args or []
        self.texts: list[str] = texts or []
        self.only_names: tuple[str, bool] | None = None
        self.creates = tree
        self.spared: frozenset[str] = frozenset()
        self.onto_root: set[str] = set()
        self.moves: frozenset[str] | None = None
        self.fed_by: Unit | None = None


class Budget:
    """What is left of :data:`LIMITS` for one call; the clock too, so a slow machine still answers in time."""

    def __init__(self) -> None:
        self.tokens, self.entries, self.text, self.commands = (
            LIMITS["tokens"],
            LIMITS["entries"],
            LIMITS["text"],
            LIMITS["commands"],
        )
        self.until = time.monotonic() + SECONDS
        self.patterns = LIMITS["patterns"]
        self.folders: dict[str, str | None] = {}  # folder -> its real path (None: missing), resolved once per call
        self.listed: dict[str, frozenset[str] | None] = {}  # folder -> its entries that are symlinks (None: not listed)
        self.listing = LIMITS["listing"]

    def real_folder(self, folder: str) -> str | None:
        if folder not in self.folders:
            try:
                self.folders[folder] = os.path.realpath(folder) if os.path.isdir(folder) else None
            except (OSError, ValueError):
                self.folders[folder] = None
        return self.folders[folder]

    def links(self, folder: str) -> frozenset[str] | None:
        """The names in ``folder`` that are symlinks, or None when it is too large to list within the budget."""
        if folder not in self.listed:
            links: set[str] = set()
            listed = True
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        self.listing -= 1
                        if self.listing < 0:
                            listed = False
                            break
                        if entry.is_symlink():
                            links.add(entry.name)
            except (OSError, ValueError):
                listed = False
            self.listed[folder] = frozenset(links) if listed else None
        return self.listed[folder]

    def spend_command(self) -> None:
        self.commands -= 1
        if self.commands < 0:
            raise TooLarge(f"the command line holds more than {LIMITS['commands']} commands")
        self.clock()

    def clock(self) -> None:
        if time.monotonic() > self.until:
            raise TooLarge(f"looking at it took more than {SECONDS:g} s")

    def spend_text(self, size: int) -> None:
        self.text -= size
        if self.text < 0:
            raise TooLarge(f"the call holds more than {LIMITS['text']} characters of text to judge")

    def spend_token(self) -> None:
        self.tokens -= 1
        if self.tokens < 0:
            raise TooLarge(f"the call names more than {LIMITS['tokens']} distinct words")
        if not self.tokens % 256:
            self.clock()


def units(tool_name: str, tool_input: Mapping[str, Any], cwd: str, env: Mapping[str, str]) -> list[Unit]:
    """Every unit of the call ``tool_name(tool_input)`` with what it names. Raises :class:`TooLarge`."""
    budget = Budget()
    fields, directories = _strings(tool_input, budget)
    bases = [cwd] + [os.path.normpath(os.path.join(cwd, _expand_vars(d, env, {}))) for d in directories]
    workdir = bases[-1]  # a shell runs in its directory field, if it has one
    found: list[Unit] = []
    name = tool_name.lower()
    command = command_text(tool_input) if name in SHELL_TOOLS or name.endswith(("__bash", "__shell")) else None
    if command is not None:
        if len(command) > LIMITS["command"]:
            raise TooLarge(f"the command is longer than {LIMITS['command']} characters")
        try:
            script = parse(command)
        except ShellSyntaxError as exc:
            raise TooLarge(f"the command cannot be read: {exc}") from exc
        shell = _Shell(env, budget, found)
        shell.assigned["PWD"] = workdir  # the shell's, not the hook's: it starts in the call's folder
        shell.script(script, workdir, depth=0)
        fields = [(key, s) for key, s in fields if key not in ("command", "cmd")]
    tool = Unit(tool_name, cwd, program=name, tree=name in SEARCH_TOOLS, texts=[s for _, s in fields])
    seen: set[tuple[str, bool]] = set()
    for key, text in fields:
        for token, glob in _tokens(text, env, {}, glob=key.lower() in GLOB_FIELDS):
            if (token, glob) not in seen:
                seen.add((token, glob))
                budget.spend_token()
                for base in bases:
                    _resolve(token, base, tool, budget, glob=glob)
    if tool.tree and not any(os.path.isdir(p) for p in tool.paths):
        tool.paths.add(os.path.normpath(workdir))  # Grep or Glob with no folder searches the working directory
    for base in bases[1:]:
        tool.paths.add(base)
    _into_folders(tool)
    found.append(tool)
    return found


def named_by(word: str, cwd: str, env: Mapping[str, str]) -> Unit:
    """A unit holding what one shell word names (a redirection's target)."""
    unit, budget = Unit(word, cwd), Budget()
    for token, glob in _tokens(word, env, {}, glob=True):
        _resolve(token, cwd, unit, budget, glob=glob)
    return unit


def _strings(value: Any, budget: Budget, key: str = "", depth: int = 0) -> tuple[list[tuple[str, str]], list[str]]:
    """(field name, string) for every string in ``value`` outside data fields, and the directory fields' values."""
    if depth > LIMITS["depth"]:
        raise TooLarge(f"the tool input nests deeper than {LIMITS['depth']} levels")
    strings: list[tuple[str, str]] = []
    directories: list[str] = []
    if isinstance(value, str):
        if key.lower() in DATA_FIELDS:
            return strings, directories
        budget.spend_text(len(value))
        strings.append((key, value))
        if key.lower() in DIRECTORY_FIELDS:
            directories.append(value)
    elif isinstance(value, Mapping):
        items = list(value.items())
        if len(items) > LIMITS["strings"]:
            raise TooLarge(f"the tool input has more than {LIMITS['strings']} fields in one object")
        for name, item in items:
            more, dirs = _strings(item, budget, str(name), depth + 1)
            strings += more
            directories += dirs
    elif isinstance(value, list):
        if len(value) > LIMITS["strings"]:
            raise TooLarge(f"the tool input has more than {LIMITS['strings']} items in one list")
        for item in value:
            more, dirs = _strings(item, budget, key, depth + 1)
            strings += more
            directories += dirs
    return strings, directories


class _Shell:
    """Walks a parsed command line: one unit per simple command, with the folder each runs in."""

    def __init__(self, env: Mapping[str, str], budget: Budget, found: list[Unit]) -> None:
        self.env, self.budget, self.found = env, budget, found
        self.assigned: dict[str, str] = {}
        #: files the line's earlier commands wrote with known text; those they may have written otherwise; whether an earlier
        #: command may have changed files or the shell's state (so what is on disk, or in the environment, is not known)
        self.written: dict[str, str] = {}
        self.unknown: set[str] = set()
        self.unsure = False
        #: the data reading programs wrote into files earlier in the line: a later program that names such a file may run it
        self.fed: dict[str, list[str]] = {}
        #: the folders the shell was in before each cd of the line: it may still be in one (a cd in a subshell, a
        #: pipeline, the background, after a failed test, to a missing folder, or a popd), so relative paths are read there too
        self.earlier: list[str] = []
        #: the shell ran text guard could not read (``. $f``, ``source <(…)``): from then on it may be in any folder
        self.anywhere = False

    def script(self, script: Script, cwd: str, depth: int) -> str:
        for pipeline in script.pipelines:
            piped: list[str] = []  # what reading programs earlier in the pipeline pass on
            before: Unit | None = None
            for k, command in enumerate(pipeline.commands):
                feeds = k + 1 < len(pipeline.commands)
                cwd = self.command(command, cwd, depth, piped, piped_into=before is not None, feeds=feeds)
                unit = self.found[-1]
                unit.fed_by, before = before, unit
        return cwd

    def command(
        self, command: Command, cwd: str, depth: int, piped: list[str], *, piped_into: bool, feeds: bool
    ) -> str:
        self.budget.spend_command()
        # echo prints its words whatever their values: one guard does not compute (${f%.txt}) is data there too
        reads = prove_command(command, writes=True, env=self.env, cwd=cwd, alone=_prints(command)).proven
        words = _named_words(command, reads)
        data = _data(command) if reads and feeds else []  # what it passes on to the next command of its pipeline
        for word in [*command.assignments, *command.words, *(r.target for r in command.redirects), *_bodies(command)]:
            for sub in word.substitutions:
                self.script(sub, cwd, depth + 1)
        if not command.words:  # H=/x cat $H: bash expands $H before assigning, and for cat only
            for word in command.assignments:
                self._assign(word.text)
        invocation = unwrap(command, [], 0)
        # the program as it would run: ``G=guard; $G install`` runs guard
        program = (
            command_name(_expand_vars(invocation.head.text, self.env, self.assigned))
            if invocation is not None
            else None
        )
        args = invocation.texts if invocation is not None else []
        if program in ("export", "declare", "typeset", "local", "readonly"):
            for text in args:
                self._assign(text)
        self._unseen(program, args, command)
        unit = Unit(
            " ".join(w.text for w in command.words)[:200] or "(redirection)",
            cwd,
            command=command,
            program=program,
            args=args,
            texts=[w.text for w in words],
        )
        unit.tree = (
            program in TREE_PROGRAMS
            or (program in RECURSIVE_OPTION and _recursive(args, program))
            or (program == "git" and bool(GIT_TREE & set(args[:3])))
            or (program == "patch" and _patches_tree(args))
            or (program in EXTRACTORS and self._extracts(unit, program, args))
        )
        plain = (
            invocation is not None
            and invocation.head is command.words[0]
            and not command.assignments
            and not self.unsure
        )
        if unit.tree:
            self._tree(unit, command, plain, cwd)
        if program == "find":
            unit.only_names = _find_names(args)
        seen: set[tuple[str, bool]] = set()
        code = program in _SHELL_PROGRAMS
        for word in words:
            for token, glob in _tokens(
                word.text, self.env, self.assigned, glob=word.glob or word.dynamic or code, word=word if reads else None
            ):
                if (token, glob) not in seen:
                    seen.add((token, glob))
                    self.budget.spend_token()
                    self._resolve(token, cwd, unit, glob=glob)
        received: list[str] = []
        if (
            not reads
        ):  # data a reading program passed on is this program's to read, maybe as code: a pipe, a file it runs
            received = [*piped, *(text for path, texts in self.fed.items() if path in unit.paths for text in texts)]
            unit.texts += received
            for text in received:
                for token, glob in _tokens(text, self.env, self.assigned, glob=code):
                    if (token, glob) not in seen:
                        seen.add((token, glob))
                        self.budget.spend_token()
                        self._resolve(token, cwd, unit, glob=glob)
        piped += data
        if unit.tree and program in IN_WORKING_DIRECTORY and not any(os.path.isdir(p) for p in unit.paths):
            unit.paths.add(os.path.normpath(cwd))
            if self.anywhere:
                unit.patterns.add("*")
        _into_folders(unit, writes=not reads)
        if DERIVES_NAMES.get(program or "") == "download":
            self._downloads(unit, cwd)
        elif program in DERIVES_NAMES:
            _derived_names(unit, DERIVES_NAMES[program], cwd)
        if program in MOVERS and (program != "gio" or _GIO_MOVES.intersection(args[:2])):
            unit.moves = frozenset(
                p for word in _move_targets(program, args) for p in named_by(word, cwd, self.env).paths
            )
        if program in _PERL_RENAMES:
            self._renamed(unit, cwd)
        if self.anywhere:  # a file named into a folder it names (cp x .) may land in any folder
            unit.patterns |= {f"*/{os.path.basename(p)}" for p in list(unit.paths)[:256] if os.path.basename(p)}
        self.found.append(unit)
        if invocation is not None and program is not None and _runs_others(program):
            from guard.protection.runners import runner_lines

            written = [self.written[p] for p in sorted(unit.paths) if p in self.written]
            self._run_texts(
                runner_lines(program, args, invocation, received, self._stdin(command, cwd), written), cwd, depth
            )
        if program in _RUNS_ITS_CODE:
            fed = [*received, self._stdin(command, cwd) or ""]
            fed += [self.written[p] for p in sorted(unit.paths) if p in self.written]
            self._program_code(unit, program or "", cwd, depth, fed)
        if program == "git" or any(COMMAND_VARIABLE.match(word.text) for word in command.assignments):
            from guard.protection.runners import configured_lines

            self._run_texts(configured_lines(program, args, command.assignments), cwd, depth)
        self._after(command, program, reads, cwd)
        folder = cwd
        if program in ("cd", "pushd", "popd") and invocation is not None:
            folder = self._cd(program, invocation.args, cwd)
        elif program == "eval" and args:  # eval 'cd /' moves the shell as cd / does
            try:
                folder = self.script(parse(" ".join(args)), cwd, depth + 1)
            except ShellSyntaxError:
                pass
        elif program in ("source", ".") and invocation is not None:  # so does sourced text, when guard can read it
            self._run_texts(set(received), cwd, depth)  # echo '…' > s.sh; . s.sh: what the line wrote into it runs
            folder = self._source(None if piped_into else self._sourced(invocation, command, cwd), cwd, depth)
        if folder != cwd and cwd not in self.earlier:
            if len(self.earlier) >= LIMITS["folders"]:  # the shell may be in any of them: none may be left out
                raise TooLarge(f"the line changes folder more than {LIMITS['folders']} times")
            self.earlier.append(cwd)
        return folder

    def _program_code(self, unit: Unit, program: str, cwd: str, depth: int, fed: list[str]) -> None:
        """What a program's own code runs and writes (:mod:`guard.protection.program_code`): its shell lines read as
        commands of their own, the files it writes as what the unit names. A makefile the line wrote is fed to make."""
        from guard.protection import program_code

        if program in ("make", "gmake"):
            for name in ("GNUmakefile", "makefile", "Makefile"):
                path = os.path.join(cwd, name)
                fed += [self.written.get(path, ""), *self.fed.get(path, [])]
        found = program_code.code(program, unit.args, [text for text in fed if text], self._reader(cwd))
        self.budget.spend_text(sum(map(len, found.lines)))
        line = dict(self.assigned)
        for word in unit.command.assignments if unit.command is not None else []:
            self._assign(word.text)  # X=.. awk …: its environment, which ENVIRON["X"] and make's $(X) read
        for text in found.writes:
            for token, glob in _tokens(text, self.env, self.assigned, glob=False):
                self.budget.spend_token()
                self._resolve(token, cwd, unit, glob=glob)
        self._run_texts(set(found.lines), cwd, depth)
        self.assigned = line

    def _reader(self, cwd: str) -> Callable[[str], str | None]:
        """The text of a file named from ``cwd``, as a command of the line reads it (:meth:`_text`)."""
        return lambda name: None if UNKNOWN in name else self._text(os.path.join(cwd, name))

    def _run_texts(self, texts: set[str], cwd: str, depth: int) -> None:
        """Each of ``texts`` read as a line a shell of its own runs (a ``cd`` or an assignment there does not last): what
        a runner, a shell or a program's code runs (:mod:`guard.protection.runners`, :mod:`~guard.protection.program_code`)."""
        if depth >= LIMITS["depth"]:
            return
        assigned = dict(self.assigned)
        for text in sorted(filter(None, texts)):
            try:
                self.script(parse(text), cwd, depth + 1)
            except ShellSyntaxError:
                continue
        self.assigned = assigned

    def _extracts(self, unit: Unit, program: str, args: list[str]) -> bool:
        """Whether the unit extracts an archive (a sweep of the folder it names, or the working directory); one whose
        names may be absolute sweeps the root."""
        from guard.protection import tree_effects

        where = tree_effects.extracts(program, args)
        if where == "anywhere":
            unit.paths.add("/")
        return where is not None

    def _downloads(self, unit: Unit, cwd: str) -> None:
        """What a downloader saves under names no word spells (:func:`guard.protection.derived_names.download`): the
        URL's last part in the working directory and each folder it names (and where a link of that name leads: curl
        and wget write through it), any file below it for a name the server
        gives (below the folder of each host, for a recursive wget that keeps them), and the paths its options files
        name."""
        from guard.protection.derived_names import download

        found = download(unit.program or "", unit.args, self.env)
        folders = [cwd, *(p for p in sorted(unit.paths) if os.path.isdir(p))]
        if len(folders) > MAX_FOLDERS:
            raise TooLarge(f"the command `{unit.label[:80]}` names more than {MAX_FOLDERS} folders to download into")
        for name in sorted(found.names - {".", ".."}):  # through a link there too: x.txt -> ../guard.yaml
            self.budget.spend_token()
            for folder in folders:
                _resolve(name, folder, unit, self.budget, glob=False)
        unit.patterns |= {os.path.normpath(os.path.join(cwd, pattern)) for pattern in found.patterns}
        if found.anywhere:
            unit.tree = unit.creates = True
            unit.paths.add(os.path.normpath(cwd))
        for host in sorted(found.hosts):  # wget -r: a folder per host, where it may save any file
            self.budget.spend_token()
            unit.tree = unit.creates = True
            for folder in folders:
                _resolve(host, folder, unit, self.budget, glob=False)
        for text in found.options:
            unit.texts.append(text)
            for token, glob in _tokens(text, self.env, self.assigned, glob=False):
                self.budget.spend_token()
                self._resolve(token, cwd, unit, glob=glob)

    def _renamed(self, unit: Unit, cwd: str) -> None:
        """The names Perl's rename makes of those it is given (:func:`guard.protection.derived_names.renamed`), each a
        path the unit names; where they may be any name, any path (``*``). A glob operand stands for what it matches
        now, unless an earlier command of the line may have made other files."""
        from guard.protection.derived_names import renamed
        from guard.protection.glob_matching import glob_matches

        def matches(word: str) -> list[str] | None:
            if self.unsure or "$" in word or "`" in word:
                return None
            found = glob_matches(os.path.normpath(os.path.join(cwd, word)))
            return [path if os.path.isabs(word) else os.path.relpath(path, cwd) for path in found]

        names = renamed(unit.args, matches)
        if names is None:
            unit.patterns.add("*")
            return
        for name in names:
            self.budget.spend_token()
            self._resolve(name, cwd, unit, glob=False)

    def _resolve(self, token: str, cwd: str, unit: Unit, *, glob: bool) -> None:
        """``token`` from each folder the shell may be in: ``cwd``, the folders it was in before, and, once it ran text
        guard could not read, any folder (a relative path is then a pattern for the same path below any folder)."""
        for base in (cwd, *self.earlier):
            _resolve(token, base, unit, self.budget, glob=glob)
        if self.anywhere and not token.startswith("/"):
            below = os.path.normpath(token)
            while below == ".." or below.startswith("../"):
                below = below[3:] or "."
            if below != ".":
                unit.patterns.add(f"*/{below}")

    def _sourced(self, invocation: Invocation, command: Command, cwd: str) -> str | None:
        """The text ``. NAME`` / ``source NAME`` (not fed by a pipe) runs in the line's own shell: a here-string or
        here-document it is fed on ``/dev/stdin``, or the file NAME as written (looked for in PATH first when it holds no ``/``, as bash does); ""
        when there is no such file (nothing runs). None when guard cannot read it: a computed name, a pipe, a process
        substitution, a file an earlier command of the line may have written."""
        args = invocation.args[1:] if invocation.args[:1] and invocation.args[0].text == "--" else invocation.args
        if not args:
            return ""
        word = args[0]
        if word.dynamic or word.glob or word.process or word.substitutions or word.text.startswith("-"):
            return None
        name = _tilde(word.text, self.env, self.assigned) if word.tilde else word.text
        if name in ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/proc/thread-self/fd/0"):
            return self._stdin(command, cwd)
        if name.startswith(("/dev/", "/proc/")) or UNKNOWN in name:
            return None
        folders = [] if "/" in name else (value_of("PATH", self.env, self.assigned) or "").split(":")
        for path in [os.path.join(cwd, folder, name) for folder in folders] + [os.path.join(cwd, name)]:
            path = os.path.normpath(path)
            if UNKNOWN in path:
                return None
            if os.path.isfile(path) or path in self.written or path in self.unknown:
                return self._text(path)
        return None if self.unsure else ""

    def _source(self, text: str | None, cwd: str, depth: int) -> str:
        """The folder the shell is in after running sourced ``text`` from ``cwd``: its commands are the line's, read as
        eval's are; text guard cannot read leaves every folder and variable unknown."""
        if text is not None and depth < LIMITS["depth"]:
            self.budget.spend_text(len(text))
            try:
                return self.script(parse(text), cwd, depth + 1)
            except ShellSyntaxError:
                pass
        self.anywhere = True
        self.assigned.clear()
        self.assigned[UNKNOWN] = UNKNOWN
        return cwd

    def _cd(self, program: str, args: list[Word], cwd: str) -> str:
        """The folder ``cd ARGS`` moves to from ``cwd``, as bash finds it (``-`` is OLDPWD, a name is looked for in each
        folder of CDPATH first, ``-P`` resolves links), with PWD and OLDPWD, which later words may expand, set as bash sets
        them. A ``popd``, or a ``pushd`` that turns the folder stack, goes back to a folder of the line: one of
        :attr:`earlier`, where relative paths are read anyway."""
        operands = [w.text for w in args if not w.text.startswith(("-", "+")) or w.text == "-"]
        if program == "popd" or (program == "pushd" and not operands):
            return cwd
        if not operands:
            target = value_of("HOME", self.env, self.assigned) or cwd
        elif operands[0] == "-":
            target = self.assigned.get("OLDPWD", self.env.get("OLDPWD", cwd))
        else:
            target = _tilde(_expand_vars(operands[0], self.env, self.assigned), self.env, self.assigned)
        joined = os.path.join(cwd, target)
        if not target.startswith(("/", "./", "../")) and target not in (".", ".."):
            for entry in (value_of("CDPATH", self.env, self.assigned) or "").split(":"):
                found = os.path.join(cwd, entry or ".", target)
                if os.path.isdir(found):
                    joined = found if entry else joined
                    break
        physical = any(w.text.startswith("-") and "P" in w.text for w in args)
        folder = os.path.realpath(joined) if physical else os.path.normpath(joined)
        self.assigned["OLDPWD"], self.assigned["PWD"] = cwd, folder
        return folder

    def _tree(self, unit: Unit, command: Command, plain: bool, cwd: str) -> None:
        """What a command acting on a whole tree really touches (:mod:`guard.protection.tree_effects`), when its line
        is plain enough to tell (no wrapper, assignment or earlier command that may have changed files or the shell)."""
        from guard.protection import tree_effects

        program, args = unit.program or "", unit.args
        if plain and program in ("unzip", "tar") and tree_effects.lists_only(program, args, self.env):
            unit.tree = False  # a listing reads the archive only
        if plain and (program == "patch" or (program == "git" and args[:1] == ["apply"])):
            self._patched(unit, command, args, cwd)
        if plain and program == "git" and args[:1] == ["clean"]:
            tracked = tree_effects.tracked_files(cwd, self.env)
            unit.spared = tracked[1] if tracked is not None else frozenset()
        unit.creates = unit.tree and tree_effects.creates_files(program, args)

    def _after(self, command: Command, program: str | None, reads: bool, cwd: str) -> None:
        """What this command leaves for the later ones of the line: the text ``cat <<'EOF' > fix.patch`` wrote, or, after any
        command that is not a reading program (it may write any file, or change the shell's state), nothing known."""
        if not reads:
            self.unsure = True
            return
        last = _last_input(command)  # cat reads the last of its here-documents, not the first
        body = last.body if last is not None and last.op in ("<<", "<<-") else None
        for redirect in command.redirects:
            if redirect.op in (">", ">>"):
                target = os.path.normpath(os.path.join(cwd, redirect.target.text))
                self.fed.setdefault(target, []).extend(_data(command))
                text = (
                    body.text + "\n"
                    if program == "cat" and redirect.op == ">" and body is not None and len(command.words) == 1
                    else None
                )
                if text is None:
                    self.written.pop(target, None)
                    self.unknown.add(target)
                else:
                    self.written[target] = text

    def _patched(self, unit: Unit, command: Command, args: list[str], cwd: str) -> None:
        """``patch`` / ``git apply`` change the files their diff names: when the diff can be read, those are what the unit
        names (at every strip level), and it is no longer a sweep of the tree."""
        from guard.protection import tree_effects

        if args[:1] == ["apply"]:
            parsed = tree_effects.git_apply_args(args[1:])
            if parsed is None:
                return
            files, prefix = parsed
            bases = [os.path.join(cwd, prefix)]
            root = tree_effects.work_tree_root(cwd)
            if root is not None:
                bases.append(os.path.join(root, prefix))
            stdin = not files or "-" in files
            files = [f for f in files if f != "-"]
        else:
            sources = tree_effects.patch_sources(args, self.env)
            if sources is None or (sources.directory is not None and sources.files):
                return
            if sources.origfile is not None:
                unit.tree = False  # every hunk goes to the file named (GNU patch): already a named path
                return
            bases = [os.path.join(cwd, sources.directory or "")]
            files, stdin = sources.files, sources.stdin
        texts = [self._text(os.path.join(cwd, f)) for f in files]
        if stdin:
            texts.append(self._stdin(command, cwd))
        names: list[str] = []
        for text in texts:
            found = None if text is None else tree_effects.diff_names(text)
            if found is None:
                return
            names += found
        for name in names:
            self.budget.spend_token()
            for base in bases:
                _resolve(name, base, unit, self.budget, glob=False)
        unit.tree = False

    def _stdin(self, command: Command, cwd: str) -> str | None:
        """What a command's own last input redirection feeds it: a file, a here-document or a here-string (None: not known)."""
        last = _last_input(command)
        if last is None or last.op not in ("<", "<<", "<<-", "<<<"):
            return None
        if last.op == "<":
            return None if last.target.dynamic or last.target.glob else self._text(os.path.join(cwd, last.target.text))
        word = last.body if last.op != "<<<" else last.target
        return None if word is None or word.dynamic else word.text + "\n"

    def _text(self, path: str) -> str | None:
        """A file's text as the command will read it: written earlier in this line by ``cat <<'EOF'``, else from disk (bounded);
        None when an earlier command may have written it, or it cannot be read."""
        from guard.core.regular_file import read_text
        from guard.protection.tree_effects import MAX_DIFF

        path = os.path.normpath(path)
        if path in self.written:
            return self.written[path]
        if self.unsure or path in self.unknown:
            return None
        return read_text(path, MAX_DIFF)

    def _unseen(self, program: str | None, args: list[str], command: Command) -> None:
        """Mark the variables ``command`` sets from what guard does not see (input, a loop's list, an option's value, code
        it runs) as standing for any text (:data:`UNKNOWN`); after ``eval``, ``source`` or arithmetic, every variable."""
        raws = [w.raw for w in [*command.assignments, *command.words]]
        if program in _SETS_ANY or any("$((" in raw or "$[" in raw or raw.startswith("((") for raw in raws):
            self.assigned[UNKNOWN] = UNKNOWN
        names = [name for raw in raws for name in _ASSIGNING_EXPANSION.findall(raw)]
        keyword = [w.text for w in command.words[:2]]
        if keyword[:1] in (["for"], ["select"]):
            names += keyword[1:]
        elif program == "printf":  # -v NAME, or -vNAME
            names += [a[2:] or (args[k + 1] if k + 1 < len(args) else "") for k, a in enumerate(args) if a[:2] == "-v"]
        elif program in _SETS_UNSEEN:  # read NAME…, declare -n NAME=…, unset NAME …
            options = any(a.startswith("-") for a in args)
            names += [a.partition("=")[0] for a in args if not a.startswith("-") and ("=" not in a or options)]
            names += _SETS_UNSEEN[program]
        for name in names:
            if name.isidentifier() and len(self.assigned) < 256:
                self.assigned[name] = UNKNOWN

    def _assign(self, text: str) -> None:
        name, eq, value = text.partition("=")
        if eq and name.isidentifier() and len(self.assigned) < 256:
            self.assigned[name] = _expand_vars(value, self.env, self.assigned)[:4096]


def _last_input(command: Command) -> Redirect | None:
    """The command's last input redirection, which is what it reads (bash opens each in turn, the last one wins)."""
    inputs = [
        r
        for r in command.redirects
        if r.op in ("<", "<<", "<<-", "<<<", "<&", "<>") or (r.op[:1].isdigit() and "<" in r.op)
    ]
    return inputs[-1] if inputs else None


def _bodies(command: Command) -> list[Word]:
    return [r.body for r in command.redirects if r.body is not None]


def _prints(command: Command) -> bool:
    return bool(command.words) and os.path.basename(command.words[0].text) == _PRINTS


def _named_words(command: Command, reads: bool) -> list[Word]:
    """The words whose text may name a path. A reading program (proven: :func:`guard.protection.readonly.prove_command`)
    is given data (:func:`_data`): not names it opens. Anything else may read any text again as code: every word counts."""
    if not reads:
        return [*command.assignments, *command.words, *(r.target for r in command.redirects), *_bodies(command)]
    return [
        *(command.words[:1] if _prints(command) else command.words),
        *(r.target for r in command.redirects if r.op not in _FED),
    ]


def _data(command: Command) -> list[str]:
    """The text a reading program passes on without opening it: its here-documents and here-strings, and what ``echo``
    and ``printf`` print (:func:`guard.protection.runners.printed`)."""
    fed = [r.body.text if r.body is not None else r.target.text for r in command.redirects if r.op in _FED]
    if command.words and os.path.basename(command.words[0].text) in (_PRINTS, "printf"):
        from guard.protection.runners import printed

        fed += printed(command)
    return fed


def _into_folders(unit: Unit, *, writes: bool = False) -> None:
    """Each named file's name inside each named folder: ``cp x/settings.json .claude/`` and ``cp -t. x/guard.yaml`` write there.

    The root takes only names of what exists, unless ``/`` is a word of its own
    (``cp -r home /``): a ``/`` split out of a sed script (``s/a:/b:/``) would
    otherwise put each of the script's words at the top of the file system,
    where they name the folders holding guard's installation. What goes onto the
    root is kept apart (``onto_root``): it counts even where it holds the project,
    as guard's installation may live in the same top folder (``/tmp``, ``/home``).
    A command that ``writes`` (one not proven to only read) and names more folders than
    :data:`MAX_FOLDERS` is too large: each may be where its files go (``cp x/guard.yaml a1 … a16 ..``).
    """
    folders = [p for p in (sorted(unit.paths) if writes else sorted(unit.paths)[:256]) if os.path.isdir(p)]
    if len(folders) > MAX_FOLDERS and writes:
        raise TooLarge(f"the command `{unit.label[:80]}` names more than {MAX_FOLDERS} folders to write into")
    folders = folders[:MAX_FOLDERS]
    if folders:
        names = {os.path.basename(p) for p in unit.paths} - {""}
        unit.paths |= {os.path.join(folder, name) for folder in folders if folder != "/" for name in names}
        if "/" in folders:
            root_word = any(text == "/" or text.endswith("=/") for text in unit.texts)
            onto = {
                os.path.join("/", os.path.basename(p))
                for p in list(unit.paths)
                if os.path.basename(p) and (root_word or os.path.lexists(p))
            }
            unit.paths |= onto
            unit.onto_root |= onto


def _runs_others(program: str) -> bool:
    """Whether ``program`` may run a command or shell text it is given or fed (:mod:`guard.protection.runners` reads
    which): a shell, ``at``, a JavaScript package runner, or one of
    :data:`guard.protection.self_invocation.RUNS_A_COMMAND`."""
    from guard.protection.self_invocation import RUNS_A_COMMAND  # it imports this module; loaded on every call anyway

    return program in FED_SHELLS or program in PACKAGE_RUNNERS or program in RUNS_A_COMMAND


def _move_targets(program: str, args: list[str]) -> list[str]:
    """The words naming where ``mv ARGS`` moves its sources (``-t DIR``, else its last operand); none for the others. Read
    loosely: a word taken for a target that is not one only keeps a folder counted as moved."""
    if program != "mv" or any(arg.startswith("--ex") for arg in args):
        return []  # rename's operands are all renamed; mv --exchange (coreutils 9.5) swaps its target too
    operands, targets, ended, i = [], [], False, 0
    while i < len(args):
        arg = args[i]
        i += 1
        if ended or arg == "-" or not arg.startswith("-"):
            operands.append(arg)
        elif arg == "--":
            ended = True
        elif arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if len(name) > 1 and ("target-directory".startswith(name) or "suffix".startswith(name)) and not eq:
                value, i = (args[i] if i < len(args) else ""), i + 1
            if len(name) > 1 and "target-directory".startswith(name):
                targets.append(value)
        else:
            at = next((k for k, letter in enumerate(arg) if letter in "tS"), 0)
            if at:
                value = arg[at + 1 :] or (args[i] if i < len(args) else "")
                i += 0 if arg[at + 1 :] else 1
                targets += [value] if arg[at] == "t" else []
    return targets or operands[-1:]


def _derived_names(unit: Unit, kind: Kind, cwd: str) -> None:
    """The names the unit's program may write that it makes from those it names (``cp -S .yaml x guard``)."""
    from guard.protection.derived_names import derived

    found, patterns = derived(kind, unit.args, unit.paths, cwd, globbed=bool(unit.patterns))
    unit.paths |= found
    unit.patterns |= patterns


def _patches_tree(args: list[str]) -> bool:
    """``patch < fix.diff`` (no file named) patches whatever files the diff names, in the working tree."""
    return not any(not a.startswith("-") and (i == 0 or args[i - 1] not in _PATCH_VALUES) for i, a in enumerate(args))


def _find_names(args: list[str]) -> tuple[str, bool] | None:
    """The one ``-name``/``-iname`` pattern every file ``find`` acts on must match, when there is no alternative (``-o``)."""
    if {"-o", "-or", ","} & set(args):
        return None
    found = [(args[i + 1], args[i] == "-iname") for i, a in enumerate(args[:-1]) if a in ("-name", "-iname")]
    return found[0] if len(found) == 1 else None


def _recursive(args: list[str], program: str) -> bool:
    for arg in args:
        if arg == "--":
            break
        if arg in ("--recursive", "--archive", "--dereference-recursive"):
            return True
        if (
            arg.startswith("-")
            and not arg.startswith("--")
            and ("r" in arg or "R" in arg or (program == "cp" and "a" in arg))
        ):
            return True
    return False


def _tokens(
    text: str, env: Mapping[str, str], assigned: Mapping[str, str], *, glob: bool, word: Word | None = None
) -> Iterator[tuple[str, bool]]:
    """Each path-like string ``text`` may stand for: expanded whole, and its parts between separators.

    Any text may be code another program reads again, so by default every ``$NAME`` and ``~`` is expanded, wherever it
    stands. Given the ``word`` a reading program receives (data to it, read by no one else), only what the shell itself
    expands is: ``$…`` outside single quotes, a leading unquoted ``~`` (and one after ``=`` or ``:`` of an assignment-like
    word, which bash expands too). A quoted ``~`` is text.
    """
    exact = word is not None
    expand, leading_tilde = (word.dynamic, word.tilde) if word is not None else (True, True)
    parts_tilde = not exact or bool(_ASSIGNMENT_LIKE.match(text))
    expansions, wild = _braces(_expand_vars(text, env, assigned) if expand else text)
    glob = glob or wild
    for expanded in expansions:
        if leading_tilde and _DIR_STACK.match(expanded.strip()):  # ~1, ~-1: a folder of the stack, not followed here
            expanded = _DIR_STACK.sub(UNKNOWN, expanded.strip(), count=1)
        if UNKNOWN in expanded:
            for pattern in _unknowns(expanded.strip()):
                yield from _tokens(pattern, env, assigned, glob=True)
            continue
        whole = _tilde(expanded.strip(), env, assigned) if leading_tilde else expanded.strip()
        if UNKNOWN in whole:  # ~ or ~+ once the line ran code guard does not follow
            yield from _tokens(whole, env, assigned, glob=True)
            continue
        if whole and len(whole) <= 4096 and "\0" not in whole:
            yield whole, glob
        for part in expanded.translate(_SEPARATORS).split():
            part = _tilde(part, env, assigned) if parts_tilde else part
            if part != whole and len(part) <= 4096:
                yield part, glob
            if len(part) > 2 and part[0] == "-" and part[1] != "-":
                yield (
                    (_tilde(part[2:], env, assigned) if not exact else part[2:]),
                    glob,
                )  # a short option's attached value: -t. -o/path -C~/x


#: bash's ``~N``, ``~+N`` and ``~-N``: the folders ``pushd`` put on its stack.
_DIR_STACK = re.compile(r"~[+-]?[0-9]+(?=/|$)")
#: bash's ``~+`` and ``~-``: the shell's working folder and the one before it.
_TILDE_FOLDERS = {"~+": "PWD", "~-": "OLDPWD"}


#: Builtins that set the variables they name from what guard does not see (besides ``for``, ``select`` and ``printf -v``),
#: and the ones they set unnamed.
_SETS_UNSEEN = {
    "read": ("REPLY",),
    "mapfile": ("MAPFILE",),
    "readarray": ("MAPFILE",),
    "getopts": ("OPTARG", "OPTIND"),
    "declare": (),
    "typeset": (),
    "local": (),
    "export": (),
    "readonly": (),
    "unset": (),
}
#: Builtins after which any variable may hold anything: they run code or evaluate arithmetic guard does not follow.
_SETS_ANY = frozenset({"eval", "source", ".", "let"})
#: ``${NAME:=word}`` and ``${NAME=word}`` assign NAME as they expand.
_ASSIGNING_EXPANSION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?=")
#: What a ``${…}`` guard does not compute stands for, in the text it expands: any text, ``/`` included.
UNKNOWN = "\ue000"


def _unknowns(text: str) -> list[str]:
    """The patterns a text holding :data:`UNKNOWN` may stand for: the unknown as ``*``, and, where it starts a path, the
    same from the root (``${HOME:0:1}etc/x`` is ``/etc/x``); and the text with it empty (``${HOME#$HOME}/etc/x``). Alone,
    or with no ``/`` beside it, it names nothing guard can see."""
    pattern, empty = text.replace(UNKNOWN, "*"), text.replace(UNKNOWN, "")
    if "/" not in empty or not empty.strip(
        "/"
    ):  # no path around it: its value is not seen (``echo ${f%.txt}``, ``$d/``)
        return [empty] if empty else []
    rooted = [f"/{pattern}"] if text.startswith(UNKNOWN) else []
    return [pattern, *rooted, empty]


def _tilde(text: str, env: Mapping[str, str], assigned: Mapping[str, str]) -> str:
    if text == "~" or text.startswith("~/"):
        home = value_of("HOME", env, assigned)  # the line may have set it (HOME=/; cat ~/x)
        return (home if home is not None else env.get("HOME", os.path.expanduser("~"))) + text[1:]
    folder = _TILDE_FOLDERS.get(text[:2])
    if folder is not None and (len(text) == 2 or text[2] == "/"):
        return (value_of(folder, env, assigned) or "~") + text[2:]
    if text.startswith("~") and len(text) < 256:
        return os.path.expanduser(text)
    return text


def value_of(name: str, env: Mapping[str, str], assigned: Mapping[str, str]) -> str | None:
    """NAME's value: as the line assigned it, any text once it ran code guard does not follow, else the environment's."""
    if name in assigned:
        return assigned[name]
    return UNKNOWN if UNKNOWN in assigned else env.get(name)


def _expand_vars(text: str, env: Mapping[str, str], assigned: Mapping[str, str]) -> str:
    """``text`` with its ``$NAME`` and ``${…}`` expanded (:func:`guard.protection.word_expansion.expand_vars`, loaded only
    for a text that holds a ``$``)."""
    if "$" not in text:
        return text
    from guard.protection.word_expansion import expand_vars

    return expand_vars(text, env, assigned)


def _braces(text: str) -> tuple[list[str], bool]:
    """``text``'s brace expansions (:func:`guard.protection.word_expansion.braces`, loaded only for a text that holds
    ``{`` and ``}``), and whether they were too many to list and became globs."""
    if "{" not in text or "}" not in text:
        return [text], False
    from guard.protection.word_expansion import braces

    return braces(text)


#: The start of a path into the process's own folder of ``/proc``: its working directory or root, as it sees them.
_OWN_PROC = re.compile(r"^/+proc/+(?:self|thread-self)(?:/+task/+[^/]+)?/+(cwd|root)(?=/|$)")


def _resolve(token: str, base: str, unit: Unit, budget: Budget, *, glob: bool) -> None:
    """Add the absolute paths ``token`` names, relative to ``base``; a glob's are every path it may match.

    The program that opens it, not guard, is the process ``/proc/self`` means: ``/proc/self/cwd/x`` is ``x`` in ``base``.
    The kernel takes ``..`` after following a link, so ``link/../x`` is also read from where ``link`` leads (``ln -s /etc
    e``: ``e/../home`` is ``/home``), not only as ``x`` beside ``link``.
    """
    joined = os.path.join(base, token)
    own = _OWN_PROC.match(joined)
    if own:  # the client's own tool (Read) opens it as the client, whose folder may be guard's: both are read
        _resolve_joined(joined, unit, budget, glob=glob)
        joined = (base if own.group(1) == "cwd" else "/") + "/" + joined[own.end() :]
    _resolve_joined(joined, unit, budget, glob=glob)


def _resolve_joined(joined: str, unit: Unit, budget: Budget, *, glob: bool) -> None:
    """:func:`_resolve` of a path already joined to its folder."""
    physical = ".." in joined.split("/")
    full = os.path.normpath(joined)
    if full.startswith("//"):
        full = "/" + full.lstrip("/")
    if glob and (MAGIC & set(joined) or "(" in joined):  # a pattern: guard.protection.glob_matching reads it
        from guard.protection.glob_matching import as_patterns, matches

        full, joined = as_patterns(full, joined)
        if MAGIC & set(full):
            if full not in unit.patterns:
                budget.patterns -= 1
                if budget.patterns < 0:
                    raise TooLarge(f"the call holds more than {LIMITS['patterns']} glob patterns")
            unit.patterns.add(full)  # also matched against protected paths: a missing file may be created
            for match in matches(full, joined, physical, budget):
                _add(match, unit, budget)  # a folder of the pattern's written path is listed as the kernel finds it
            return
    if physical:
        try:
            unit.paths.add(os.path.realpath(joined))
        except (OSError, ValueError):
            pass
    _add(full, unit, budget)


def _add(full: str, unit: Unit, budget: Budget) -> None:
    """``full`` and the same with symlinks resolved: its folder resolved and listed once per call, the file looked up there."""
    unit.paths.add(full)
    parent, name = os.path.split(full)
    real = budget.real_folder(parent)
    if real is None:
        return  # no such folder: nothing there can be a link
    links = budget.links(parent)
    if links is not None and name not in links:
        unit.paths.add(os.path.join(real, name))
        return
    try:
        unit.paths.add(os.path.realpath(full))
    except (OSError, ValueError):
        pass
