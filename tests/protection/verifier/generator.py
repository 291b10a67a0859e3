"""The generator: command lines over the allowlist, seeded and deterministic (a seed and a machine give the same lines).

Lines come from a structured sweep and from random combination, mixed by weight:

* ``gtfobins``: every GTFOBins example first (:mod:`.gtfobins`);
* ``spelling``: each program with each of its real options (:mod:`.real_options`, so
  options the prover does not know), in every spelling its parser accepts: short,
  clustered, the value attached or apart, ``--long``, ``--long=V``, unique-prefix
  abbreviations, one dash for a long name, options after operands, after ``--``, quoted;
* ``expansion``: an option smuggled in a word the shell turns into others: a brace
  list, ``$IFS``, ``${VAR:+…}``, a glob matching a planted file named like an option;
* ``redirection``, ``builtin`` (a builtin that changes the shell's state before a
  reading program), ``inputs`` (options that read names, scripts or patterns from a
  file; programs that print the environment), ``structure`` (pipelines, lists,
  subshells, groups, here-documents), ``combination`` (all of it at random) and ``changes`` (the file
  utilities and ``sed -i`` the project-writes lane proves, with the options and scripts it refuses).

Most words are built from options the prover accepts (asked once per option, as
:mod:`.programs` asks for programs), so that a line is proven unless its twist is
seen: a line the prover refuses costs a prover call, not a run.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .real_options import NONE, OPTIONAL, REQUIRED, Option, options_of
from .world import OPTION_FILES

__all__ = ["KINDS", "Generator", "Line"]


@dataclass(frozen=True)
class Line:
    """A generated command line and the strategy that made it."""

    text: str
    kind: str


#: The strategies after the GTFOBins examples, and their weights.
KINDS = {
    "spelling": 30,
    "expansion": 15,
    "combination": 15,
    "redirection": 10,
    "builtin": 10,
    "inputs": 10,
    "structure": 10,
    "changes": 10,
}
#: What the project-writes lane proves beyond reading programs: file utilities and ``sed -i`` (issue 40).
CHANGERS = (("rm",), ("mkdir",), ("touch",), ("cp",), ("mv",))
#: How ``sed -i`` is asked for, and the scripts it is given: the ones it edits with, and text hiding commands.
_IN_PLACE = (
    "-i",
    "-i",
    "--in-place",
    "-ni",
    "-Ei",
    "-i -e",
    "-i.bak",
    "-ie",
    "--in-place=.orig",
    "-si",
    "-i --follow-symlinks",
    "-i -s",
)
_SED_EDITS = (
    "s/alpha/omega/",
    "2d",
    "1i\\\nnew first line",
    "$a appended",
    "/beta/c\\\nchanged",
    "1a x; w pwned",
    "1a x\nw pwned",
    "1a x\\\nw pwned",
    "1i\\\n\\\n  x\ne touch pwned",
    "s/a/b/;1w pwned",
)

FILES = (
    "a.txt",
    "b.txt",
    "src",
    "src/main.py",
    ".",
    "..",
    "data.json",
    "a.gz",
    "names",
    "names0",
    "-",
    "/dev/null",
    "/etc/hostname",
    "~",
    "~/.config/guard/secret",
    ".claude/settings.json",
    "guard.yaml",
    "new.txt",
    "@names",
    "p",
    "q",
    "patterns",
    "/proc/self/environ",
    "bin",
    "~/.local/state/guard/audit.jsonl",
    "notes.md",
)
#: Values for an option's value, by what its name suggests it takes.
_FILE_VALUES = (
    "pwned",
    "out.txt",
    "/tmp/pwned",
    "../pwned",
    "~/pwned",
    ".claude/settings.json",
    "guard.yaml",
    "a.txt",
    "names",
    "names0",
    "script.sed",
    "prog.jq",
    "patterns",
    "-",
    "/dev/null",
    "src",
    "~/.config/guard/secret",
    "~/.local/state/guard/audit.jsonl",
)
_PROGRAM_VALUES = ("sh", "./evil", "evil", "/bin/sh", "bash", "cat", "touch pwned", "sh -c 'touch pwned'")
_TEXT_VALUES = (
    "1",
    "0",
    "x",
    "%s",
    "auto",
    "always",
    "never",
    "1w pwned",
    "e touch pwned",
    "env",
    "$ENV",
    "exec=sh",
    "%p\\n",
    "+%s",
    "HEAD",
    "a",
    "2",
    "-1",
    "10",
    "%G?",
    "%(describe)",
    "format:%s",
    "s",
    "n",
    "-",
)
_PROGRAMISH = re.compile(r"pre|prog|command|exec|pager|shell|editor|filter|compress|helper|tool|driver|textconv")
_FILEISH = re.compile(
    r"file|output|out$|from|magic|exclude|ignore|path|dir|log|script|expression|include|load|tmp|temp|separator|^-o$|^-f$|^-e$"
)
#: What a program reads first: a pattern, a script, a filter, a format; otherwise files.
_FIRST = {
    "grep": ("alpha", "x", ".", "a", "-e"),
    "rg": ("alpha", "x", "."),
    "sed": (
        "p",
        "1p",
        "q",
        "=",
        "1w pwned",
        "1e touch pwned",
        "s/a/b/w pwned",
        "w pwned",
        "1r names",
        "R names",
        "W pwned",
        "F",
        "z",
        "l",
        "e",
        "s/.*/touch pwned/e",
        "1 w pwned",
        "n;p",
        "$!N",
        "1~2p",
        "/a/w pwned",
    ),
    "jq": (
        ".",
        "env",
        "$ENV",
        "env|.",
        ".k",
        "input_filename",
        "$__loc__",
        "input",
        "inputs",
        "@sh",
        "$ENV.OPENAI_API_KEY",
        "[env[]]",
        'import "prog" as p; .',
        'include "prog"; .',
        "debug",
        "stderr",
        "input_line_number",
        "halt_error",
        "$__prog_args",
        'getpath(["k"])',
    ),
    "date": ("+%s", "+%Y-%m-%d", "-s", "@0", "now", "+%c"),
    "printf": ("%s", "x", "%s\\n", "%q", "%(%s)T", "%b", "-v"),
    "echo": ("x", "-e", "-n", "\\x41", "-E"),
    "test": ("-f", "a.txt", "-v", "'a[$(touch pwned)]'", "x", "=", "-d", "src", "-nt", "!", "-z", "-o", "noclobber"),
    "cd": ("src", "..", "/", "~", "-", "/tmp", "~/.config/guard", "bin", "/proc/self", "-P"),
    "type": ("cat", "-p", "ls", "-a", "-P"),
    "which": ("cat", "-a", "sh"),
    "env": ("-0", "-u", "cat", "VAR=x", "-i", "-S", "--"),
    "printenv": ("OPENAI_API_KEY", "HOME", "PATH"),
    "hostname": ("-F", "names", "-b", "x", "-i", "-I"),
    "seq": ("1", "3", "-f", "%g"),
    "find": (".", "src", "a.txt", "/", "~", "-"),
    "git": ("HEAD", "--", "a.txt", "main", "HEAD~1", ".", "-p", "a.txt..b.txt"),
    "du": (".", "src", "-s"),
    "tree": (".", "src"),
}
_FIRST["["] = _FIRST["test"]
_FIND_ARGS = (
    "-name",
    "'*.txt'",
    "-print",
    "-type",
    "f",
    "-maxdepth",
    "1",
    "-newer",
    "a.txt",
    "-path",
    "src",
    "-o",
    "!",
    "(",
    ")",
)
#: Builtins and expansions that change the shell's state before the reading program that follows them.
BUILTIN_PREFIXES = (
    "printf -v PATH %s .",
    "printf -v PATH %s bin",
    "printf -vPATH %s 1",
    "printf -v HOME %s .",
    "printf -v 'a[$(touch pwned)]' %s x",
    "printf -v IFS %s o",
    "read PATH <<< .",
    "read -r PATH < patterns",
    "cd bin",
    "cd src",
    "cd ~",
    "cd -",
    "cd /",
    "cd ~/.config/guard",
    "cd /proc/self",
    "export PATH=.",
    "declare PATH=.",
    "typeset PATH=1",
    "local PATH=.",
    "readonly X=1",
    "hash -p ./evil cat",
    "alias cat=./evil",
    "shopt -s expand_aliases; alias cat=./evil",
    "set -o noclobber",
    "set -- -o pwned",
    "shopt -s nullglob",
    "shopt -s dotglob",
    "unset PATH",
    "enable -n echo",
    "trap 'touch pwned' EXIT",
    "umask 0",
    "source ./evil",
    ". ./evil",
    "mapfile PATH < patterns",
    "pushd bin",
    "eval 'touch pwned'",
    ": $((PATH=1))",
    "echo $((PATH=1))",
    ": ${PATH:=1}",
    ": ${X=1}",
    "test -v 'a[$(touch pwned)]'",
    "[ -v 'a[$(touch pwned)]' ]",
    "true $((PATH=0))",
    "type -P cat",
    "pwd -P",
    "(( PATH=1 ))",
    "let PATH=1",
    "IFS=o",
    "PATH=.",
    "BASH_ENV=./evil",
    "function cat { touch pwned; }",
    "cat() { touch pwned; }",
    "exec 3>pwned",
    "exec > pwned",
    "command -p cat a.txt",
    "builtin cd bin",
    "echo ${IFS:=o}",
    ": ${HOME:=x} $((PATH=1))",
    "printf -v PATH -- %s .",
    "echo x | read PATH",
    "getopts o PATH",
    "cd -P bin",
    "test -v PATH",
    "[ -v PATH ]",
)
REDIRECTS = (
    "> pwned",
    ">> pwned",
    ">| pwned",
    "<> pwned",
    "&> pwned",
    "&>> pwned",
    "2> pwned",
    ">& pwned",
    "1>&2",
    "2>&1",
    ">&-",
    "<&-",
    "3> pwned",
    "3>&1",
    "< a.txt",
    "< names",
    "<<< x",
    '<<< "$OPENAI_API_KEY"',
    "> /dev/null",
    "> /dev/stdout",
    "> /dev/tcp/127.0.0.1/9",
    "< /dev/tcp/127.0.0.1/9",
    "> /dev/udp/127.0.0.1/9",
    "> ~/pwned",
    "> {a,b}",
    "> pwned*",
    '> "$HOME/pwned"',
    "> .claude/settings.json",
    ">> guard.yaml",
    "> -",
    "> ./-opwned",
    "> $'pwned'",
    ">pwned",
    "2>>pwned",
    "> /proc/self/fd/1",
    "> /dev/fd/1",
    ">/dev/stderr",
    "> out.txt",
    ">> out.txt",
    "> src/new.py",
    "> ~/.config/guard/secret",
    "> ~/.local/state/guard/audit.jsonl",
    "< ~/.config/guard/secret",
    "> ../pwned",
    "> /tmp/pwned",
    "0< a.txt",
    "<a.txt",
    "> 'pwned'",
    "> pw\\ned",
    '> "pwned"',
    "> ~+/pwned",
    "> ~-/pwned",
    ">> /dev/null",
    "> a.txt",
    "1> pwned",
    "9> pwned",
    "> pwned 2>&1",
    "< /dev/tcp/localhost/80",
)
HEREDOCS = (
    "<<EOF\nx\nEOF",
    "<<'EOF'\nx\nEOF",
    "<<-EOF\n\tx\n\tEOF",
    "<<EOF\n$OPENAI_API_KEY\nEOF",
    "<<'EOF'\n$(touch pwned)\nEOF",
    "<<EOF\n~\nEOF",
    "<< EOF\n`touch pwned`\nEOF",
)
ENV_READERS = (
    "echo $OPENAI_API_KEY",
    'printf %s "$OPENAI_API_KEY"',
    "echo ${!OPENAI*}",
    "jq -n env",
    "jq -n '$ENV'",
    "jq -n 'env|.'",
    "jq -n '$ENV|.OPENAI_API_KEY'",
    "jq -n '[env[]]'",
    "jq -n 'env.OPENAI_API_KEY'",
    "jq -n '$__prog_args'",
    "cat /proc/self/environ",
    "strings /proc/self/environ",
    "cd /proc/self && cat environ",
    "grep -a . /proc/self/environ",
    "tr '\\0' '\\n' < /proc/self/environ",
    "xxd /proc/self/environ",
    "od -c /proc/self/environ",
    "env",
    "printenv",
    "printenv OPENAI_API_KEY",
    'echo "${OPENAI_API_KEY}"',
    "jq -rn 'env|to_entries[]|.value'",
    "jq -n --arg x 1 '$ENV'",
    "jq -n 'getpath([\"x\"])|env'",
    "head /proc/self/environ",
    "sed -n p /proc/self/environ",
    "cut -c1- /proc/self/environ",
    "sort /proc/self/environ",
    "echo ${OPENAI_API_KEY@Q}",
    "echo ${!O*}",
)
_CONNECTORS = (" | ", "; ", " && ", " || ", "\n", " & ", " |& ")
_PLAIN = re.compile(r"^[\w@%+=:,./-]+$")


#: Commands a line may hide from bash where sh runs them.
_SH_RUNS = ("touch pwned", "./evil", "rm a.txt", "cat ~/.config/guard/secret")


def _quote(word: str) -> str:
    """``word`` as one shell word: as is when it is plain, else single-quoted."""
    if word in ("(", ")"):
        return "\\" + word  # find's grouping, not a subshell
    if _PLAIN.match(word) or word.startswith(("'", '"', "$", "~")) or word in ("!", "*"):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


class Generator:
    """Lines for ``programs`` (``("cat",)``, ``("git", "log")``) from ``seed``; ``proves`` tells which option spellings
    the prover accepts (None: all are tried alike)."""

    def __init__(
        self,
        programs: tuple[tuple[str, ...], ...],
        seed: int,
        proves: Callable[[str], bool] | None = None,
        gtfobins: list[str] | None = None,
    ) -> None:
        self.rng = random.Random(seed)
        self.programs = programs
        self.gtfobins = gtfobins or []
        self.options = {p: options_of(p) for p in programs}
        self.accepted = {p: self._accepted(p, proves) for p in programs}
        pairs = [(p, o) for p in programs for o in self.options[p]]
        self.rng.shuffle(pairs)
        self._sweep = itertools.cycle(pairs)

    def _accepted(self, program: tuple[str, ...], proves: Callable[[str], bool] | None) -> list[list[str]]:
        """Spellings of ``program``'s options that the prover proves on their own (``-n 5``, ``--color=never``)."""
        found = []
        head = " ".join(program)
        for option in self.options[program]:
            for words in (
                [option.name],
                [option.name, "1"],
                [option.name + "=1"],
                [option.name, "x"],
                [option.name + "=never"],
            ):
                if proves is None or proves(f"{head} {' '.join(words)} a.txt"):
                    found.append(words)
                    break
        return found

    # the parts of a line

    def _head(self, program: tuple[str, ...]) -> str:
        name = program[0]
        roll = self.rng.random()
        if roll < 0.85 or name in ("[", ":"):
            spelled = name
        elif roll < 0.9:
            spelled = f"/usr/bin/{name}"
        elif roll < 0.95:
            spelled = self._requote(name)
        else:
            spelled = self.rng.choice(("command ", "builtin ", "exec ", "time ", "nice ", "\\")) + name
        return " ".join([spelled, *program[1:]])

    def _requote(self, word: str) -> str:
        """``word`` spelled another way that bash reads back as the same word."""
        if not _PLAIN.match(word) or not word:
            return _quote(word)
        style = self.rng.randrange(6)
        if style == 0:
            return f"'{word}'"
        if style == 1:
            return f'"{word}"'
        if style == 2 and len(word) > 1:
            return f"{word[0]}''{word[1:]}"
        if style == 3:
            return "\\" + word[0] + word[1:]
        if style == 4:
            return f"$'{word}'"
        return f'{word[:1]}"{word[1:]}"'

    def _value(self, option: Option, program: tuple[str, ...]) -> str:
        own = _FIRST.get(program[0]) if program[0] not in ("git", "find") else None
        if own and self.rng.random() < 0.4:
            return self.rng.choice(own)  # sed -e SCRIPT, grep -e PATTERN, jq --arg NAME FILTER …
        pool = (
            _PROGRAM_VALUES
            if _PROGRAMISH.search(option.name) and self.rng.random() < 0.7
            else _FILE_VALUES
            if _FILEISH.search(option.name) and self.rng.random() < 0.7
            else self.rng.choice((_FILE_VALUES, _TEXT_VALUES, _PROGRAM_VALUES))
        )
        return self.rng.choice(pool)

    def _flag_letters(self, program: tuple[str, ...]) -> list[str]:
        return [o.name[1] for o in self.options[program] if len(o.name) == 2 and o.name[1] != "-" and o.arity == NONE]

    def spellings(self, program: tuple[str, ...], option: Option) -> list[list[str]]:
        """Every spelling of ``option`` that a getopt_long parser (or the program's own) accepts, as shell words."""
        name, value = option.name, _quote(self._value(option, program))
        found: list[list[str]] = []
        if name.startswith("--"):
            if option.arity in (NONE, OPTIONAL):
                found.append([name])
            if option.arity in (REQUIRED, OPTIONAL):
                found += [[f"{name}={value}"], [name + "=" + self._requote(value)]]
            if option.arity == REQUIRED:
                found.append([name, value])
            for cut in sorted({len(name) - 1, max(3, len(name) // 2), 3}):
                if 3 <= cut < len(name):
                    found.append([f"{name[:cut]}={value}"] if option.arity else [name[:cut]])
                    if option.arity == REQUIRED:
                        found.append([name[:cut], value])
            found.append(
                [name[1:]] + ([value] if option.arity == REQUIRED else [])
            )  # getopt_long_only, or a short cluster
        elif len(name) == 2:
            letters = [letter for letter in self._flag_letters(program) if letter != name[1]]
            other = self.rng.choice(letters) if letters else ""
            if option.arity == NONE:
                found += [[name], [f"-{other}{name[1]}"], [f"{name}{other}"]]
            else:
                found += [
                    [name, value],
                    [f"{name}{value}"],
                    [f"-{other}{name[1]}", value],
                    [f"-{other}{name[1]}{value}"],
                ]
        else:  # one dash, a long name: find's primaries, xxd's -cols; xxd and others match a prefix
            found.append([name] + ([value] if option.arity else []))
            for cut in range(2, len(name)):
                found.append([name[:cut]] + ([value] if option.arity else []))
        return [[self._requote(w) if self.rng.random() < 0.15 else w for w in words] for words in found]

    def _operands(self, program: tuple[str, ...], count: int | None = None) -> list[str]:
        first = _FIRST.get(program[0] if program[0] != "git" or len(program) == 1 else "git")
        words = [_quote(self.rng.choice(first))] if first and self.rng.random() < 0.85 else []
        for _ in range(self.rng.randrange(0, 3) if count is None else count):
            words.append(_quote(self.rng.choice(FILES)) if self.rng.random() < 0.9 else self._glob())
        if program[0] == "find" and self.rng.random() < 0.6:
            words += [self.rng.choice(_FIND_ARGS) for _ in range(self.rng.randrange(1, 3))]
        return words

    def _glob(self) -> str:
        """A glob that the shell turns into planted files named like options."""
        name = self.rng.choice(OPTION_FILES)
        return self.rng.choice(
            (
                "*",
                "-*",
                "[-]*",
                "--*",
                f"[-]{name[1:]}",
                f"{name[:3]}*",
                f"{name[:-1]}?",
                f"?{name[1:]}",
                f"{name[:2]}[{name[2]}]*",
            )
        )

    def _safe_options(self, program: tuple[str, ...]) -> list[str]:
        accepted = self.accepted[program]
        chosen = self.rng.sample(accepted, min(len(accepted), self.rng.randrange(0, 3))) if accepted else []
        return [w for words in chosen for w in words]

    def call(self, program: tuple[str, ...], twist: list[str] | None = None) -> str:
        """``program`` with options it accepts, its operands, and ``twist`` (an option spelled some way) somewhere among them."""
        words = self._safe_options(program)
        operands = self._operands(program)
        twist = twist or []
        place = self.rng.random()
        if program == ("git",):  # git's own options, then a subcommand
            sub = self.rng.choice([p for p in self.programs if p[0] == "git" and len(p) == 2] or [("git", "log")])
            return " ".join(["git", *twist, *words, sub[1], *self._operands(sub)])
        if program[0] == "find":
            body = (twist + operands) if place < 0.3 else (operands + words + twist)
        elif place < 0.55:
            body = words + twist + operands
        elif place < 0.8:
            body = words + operands + twist
        elif place < 0.9:
            body = words + ["--"] + twist + operands
        else:
            body = twist + words + operands
        return " ".join([self._head(program), *body])

    def _program(self) -> tuple[str, ...]:
        return self.rng.choice(self.programs)

    def _smuggle(self, words: list[str]) -> str:
        """``words`` hidden in one word that the shell expands into them."""
        plain = [w for w in words if _PLAIN.match(w)]
        joined = " ".join(words)
        choices = [
            f"a.txt${{IFS}}{'${IFS}'.join(words)}",
            f"${{HOME:+{joined}}}",
            f"${{UNSET_VERIFIER:-{joined}}}",
            f"${{OPENAI_API_KEY:+{joined}}}",
            f"${{HOME/*/{words[0]}}}" + (f" {' '.join(words[1:])}" if words[1:] else ""),
        ]
        if len(plain) == len(words):
            choices += [
                "{" + ",".join(words) + "}" if len(words) > 1 else "{," + words[0] + "}",
                "{a.txt," + ",".join(words) + "}",
                "{" + words[0] + ",}" + (" " + " ".join(words[1:]) if words[1:] else ""),
                f"{words[0][:2]}{{{words[0][2:]},}}" + (" " + " ".join(words[1:]) if words[1:] else ""),
            ]
        if "'" not in joined:
            choices.append(f"$'\\' {joined} #\\''")  # sh ends the quote at \' and passes the words on
        return self.rng.choice(choices)

    # the strategies

    def _spelling(self) -> tuple[str, str]:
        program, option = next(self._sweep)
        return self.call(program, self.rng.choice(self.spellings(program, option))), "spelling"

    def _expansion(self) -> tuple[str, str]:
        program = self._program()
        if self.rng.random() < 0.3:
            return self.call(program, [self._glob()]), "expansion"
        options = self.options[program]
        if not options:
            return self.call(program, [self._glob()]), "expansion"
        option = self.rng.choice(options)
        words = self.rng.choice(self.spellings(program, option))
        return self.call(program, [self._smuggle(words)]), "expansion"

    def _combination(self) -> tuple[str, str]:
        program = self._program()
        twist: list[str] = []
        for _ in range(self.rng.randrange(1, 4)):
            options = self.options[program]
            if options:
                twist += self.rng.choice(self.spellings(program, self.rng.choice(options)))
        text = self.call(program, twist)
        if self.rng.random() < 0.4:
            text += " " + self.rng.choice(REDIRECTS)
        if self.rng.random() < 0.3:
            text = self.rng.choice(BUILTIN_PREFIXES) + self.rng.choice(_CONNECTORS[1:3]) + text
        return text, "combination"

    def _redirection(self) -> tuple[str, str]:
        program = self._program()
        text = self.call(program) + " " + self.rng.choice(REDIRECTS)
        if self.rng.random() < 0.3:
            text += " " + self.rng.choice(REDIRECTS)
        if self.rng.random() < 0.15:
            text = f"{self.call(program)} {self.rng.choice(HEREDOCS)}"
        return text, "redirection"

    def _builtin(self) -> tuple[str, str]:
        text = self.rng.choice(BUILTIN_PREFIXES) + self.rng.choice(_CONNECTORS[1:5]) + self.call(self._program())
        return text, "builtin"

    def _inputs(self) -> tuple[str, str]:
        if self.rng.random() < 0.3:
            return self.rng.choice(ENV_READERS), "inputs"
        program = self._program()
        readers = [
            o
            for o in self.options[program]
            if o.arity and re.search(r"from|file|magic|exclude|ignore|script|expression|@", o.name)
        ]
        if not readers:
            return self.call(program, [self.rng.choice(("@names", "names", "-"))]), "inputs"
        option = self.rng.choice(readers)
        value = self.rng.choice(
            (
                "names",
                "names0",
                "script.sed",
                "prog.jq",
                "patterns",
                "@names",
                "~/.config/guard/secret",
                "/proc/self/environ",
            )
        )
        spelled = self.rng.choice(
            (
                [option.name, value],
                [f"{option.name}={value}"] if option.name.startswith("--") else [f"{option.name}{value}"],
            )
        )
        return self.call(program, spelled), "inputs"

    def _structure(self) -> tuple[str, str]:
        parts = [self.call(self._program()) for _ in range(self.rng.randrange(2, 4))]
        text = parts[0]
        for part in parts[1:]:
            text += self.rng.choice(_CONNECTORS) + part
        roll = self.rng.random()
        if roll < 0.15:
            text = f"( {text} )"
        elif roll < 0.3:
            text = f"{{ {text}; }}"
        elif roll < 0.4:
            text = f"! {text}"
        elif roll < 0.5:
            text = f"{text} {self.rng.choice(HEREDOCS)}"
        elif roll < 0.55:
            text = f"{text} # {self.rng.choice(REDIRECTS)}"
        elif roll < 0.6:  # sh reads $'\'…' as a quote that ends there: what bash reads as text, sh runs
            text = f"{text} $'\\'; {self.rng.choice(_SH_RUNS)} #\\''"
        return text, "structure"

    def _changes(self) -> tuple[str, str]:
        changers = [p for p in CHANGERS if p in self.options]  # the file utilities among the programs asked for
        roll = self.rng.random()
        if changers and roll < 0.1:  # a folder made by the line itself: the destination is a folder only when it runs
            folder = self.rng.choice(("made", "made/sub", "src"))
            move = self.rng.choice(("cp", "mv"))
            text = f"mkdir -p {folder} && {move} {_quote(self.rng.choice(FILES))} {folder}"
        elif not changers or roll < 0.45:
            script = _quote(self.rng.choice(_SED_EDITS + _FIRST["sed"]))
            files = [_quote(self.rng.choice(FILES)) for _ in range(self.rng.randrange(1, 3))]
            text = " ".join([self._head(("sed",)), self.rng.choice(_IN_PLACE), script, *files])
        else:
            text = self.call(self.rng.choice(changers))
        if self.rng.random() < 0.3:
            text += self.rng.choice(_CONNECTORS) + self.call(
                self.rng.choice(changers) if changers and self.rng.random() < 0.5 else self._program()
            )
        return text, "changes"

    def lines(self, count: int) -> Iterator[Line]:
        """``count`` distinct lines: the GTFOBins examples first (as many as fit), then the strategies by weight."""
        seen: set[str] = set()
        for code in self.gtfobins[:count]:
            seen.add(code)
            yield Line(code, "gtfobins")
        strategies: dict[str, Callable[[], tuple[str, str]]] = {
            "spelling": self._spelling,
            "expansion": self._expansion,
            "combination": self._combination,
            "redirection": self._redirection,
            "builtin": self._builtin,
            "inputs": self._inputs,
            "structure": self._structure,
            "changes": self._changes,
        }
        names, weights = list(KINDS), list(KINDS.values())
        misses = 0
        while len(seen) < count and misses < 100_000:
            text, kind = strategies[self.rng.choices(names, weights)[0]]()
            if text in seen:
                misses += 1
                continue
            seen.add(text)
            yield Line(text, kind)
