"""The refusal rules, applied to every simple command a hook's command line would run.

Each rule reads one :class:`Invocation` (the command after wrappers such as
``env``, ``nohup``, ``timeout`` or ``xargs`` are peeled off) and yields
:class:`Finding` s. Findings are BLOCK (refused for every source) or ESCALATE
(refused for hooks from skills, plugins and user config; a person must decide);
WRITES and REMOVES findings are no refusal, they record each path a command
writes or removes (the self-protection rule reads them). Arguments are data: ``echo rm -rf /`` and ``grep sudo log.txt`` run no ``rm``
and no ``sudo``, so they pass; whatever a line would *execute* is judged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from guard.command_analysis.invocation import Invocation, command_name, unwrap
from guard.command_analysis.paths import (
    BLOCK,
    ESCALATE,
    REMOVES,
    WRITES,
    protected_write,
    sweeping_target,
)
from guard.command_analysis.shell_syntax import Command, Script, Word, parse

__all__ = ["Finding", "findings"]

#: How many times a literal string may be re-read as shell code (sh -c 'sh -c …').
_MAX_REREAD = 8

_PAYLOAD_VARS = re.compile(r"\$\{?(ARGUMENTS|HOOK_PAYLOAD)\b")
_BARE_PARAMETER = re.compile(r"\$(\{[^}]*\}|[A-Za-z_]\w*|[0-9@*])")
#: How far a fork bomb's function name and body are looked for around each ``()`` (bounds the search to linear time).
_FORK_BOMB_WINDOW = 256
_PRINTF_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]|[0-7]{1,3}|u[0-9A-Fa-f])")

_PRIVILEGE = frozenset(
    {
        "sudo",
        "su",
        "doas",
        "pkexec",
        "runuser",
        "run0",
        "setpriv",
        "chroot",
        "setcap",
        "visudo",
        "usermod",
        "useradd",
        "adduser",
        "groupadd",
        "gpasswd",
        "passwd",
        "chpasswd",
    }
)
#: Privilege commands that run another command, with their options that take a value.
_RUN_AS: dict[str, frozenset[str]] = {
    "sudo": frozenset(
        {
            "-u",
            "-g",
            "-C",
            "-D",
            "-h",
            "-p",
            "-r",
            "-t",
            "-U",
            "-T",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--chdir",
        }
    ),
    "doas": frozenset({"-u", "-C"}),
    "pkexec": frozenset({"--user"}),
    "run0": frozenset({"-u", "--user", "-g", "--group", "-D", "--chdir"}),
}
_DISK = frozenset(
    {"mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "sgdisk", "gdisk", "blkdiscard"}
)
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff", "telinit"})
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
_DOWNLOADERS = frozenset(
    {
        "curl",
        "wget",
        "fetch",
        "aria2c",
        "http",
        "https",
        "httpie",
        "lwp-download",
        "lwp-request",
        "nc",
        "ncat",
        "netcat",
        "socat",
    }
)
_SHELL_VALUE_OPTIONS = frozenset({"--rcfile", "--init-file", "-o", "+o", "-O", "+O"})
_FIND_NAME_TESTS = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex"})
_HISTORY_VARS = frozenset({"HISTFILE", "HISTSIZE", "HISTFILESIZE", "SAVEHIST"})


@dataclass(frozen=True, slots=True)
class Finding:
    """``level`` "block" | "escalate" | "writes" | "removes", why, and the path (for "writes" and "removes")."""

    level: str
    reason: str
    path: str | None = None


@dataclass(frozen=True, slots=True)
class _Interpreter:
    """How an interpreter takes inline code: short letters (clusters like ``-ne``) and long flags.

    ``value_letters``: options whose value follows (so their letters are not read as flags).
    """

    inline_letters: str
    inline_long: frozenset[str] = frozenset()
    value_letters: str = ""
    case_insensitive: bool = False


_INTERPRETERS: dict[str, _Interpreter] = {
    "python": _Interpreter("c", value_letters="WXQm"),
    "pypy": _Interpreter("c", value_letters="WXQm"),
    "node": _Interpreter("ep", frozenset({"--eval", "--print"}), value_letters="rC"),
    "nodejs": _Interpreter("ep", frozenset({"--eval", "--print"}), value_letters="rC"),
    "bun": _Interpreter("ep", frozenset({"--eval", "--print"})),
    "deno": _Interpreter("", frozenset({"eval"})),
    "perl": _Interpreter("eE", value_letters="MmIxil0FCd"),
    "ruby": _Interpreter("e", value_letters="IrCEFKTWx"),
    "php": _Interpreter("rRBE", value_letters="cdzf"),
    "lua": _Interpreter("e", value_letters="l"),
    "luajit": _Interpreter("e", value_letters="lj"),
    "Rscript": _Interpreter("e"),
    "osascript": _Interpreter("e"),
    "pwsh": _Interpreter("", frozenset({"-c", "-command", "-e", "-ec", "-encodedcommand"}), case_insensitive=True),
    "powershell": _Interpreter(
        "", frozenset({"-c", "-command", "-e", "-ec", "-encodedcommand"}), case_insensitive=True
    ),
}


def findings(script: Script, source: str = "", *, reread: int = 0) -> Iterator[Finding]:
    """Every finding for ``script`` (``source`` is its text, for the few whole-line patterns)."""
    if _fork_bomb(source):
        yield Finding(BLOCK, "fork bomb: a function that pipes into itself in the background")
    for pipeline in script.pipelines:
        for index, command in enumerate(pipeline.commands):
            yield from _nested(command, reread)
            yield from _assignments(command.assignments)
            yield from _redirect_writes(command)
            invocation = unwrap(command, pipeline.commands[:index], reread)
            if invocation is not None:
                yield from _invocation(invocation)


def _fork_bomb(source: str) -> bool:
    """A function that pipes into itself in the background (``:(){ :|:& };:``), found in linear time.

    A backreferencing regex did this in quadratic time on a long word; here each ``()``
    looks at a bounded window: the name before it and the body after it.
    """
    at = source.find("()")
    while at >= 0:
        before = source[max(0, at - _FORK_BOMB_WINDOW) : at].rstrip()
        name = before.split()[-1] if before.split() else ""
        after = source[at + 2 : at + 2 + _FORK_BOMB_WINDOW].lstrip()
        body = after[1:].split("}", 1)[0] if after.startswith("{") else ""
        if name and "".join(body.split()).find(f"{name}|{name}&") >= 0:
            return True
        at = source.find("()", at + 2)
    return False


def _reread(text: str, reread: int) -> Iterator[Finding]:
    """Judge a literal string that will itself run as shell code (``sh -c '…'``, ``eval '…'``)."""
    if reread >= _MAX_REREAD:
        yield Finding(BLOCK, "shell code nested in strings too deeply to judge")
        return
    yield from findings(parse(text), text, reread=reread + 1)


def _nested(command: Command, reread: int) -> Iterator[Finding]:
    words = [*command.assignments, *command.words, *(r.target for r in command.redirects)]
    words += [r.body for r in command.redirects if r.body is not None]
    for word in words:
        for script in word.substitutions:
            yield from findings(script, reread=reread)


def _assignments(words: list[Word]) -> Iterator[Finding]:
    for word in words:
        name, _, value = word.text.partition("=")
        if name in _HISTORY_VARS and value in ("", "0", "/dev/null"):
            yield Finding(BLOCK, f"{word.text}: turns off shell history")


def _redirect_writes(command: Command) -> Iterator[Finding]:
    for redirect in command.redirects:
        if redirect.op in (">", ">>", ">|", "&>", "&>>", "<>") or (
            redirect.op == ">&" and not redirect.target.text.isdigit()
        ):
            yield from _writes(redirect.target.text)


def _writes(path: str) -> Iterator[Finding]:
    verdict = protected_write(path)
    if verdict is not None:
        yield Finding(*verdict)
    yield Finding(WRITES, f"writes {path}", path)


def _removes(paths: list[str]) -> Iterator[Finding]:
    for path in paths:
        yield Finding(REMOVES, f"removes {path}", path)


def _invocation(inv: Invocation) -> Iterator[Finding]:
    yield from _command_word(inv.head)
    checker = _CHECKERS.get(inv.name)
    if checker is not None:
        yield from checker(inv)
    elif inv.name in _SHELLS:
        yield from _shell(inv)
    elif inv.name in _INTERPRETERS:
        yield from _interpreter(inv, _INTERPRETERS[inv.name])
    elif inv.name.startswith("mkfs"):
        yield Finding(BLOCK, f"{inv.name}: formats a file system")


def _command_word(head: Word) -> Iterator[Finding]:
    """What runs must be readable from the text: no substitutions, escapes or payload in command position."""
    if head.substitutions or head.process:
        yield Finding(BLOCK, f"the command to run is built at run time ({head.text})")
    elif head.escapes:
        yield Finding(BLOCK, f"the command name {head.text!r} is hidden behind $'\\x..' escapes")
    elif head.dynamic and _PAYLOAD_VARS.search(head.text):
        yield Finding(BLOCK, f"{head.text} in command position would run the event payload as a command")
    elif head.dynamic and _BARE_PARAMETER.fullmatch(head.text):
        yield Finding(ESCALATE, f"the command is named by a variable ({head.text}) and cannot be judged as written")


# --- shells, interpreters and what feeds them ------------------------------------------------


def _scan_options(
    texts: list[str],
    *,
    inline_letters: str,
    value_letters: str,
    inline_long: frozenset[str] = frozenset(),
    value_long: frozenset[str] = frozenset(),
    fold: bool = False,
) -> tuple[str | None, int]:
    """(the inline-code flag if any, index of the first operand) for an interpreter's arguments.

    Short clusters are read letter by letter (``-ne`` is ``-n -e``) up to a letter that
    takes a value, so ``-Mfeature`` is not mistaken for ``-e``.
    """
    inline, i = None, 0
    while i < len(texts):
        text = texts[i]
        flag = text.lower() if fold else text
        if flag == "--":
            return inline, i + 1
        if flag == "-" or not flag.startswith(("-", "+")):
            return inline, i
        i += 1
        if flag in inline_long or flag.split("=", 1)[0] in inline_long:
            inline = inline or text
            continue
        if flag in value_long:
            i += 1
            continue
        if flag.startswith("--"):
            continue
        for position, letter in enumerate(flag[1:], start=1):
            if letter in inline_letters:
                inline = inline or text
            if letter in value_letters:
                i += position == len(flag) - 1  # its value is the next argument
                break
    return inline, i


def _shell(inv: Invocation) -> Iterator[Finding]:
    """``sh -c STRING`` re-reads STRING; ``sh`` with no script reads code from stdin."""
    texts = inv.texts
    inline, first = _scan_options(texts, inline_letters="c", value_letters="oO", value_long=_SHELL_VALUE_OPTIONS)
    operands = inv.args[first:]
    if inline is not None:
        if operands:
            yield from _code_string(inv, operands[0])
    elif not operands or operands[0].text in ("-", "/dev/stdin") or "-s" in texts[:first]:
        yield from _stdin_code(inv, interpreter=False)
    elif operands[0].process:
        yield from _fed_code(inv, _process_output(operands[0]), interpreter=False)


def _process_output(word: Word) -> list[Command]:
    return [c for script in word.substitutions for p in script.pipelines for c in p.commands]


def _code_string(inv: Invocation, code: Word) -> Iterator[Finding]:
    if inv.splice and inv.splice in code.text:
        yield Finding(BLOCK, f"{inv.name} -c splices its input ({inv.splice}) into shell code")
    elif code.dynamic:
        yield Finding(BLOCK, f"{inv.name} -c runs a string built at run time ({code.text}) as shell code")
    else:
        yield from _reread(code.text, inv.reread)


def _source(inv: Invocation) -> Iterator[Finding]:
    operands = inv.operands()
    if operands and operands[0].process:
        yield from _fed_code(inv, _process_output(operands[0]), interpreter=False)
    elif operands and operands[0].text in ("/dev/stdin", "-"):
        yield from _stdin_code(inv, interpreter=False)


def _interpreter(inv: Invocation, spec: _Interpreter) -> Iterator[Finding]:
    inline, first = _scan_options(
        inv.texts,
        inline_letters=spec.inline_letters,
        value_letters=spec.value_letters,
        inline_long=spec.inline_long,
        fold=spec.case_insensitive,
    )
    if inline is not None:
        yield Finding(BLOCK, f"{inv.name} {inline}: inline interpreter code; put the logic in a script file")
        return
    operands = inv.args[first:]
    if any(t.startswith("-m") for t in inv.texts[:first]):
        return  # python -m module
    if not operands or operands[0].text in ("-", "/dev/stdin"):
        yield from _stdin_code(inv, interpreter=True)
    elif operands[0].process:
        yield from _fed_code(inv, _process_output(operands[0]), interpreter=True)


def _stdin_code(inv: Invocation, *, interpreter: bool) -> Iterator[Finding]:
    """A shell or interpreter reading its program from stdin: judge what feeds that stdin."""
    for redirect in reversed(inv.command.redirects):
        if redirect.op in ("<<", "<<-", "<<<"):
            body = redirect.body if redirect.body is not None else redirect.target
            yield from _fed_text(inv, body, interpreter=interpreter)
            return
        if redirect.op == "<" and redirect.target.text not in ("/dev/stdin", "-"):
            return  # a script file: like `sh FILE`
    if not inv.upstream:
        yield Finding(
            BLOCK, f"{inv.name} reads its program from stdin, which carries the event payload: data would run as code"
        )
        return
    yield from _fed_code(inv, inv.upstream, interpreter=interpreter)


def _fed_text(inv: Invocation, text: Word, *, interpreter: bool) -> Iterator[Finding]:
    if interpreter:
        yield Finding(BLOCK, f"{inv.name} is fed inline code on stdin; put the logic in a script file")
    elif text.dynamic:
        yield Finding(BLOCK, f"{inv.name} runs text expanded at run time as shell code")
    else:
        yield from _reread(text.text, inv.reread)


def _fed_code(inv: Invocation, producers: list[Command], *, interpreter: bool) -> Iterator[Finding]:
    """Judge a pipe or process substitution that feeds program text to ``inv``."""
    invocations = [p for p in (unwrap(c, [], inv.reread) for c in producers) if p is not None]
    outputs = [_literal_output(p) for p in invocations]
    if any(_decodes(p) for p in invocations):
        yield Finding(BLOCK, f"decodes hidden text (base64, hex, escapes) and runs it with {inv.name}")
    elif any(p.name in _DOWNLOADERS for p in invocations):
        yield Finding(ESCALATE, f"downloads code and runs it with {inv.name} (curl … | sh)")
    elif invocations and all(p.name == "cat" and p.args and not any(w.dynamic for w in p.args) for p in invocations):
        return  # `cat script.sh | sh` is `sh script.sh`
    elif invocations and all(o is not None for o in outputs):
        text = "\n".join(o.text for o in outputs if o is not None)
        yield from _fed_text(
            inv, Word(text, dynamic=any(o.dynamic for o in outputs if o is not None)), interpreter=interpreter
        )
    else:
        kind = "inline code" if interpreter else "shell code"
        yield Finding(BLOCK, f"{inv.name} runs text produced at run time (possibly the event payload) as {kind}")


def _literal_output(inv: Invocation) -> Word | None:
    """What ``echo``/``printf`` or ``cat <<EOF`` print, when it can be read from the text."""
    if inv.name in ("echo", "printf"):
        return Word(" ".join(inv.texts), dynamic=any(w.dynamic for w in inv.args))
    if inv.name == "cat" and not inv.args:
        for redirect in inv.command.redirects:
            if redirect.op in ("<<", "<<-", "<<<"):
                return redirect.body if redirect.body is not None else redirect.target
    return None


def _decodes(inv: Invocation) -> bool:
    options = inv.options()
    if inv.name in ("base64", "base32", "basenc"):
        return any(o in ("--decode", "-D") or (not o.startswith("--") and "d" in o) for o in options)
    if inv.name == "xxd":
        return any(o.startswith("-r") for o in options)
    if inv.name == "openssl":
        return "-d" in inv.texts
    if inv.name in ("printf", "echo"):
        return any(w.escapes or _PRINTF_ESCAPE.search(w.text) for w in inv.args)
    if inv.name in ("gzip", "bzip2", "xz", "zstd"):
        return any(o == "--decompress" or (not o.startswith("--") and "d" in o) for o in options)
    return inv.name in ("uudecode", "gunzip", "zcat", "bzcat", "xzcat", "zstdcat", "rev", "tr")


def _eval(inv: Invocation) -> Iterator[Finding]:
    if any(w.dynamic for w in inv.args):
        yield Finding(BLOCK, "eval of a string built at run time")
        return
    yield Finding(ESCALATE, "eval runs a string as shell code")
    yield from _reread(" ".join(inv.texts), inv.reread)


# --- destructive and privileged commands -------------------------------------------------------


def _privilege(inv: Invocation) -> Iterator[Finding]:
    """Refused outright; what it would run as root is judged too, so every reason is reported."""
    yield Finding(BLOCK, f"{inv.name}: runs with raised privileges or changes accounts")
    if inv.name in _RUN_AS:
        args, i = inv.args, 0
        while i < len(args) and args[i].text.startswith("-"):
            i += 2 if args[i].text in _RUN_AS[inv.name] else 1
        inner = unwrap(Command(words=args[i:], redirects=inv.command.redirects), inv.upstream, inv.reread)
        if inner is not None:
            yield from _invocation(inner)


def _recursive(inv: Invocation) -> bool:
    return any(o in ("--recursive", "-R") or (not o.startswith("--") and ("r" in o or "R" in o)) for o in inv.options())


def _rm(inv: Invocation) -> Iterator[Finding]:
    if "--no-preserve-root" in inv.texts:
        yield Finding(BLOCK, "rm --no-preserve-root")
    yield from _removes([w.text for w in inv.operands()])
    for word in inv.operands():
        if _recursive(inv) and sweeping_target(word.text):
            yield Finding(
                BLOCK, f"rm -r {word.text}: deletes the system, a home directory or the whole working directory"
            )
        else:
            yield from _writes(word.text)


def _unlink(inv: Invocation) -> Iterator[Finding]:
    yield from _removes([w.text for w in inv.operands()])


def _permissions(inv: Invocation) -> Iterator[Finding]:
    for word in inv.operands()[1:]:  # a config made unreadable is a config that stops guarding
        yield Finding(WRITES, f"changes the mode or owner of {word.text}", word.text)
    if inv.name == "chmod" and any(
        re.fullmatch(r"[ugoa]*[+=][rwxXt]*s[rwxXt]*|[246][0-7]{3}", w.text) for w in inv.args
    ):
        yield Finding(BLOCK, "chmod sets the setuid/setgid bit")
    if _recursive(inv) and any(sweeping_target(w.text) for w in inv.operands()[1:]):
        yield Finding(BLOCK, f"{inv.name} -R on the system, a home directory or the whole working directory")


def _find(inv: Invocation) -> Iterator[Finding]:
    starts = []
    for word in inv.args:
        if word.text.startswith(("-", "(", "!")):
            break
        starts.append(word.text)
    deletes = "-delete" in inv.texts or bool(_find_exec_names(inv) & {"rm", "shred"})
    filtered = bool(_FIND_NAME_TESTS & set(inv.texts))
    if deletes and not filtered and any(sweeping_target(s) for s in starts):
        yield Finding(BLOCK, "find deletes across the system, a home directory or the whole working directory")
    texts = inv.texts
    for index, text in enumerate(texts):
        if text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(index + 1, len(texts)) if texts[j] in (";", "+")), len(texts))
            inner = Command(words=inv.args[index + 1 : end])
            sub = unwrap(inner, [], inv.reread)
            if sub is not None:
                sub.splice = "{}"
                yield from _invocation(sub)


def _find_exec_names(inv: Invocation) -> set[str]:
    return {
        command_name(inv.texts[i + 1])
        for i, t in enumerate(inv.texts[:-1])
        if t in ("-exec", "-execdir", "-ok", "-okdir")
    }


def _file_writers(inv: Invocation) -> Iterator[Finding]:
    """cp, mv, install, ln, tee, truncate, shred, sed -i, dd of=, curl -o, wget -O: the files they write."""
    texts, operands = inv.texts, [w.text for w in inv.operands()]
    targets: list[str] = []
    if (
        inv.name in ("tee", "truncate", "shred")
        or inv.name == "sed"
        and any(o.startswith(("-i", "--in-place")) for o in inv.options())
    ):
        targets = operands
    elif inv.name == "dd":
        targets = [t[3:] for t in texts if t.startswith("of=")]
    elif inv.name in ("curl", "wget"):
        flags = ("-o", "--output") if inv.name == "curl" else ("-O", "--output-document")
        targets = [texts[i + 1] for i, t in enumerate(texts[:-1]) if t in flags]
        targets += [t.split("=", 1)[1] for t in texts if t.startswith(f"{flags[1]}=")]
    elif inv.name in ("cp", "mv", "install", "ln") and operands:
        targets = _copy_targets(texts, operands)
        if inv.name == "mv":
            yield from _removes(operands[:-1] if targets[0] == operands[-1] else operands)
    for target in targets:
        yield from _writes(target)


def _copy_targets(texts: list[str], operands: list[str]) -> list[str]:
    """The destination of cp/mv/install/ln, and each source's name inside it (in case it is a directory)."""
    dest = next((texts[i + 1] for i, t in enumerate(texts[:-1]) if t in ("-t", "--target-directory")), None)
    sources = operands if dest else operands[:-1]
    dest = dest or operands[-1]
    # each source's name inside the destination, in case it is a directory: `cp x .claude/` writes .claude/x
    return [dest, *(f"{dest.rstrip('/')}/{s.rstrip('/').rsplit('/', 1)[-1]}" for s in sources)]


def _disk(inv: Invocation) -> Iterator[Finding]:
    yield Finding(BLOCK, f"{inv.name}: formats or repartitions a disk")


def _power(inv: Invocation) -> Iterator[Finding]:
    if inv.name in _POWER or (inv.name == "init" and inv.texts[:1] in (["0"], ["6"])):
        yield Finding(BLOCK, f"{inv.name}: stops or restarts the machine")
    elif inv.name == "systemctl" and {"poweroff", "reboot", "halt", "kexec"} & set(inv.texts):
        yield Finding(BLOCK, "systemctl: stops or restarts the machine")


def _kill(inv: Invocation) -> Iterator[Finding]:
    texts = (
        inv.texts[1:]
        if inv.texts[:1] and inv.texts[0].startswith("-") and inv.texts[0] not in ("--", "-s", "-n")
        else inv.texts
    )
    if texts[:1] in (["-s"], ["-n"]):
        texts = texts[2:]
    if "-1" in texts:
        yield Finding(BLOCK, "kill -1: signals every process")


def _history(inv: Invocation) -> Iterator[Finding]:
    if inv.name == "history" and any(o.startswith("-") and ("c" in o or "d" in o) for o in inv.options()):
        yield Finding(BLOCK, "history -c/-d: erases shell history")
    elif inv.name == "unset" and _HISTORY_VARS & set(inv.texts):
        yield Finding(BLOCK, "unset HISTFILE: turns off shell history")
    elif inv.name == "set" and inv.texts[:2] == ["+o", "history"]:
        yield Finding(BLOCK, "set +o history: turns off shell history")
    elif inv.name in ("export", "declare", "typeset", "readonly", "local"):
        yield from _assignments(inv.args)


def _crontab(inv: Invocation) -> Iterator[Finding]:
    texts = [t for i, t in enumerate(inv.texts) if t != "-u" and (i == 0 or inv.texts[i - 1] != "-u")]
    if texts != ["-l"]:
        yield Finding(ESCALATE, "crontab: changes scheduled jobs")


_Checker = Callable[[Invocation], Iterator[Finding]]
_CHECKERS: dict[str, _Checker] = {
    **dict.fromkeys(_PRIVILEGE, _privilege),
    **dict.fromkeys(_DISK, _disk),
    **dict.fromkeys((*_POWER, "init", "systemctl"), _power),
    **dict.fromkeys(
        ("cp", "mv", "install", "ln", "tee", "truncate", "shred", "sed", "dd", "curl", "wget"), _file_writers
    ),
    **dict.fromkeys(("chmod", "chown", "chgrp"), _permissions),
    **dict.fromkeys(("history", "unset", "set", "export", "declare", "typeset", "readonly", "local"), _history),
    **dict.fromkeys(("source", "."), _source),
    "rm": _rm,
    "rmdir": _unlink,
    "unlink": _unlink,
    "find": _find,
    "kill": _kill,
    "eval": _eval,
    "crontab": _crontab,
}
