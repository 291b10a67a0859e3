"""Whether a tool call runs guard itself or talks to guard's service.

The agent must not switch guard off through guard's own doors: ``guard install
--uninstall``, ``guard trust``, ``python3 -m guard.cli.main …``, a ``guard hook``
run with a forged event, or a request to the service. The installed ``guard``
script lies in guard's environment, which is protected by path; this module
catches the spellings a path does not: the bare name, the module, a runner
(``uv run guard``), inline code importing it, and a loopback URL on the
service's port. Standard library only: it runs on the ``guard hook`` fast path.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from guard.command_analysis.invocation import command_name
from guard.core.settings import SERVER_ENV, from_env
from guard.protection.naming import UNKNOWN, Unit

__all__ = [
    "CODE_RUNNERS",
    "COMMAND_RUNNERS",
    "DEFAULT_PORT",
    "RUNS_A_COMMAND",
    "code_words",
    "runs_guard",
    "service_ports",
]

#: ``guard serve``'s default port.
DEFAULT_PORT = 8787
#: Programs that start the program or Python module named among their arguments, after options of their own
#: (``uv run --with x guard …``, ``coverage run -m guard.cli.main``).
_RUNNERS = frozenset(
    {
        "uv",
        "uvx",
        "pipx",
        "poetry",
        "pdm",
        "hatch",
        "rye",
        "conda",
        "pixi",
        "pipenv",
        "pyenv",
        "asdf",
        "mise",
        "direnv",
        "coverage",
        "xvfb-run",
        "valgrind",
        "gdb",
        "catchsegv",
    }
)
_PYTHONS = frozenset({"python", "pypy", "ipython"})
#: CPython's short options that take a value: a cluster of flags ends at one (``-Im guard``, ``-Pmguard``).
_PYTHON_VALUED = frozenset("cmWX")
#: Programs that run code given as text (``sh -c 'guard …'``, ``python -c "subprocess.run(['guard', …])"``).
CODE_RUNNERS = frozenset(
    {
        "sh",
        "bash",
        "dash",
        "zsh",
        "ksh",
        "fish",
        "python",
        "pypy",
        "node",
        "perl",
        "ruby",
        "php",
        "lua",
        "eval",
        "xargs",
        "awk",
        "gawk",
        "mawk",
        "nawk",
        "busybox",
        "vim",
        "vi",
        "nvim",
        "ex",
        "view",
        "less",
    }
)
#: Programs that run a command they are given, as words or as a line: on a terminal of their own (``script -c``, ``expect``,
#: ``tmux``, ``screen``, ``socat … EXEC:…,pty``: what ``guard approve``'s question on /dev/tty would accept a typed yes from),
#: as another user or on another host (``sudo``, ``su -c``, ``ssh``), later or elsewhere (``at``, ``systemd-run``, ``watch``).
COMMAND_RUNNERS = frozenset(
    {
        "script",
        "expect",
        "unbuffer",
        "tmux",
        "screen",
        "byobu",
        "dtach",
        "abduco",
        "socat",
        "sudo",
        "su",
        "doas",
        "runuser",
        "run0",
        "pkexec",
        "sg",
        "ssh",
        "sshpass",
        "watch",
        "at",
        "batch",
        "systemd-run",
        "dbus-run-session",
        "xterm",
        "parallel",
        "entr",
        "strace",
        "ltrace",
        "faketime",
        "flock",
        "fakeroot",
        "firejail",
        "bwrap",
        "unshare",
        "nsenter",
        "chroot",
        "setpriv",
        "cgexec",
        "chronic",
        "eatmydata",
        "proot",
        "rlwrap",
        "toybox",
        "nix-shell",
        "npm",
    }
)
#: Every program that runs a command it is given (as words, or as a line): self-protection reads what it runs as
#: commands of their own (:mod:`guard.protection.naming`), so ``sudo tar -x -C ..`` is judged as the ``tar`` it runs.
RUNS_A_COMMAND = _RUNNERS | COMMAND_RUNNERS
#: Where a text may name a host and a port: ``HOST:PORT`` (a URL, socat's ``TCP:HOST:PORT``, at every place, as parts
#: overlap), ``[IPV6]:PORT``, bash's ``/dev/tcp/HOST/PORT``, and curl's ``--resolve NAME:PORT:ADDRESS``.
_HOST_PORT = (
    re.compile(r"(?=\[([0-9A-Za-z:.%]+)\]:0*(\d{1,5})\b)"),
    re.compile(r"(?<![\w.%-])(?=([\w.%-]+):0*(\d{1,5})\b)"),
    re.compile(r"/dev/(?:tcp|udp)/([^/\s]+)/0*(\d{1,5})\b"),
)
_PORT_THEN_HOST = re.compile(r":0*(\d{1,5}):\[?([0-9A-Za-z:.%]+?)\]?(?=$|[\s,'\"/])")
#: Names the resolver gives a loopback address without asking anyone (curl: ``localhost`` and any ``*.localhost``).
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
_CODE_SEPARATORS = str.maketrans({c: " " for c in "'\"(),;:[]{}|&`$!\t\n"})
#: The folder of the guard package that is running: a dotted name is guard's module when its first part is there.
_PACKAGE = Path(__file__).resolve().parent.parent


def _guard_module(word: str) -> bool:
    """Whether ``word`` is the name of guard's package or one of its modules (``guard.cli.main``, not ``guard.yaml``)."""
    if word == "guard":
        return True
    if not word.startswith("guard."):
        return False
    first = word.split(".", 2)[1]
    return first.isidentifier() and ((_PACKAGE / first).is_dir() or (_PACKAGE / f"{first}.py").is_file())


def _imports_guard(texts: Iterable[str], *, python: bool = False) -> bool:
    """Whether code text imports guard: a module name after an importing word; in Python's code, guard's module
    named anywhere (``import os,guard.cli.main``, ``import_module("guard.cli.main")``, ``runpy.run_module(…)``)."""
    for text in texts:
        if "guard" not in text:
            continue
        words = code_words(text)
        if python and any(word.startswith("guard.") and _guard_module(word) for word in words):
            return True
        for before, word in zip(words, words[1:], strict=False):
            if before in ("import", "from", "__import__", "import_module", "-m") and _guard_module(word):
                return True
    return False


def code_words(text: str) -> list[str]:
    """The words of code text (``subprocess.run(['guard', 'x'])``: ``subprocess.run``, ``guard``, ``x``), where a
    program it runs is named."""
    return text.translate(_CODE_SEPARATORS).split()


def _names_guard(texts: Iterable[str]) -> bool:
    """Whether code text holds the word ``guard`` as a command (``guard``, ``…/bin/guard``)."""
    for text in texts:
        if "guard" in text and any(word == "guard" or word.endswith("/guard") for word in code_words(text)):
            return True
    return False


def _module_option(args: list[str]) -> bool:
    """Whether Python's ``-m`` names guard: alone (``-m guard.cli.main``, ``-mguard``) or ending a cluster of flags
    (``-Im guard``), anywhere in the arguments (``-m pdb -m guard``)."""
    for at, arg in enumerate(args):
        if not arg.startswith("-") or arg.startswith("--"):
            continue
        letters = arg[1:]
        valued = next((i for i, letter in enumerate(letters) if letter in _PYTHON_VALUED), None)
        if valued is None or letters[valued] != "m":
            continue
        module = letters[valued + 1 :] or (args[at + 1] if at + 1 < len(args) else "")
        if _guard_module(module):
            return True
    return False


def service_ports(urls: Iterable[str], env: Mapping[str, str]) -> set[int]:
    """Ports guard's service may listen on: the default, configured URLs, ``$GUARD_SERVER`` and the running services'."""
    ports = {DEFAULT_PORT}
    found = [*urls, from_env(SERVER_ENV, env) or ""]
    folder = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "guard" / "serve"
    try:
        for state in sorted(folder.glob("*.json"))[:32]:
            url = json.loads(state.read_text()).get("url")
            found.append(url if isinstance(url, str) else "")
    except (OSError, ValueError, AttributeError):
        pass
    for url in found:
        port = url.rstrip("/").rsplit(":", 1)[-1].split("/", 1)[0] if url.count(":") >= 2 else ""
        if port.isdigit():
            ports.add(int(port))
    return ports


def runs_guard(unit: Unit, urls: Iterable[str], env: Mapping[str, str]) -> str | None:
    """Why ``unit`` runs guard or calls its service, or None."""
    program, args = unit.program or "", unit.args
    if command_name(program) == "guard" or os.path.basename(program) == "guard":
        return "runs guard's own command"
    if UNKNOWN in program and fnmatch.fnmatchcase("guard", os.path.basename(program).replace(UNKNOWN, "*")):
        return "runs a program whose name is built from a value guard does not know, which may be guard's command"
    if program in _PYTHONS and _module_option(args):
        return "runs guard's module"
    if program in _RUNNERS and any(os.path.basename(a) == "guard" or _guard_module(a) for a in args):
        return f"runs guard through {program}"
    if _imports_guard(unit.texts, python=program in _PYTHONS):
        return "runs code that imports guard"
    if program in CODE_RUNNERS and _names_guard(unit.texts[1:]):
        return f"runs code ({program}) that runs guard's command"
    if program in COMMAND_RUNNERS and _names_guard(unit.texts[1:]):
        return f"runs guard's command through {program}"
    found = [
        (host, int(port))
        for text in unit.texts
        if ":" in text or "/dev/" in text
        for pattern in _HOST_PORT
        for host, port in pattern.findall(text)
    ]
    found += [(host, int(port)) for text in unit.texts for port, host in _PORT_THEN_HOST.findall(text)]
    if found:
        ports = service_ports(urls, env)
        for host, port in found:
            if port in ports and _this_machine(host):
                return f"sends a request to guard's service ({host}:{port})"
    return None


def _this_machine(host: str) -> bool:
    """Whether ``host`` names this machine as curl and Python resolve it with no question asked: a loopback or unspecified
    address in any spelling ``inet_aton`` reads (``2130706433``, ``0x7f000001``, ``127.000.000.001``, ``127.1``, ``0``),
    IPv6 (``::1``, ``::``, ``::ffff:127.0.0.1``), ``localhost`` and ``*.localhost`` with or without the final dot, the
    machine's own name, a name ``/etc/hosts`` gives a loopback address."""
    import ipaddress
    import socket

    name = host.lower().rstrip(".")
    if name in _LOCAL_NAMES or name.endswith(".localhost") or name == socket.gethostname().lower():
        return True
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(name.partition("%")[0])
    except ValueError:
        try:
            address = ipaddress.IPv4Address(socket.inet_aton(name))
        except (OSError, ValueError):
            return name in _hosts_file_names()
    if isinstance(address, ipaddress.IPv6Address) and not (address.is_loopback or address.is_unspecified):
        if address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        elif address.packed[:12] == bytes(12):  # IPv4-compatible ::127.0.0.1
            address = ipaddress.IPv4Address(address.packed[12:])
    return address.is_loopback or address.is_unspecified


def _hosts_file_names() -> frozenset[str]:
    """The names ``/etc/hosts`` gives a loopback or unspecified address (the resolver reads it before any DNS)."""
    from guard.core.regular_file import read_text

    names: set[str] = set()
    for line in (read_text("/etc/hosts", 64 * 1024) or "").splitlines():
        fields = line.partition("#")[0].split()
        if len(fields) > 1 and (fields[0].startswith("127.") or fields[0] in ("::1", "0.0.0.0", "::")):
            names.update(field.lower().rstrip(".") for field in fields[1:])
    return frozenset(names)
