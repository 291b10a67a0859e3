"""What a command runs besides itself: the shell lines a runner, a fed shell, git and some variables run.

Self-protection judges what runs, not only the program typed first, so each text found here is read by
:mod:`guard.protection.naming` as a line a shell of its own runs, and judged as any command is (a sweep, a move, a name
it makes):

* a runner's command (``sudo tar -x -C ..``, ``strace -o x mv ../../proj /p``, ``watch``, ``parallel``, ``su -c '…'``,
  ``npx -c '…'``, ``pnpm exec …``): the words from each of its first few operands on, as words and as a line, with
  what the runner is fed as its command's input (``sudo sh <<< '…'``, ``echo '…' | sudo sh``);
* a shell's ``-c`` text and what it is fed: a pipe's text (``echo '…' | bash``, ``printf '%s -rf ..' rm | sh``, as
  ``echo`` and ``printf`` print it, escapes decoded), a here-string or here-document, a script the line wrote;
* the shell lines in git's options and aliases (``git -c alias.x='!…' x``, ``git rebase --exec``, ``git bisect run``,
  ``git submodule foreach``) and in ``*COMMAND``/``*PAGER``/``*EDITOR`` variables (``GIT_SSH_COMMAND=…``).

Loaded only for a line that names such a program or variable, or where ``echo``/``printf`` feed a command or a file.
Standard library only: it runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable

from guard.command_analysis.invocation import Invocation
from guard.command_analysis.shell_syntax import Command, Word
from guard.protection.naming import COMMAND_VARIABLE, FED_SHELLS, PACKAGE_RUNNERS

__all__ = ["configured_lines", "printed", "runner_lines"]

#: The words that make npm, pnpm, yarn and bun run a command they are given (``npm exec …``, ``npm explore PKG -- …``,
#: ``pnpm exec …``, ``yarn dlx …``, ``bun x …``, ``npx -c '…'``), anywhere before a ``--`` (options with values may
#: come first: ``pnpm -r --filter app exec …``); npx, pnpx and bunx always do.
_PACKAGE_EXEC = frozenset({"exec", "dlx", "x", "explore", "-c", "--call"})
#: git options whose value is a command it runs: rebase's exec, a remote's upload-pack and receive-pack.
_GIT_COMMAND_OPTIONS = ("--exec", "--upload-pack", "--receive-pack")
#: echo's options: the words before what it prints (``echo -ne 'rm -rf ..'`` prints ``rm -rf ..``).
_ECHO_OPTIONS = re.compile(r"-[neE]+")
#: printf's conversions (``%s``, ``%-5d``, ``%b``), each of which prints an argument.
_CONVERSION = re.compile(r"%[-+ #0-9.*]*[a-zA-Z]")
#: The escapes printf's format, its %b and ``echo -e`` decode: a character, \xHH, \uHHHH, \UHHHHHHHH, octal \[0]NNN.
_ESCAPES = re.compile(r"\\(?:x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|0?[0-7]{1,3}|.)", re.DOTALL)
_CHARACTERS = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "a": "\a", "b": "\b", "f": "\f", "e": "\x1b", "E": "\x1b"}


def runner_lines(
    program: str,
    args: list[str],
    invocation: Invocation,
    received: list[str],
    stdin: str | None,
    written: Iterable[str],
) -> set[str]:
    """The shell lines ``program`` runs, when it is a shell, ``at`` or a runner (naming's tables say which): its
    operands' words (:func:`_operand_lines`); for a shell, also the text it is fed (``received`` from a pipe, its
    ``stdin`` redirection, a script of the line ``written`` that it names); for a runner, that input as its command's."""
    if program in FED_SHELLS:  # -c, what it is fed, a script
        return _operand_lines(invocation) | {*received, " ".join(received), stdin or "", *written}
    own = args[: args.index("--")] if "--" in args else args
    if program in PACKAGE_RUNNERS and not (program.endswith("x") or _PACKAGE_EXEC.intersection(own)):
        return set()  # yarn add, pnpm install, npm view: no command of the line's runs
    return _operand_lines(invocation, tuple(text for text in (*received, stdin) if text)[:4])


def _operand_lines(invocation: Invocation, given: tuple[str, ...] = ()) -> set[str]:
    """The words from each word where a runner's command may start on, as words and as a line (``watch``, ``su -c``
    and a shell's ``-c`` run text), each also fed what the runner is ``given`` on its input (``sudo sh <<< '…'``).
    Which of its options take a value is not known, so its command may start at any of its first four operands and at
    any operand up to three words after an option (``sudo -u a -g b -h c -p d rm -rf ..``, ``bwrap --bind / / rm``)."""
    words = invocation.args
    operands = [k for k, word in enumerate(words) if not word.text.startswith("-")]
    after = {k for k in operands if any(words[j].text.startswith("-") for j in range(max(0, k - 3), k))}
    starts = sorted({*operands[:4], *after})
    texts = {" ".join(w.raw for w in words[k:]) for k in starts} | {" ".join(w.text for w in words[k:]) for k in starts}
    return texts | {f"{text} <<< {shlex.quote(data)}" for text in texts for data in given}


def configured_lines(program: str | None, args: list[str], assignments: list[Word]) -> set[str]:
    """The shell lines a command's configuration gives it to run: git's (:func:`_git_commands`) and the values of its
    ``*COMMAND``/``*PAGER``/``*EDITOR`` variables (:data:`guard.protection.naming.COMMAND_VARIABLE`)."""
    lines = _git_commands(args) if program == "git" else []
    lines += [COMMAND_VARIABLE.sub("", word.text) for word in assignments]
    return {line for line in lines if "=" not in line[:1]}


def _git_commands(args: list[str]) -> list[str]:
    """The shell lines ``git ARGS`` may run that its words give, read loosely: each ``-c KEY=VALUE``'s value (an alias's
    ``!…``, a pager, an editor, an ssh command, a diff driver), rebase's ``--exec``/``-x``, ``--upload-pack``,
    ``--receive-pack``, ``bisect run``'s words and ``submodule foreach``'s line."""
    lines: list[str] = []
    for k, arg in enumerate(args):
        following = args[k + 1] if k + 1 < len(args) else ""
        if arg in ("-c", "-x", "-u") or arg in _GIT_COMMAND_OPTIONS:
            lines.append(following.partition("=")[2] if arg == "-c" else following)
        elif arg.startswith("-c") or arg.startswith(tuple(option + "=" for option in _GIT_COMMAND_OPTIONS)):
            lines.append(arg.partition("=")[2])
        elif arg in ("run", "foreach") and k and args[k - 1] in ("bisect", "submodule"):
            rest = [word for word in args[k + 1 :] if word not in ("--recursive", "-q", "--quiet")]
            lines += [" ".join(rest), *rest[:1]]
    return [line.removeprefix("!") for line in lines]


def printed(command: Command) -> list[str]:
    """What ``echo`` or ``printf`` prints, which it passes on to a pipe or a file as data: ``printf``'s output read
    loosely (each ``%`` conversion takes the next argument, the rest follow), echo's words after its options, each
    also with the escapes ``echo -e``, sh's echo and printf decode decoded."""
    if os.path.basename(command.words[0].text) == "printf":
        texts = [w.text for w in command.words[1:] if w.text != "--"]
        arguments = iter([_decoded(text) for text in texts[1:]])  # %b decodes its argument's escapes
        out = _CONVERSION.sub(lambda _: next(arguments, ""), _decoded(texts[0])) if texts else ""
        return [" ".join([out, *arguments])]
    words = [w.text for w in command.words[1:]]
    said = " ".join(words[next((k for k, w in enumerate(words) if not _ECHO_OPTIONS.fullmatch(w)), len(words)) :])
    return [said, *({_decoded(said)} - {said})]


def _decoded(text: str) -> str:
    """``text`` with the escapes printf and ``echo -e`` decode decoded (``rm\\x20-rf\\040..`` is ``rm -rf ..``)."""
    return _ESCAPES.sub(_escaped, text) if "\\" in text else text


def _escaped(found: re.Match[str]) -> str:
    body = found.group(0)[1:]
    if body[0] in "xuU" and len(body) > 1:
        return chr(min(int(body[1:], 16), 0x10FFFF))
    if body[0] in "01234567":
        return chr(int(body, 8))
    return _CHARACTERS.get(body, body)
