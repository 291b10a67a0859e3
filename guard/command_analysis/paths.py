"""Which paths a hook command must not wipe or write, as tables.

Paths are compared after :func:`normal_path` folds every spelling of a home
directory (``~``, ``$HOME``, ``${HOME}``, ``/root``, ``/home/x``, ``/Users/x``)
into ``~``, so ``"$HOME"/.bashrc`` and ``~/.bashrc`` are one file.
"""

from __future__ import annotations

import posixpath
import re

__all__ = ["BLOCK", "ESCALATE", "REMOVES", "WRITES", "normal_path", "protected_write", "sweeping_target"]

BLOCK = "block"
ESCALATE = "escalate"
#: Not refusals: records of a path the command writes (or changes the mode of) / removes or moves away.
WRITES = "writes"
REMOVES = "removes"

_HOME = re.compile(r"^(\$HOME|\$\{HOME\}|~|/root|/home/[^/]+|/Users/[^/]+)(?=/|$)")

#: Top-level directories whose recursive removal or chmod wrecks the machine.
SYSTEM_DIRS = frozenset(
    {
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/media",
        "/mnt",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/snap",
        "/srv",
        "/sys",
        "/tmp",
        "/usr",
        "/var",
        "/Users",
        "/System",
        "/Library",
        "/Applications",
        "/Volumes",
        "/private",
    }
)

#: Shell start-up files: whatever is written there runs in every later shell.
STARTUP_FILES = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
        ".cshrc",
        ".tcshrc",
        ".kshrc",
        ".mkshrc",
        ".login",
    }
)
SYSTEM_STARTUP = frozenset(
    {
        "/etc/profile",
        "/etc/bash.bashrc",
        "/etc/bashrc",
        "/etc/zshrc",
        "/etc/zprofile",
        "/etc/zshenv",
        "/etc/environment",
    }
)
SYSTEM_STARTUP_DIRS = ("/etc/profile.d/", "/etc/zsh/")

SSH_FILES = frozenset({"authorized_keys", "authorized_keys2"})
SSH_LOGIN_FILES = frozenset({"~/.ssh/rc", "~/.ssh/environment"})
HISTORY_FILES = frozenset({".bash_history", ".zsh_history", ".sh_history", ".history", ".python_history"})
ACCOUNT_FILES = frozenset(
    {"/etc/sudoers", "/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow", "/etc/ld.so.preload"}
)
ACCOUNT_DIRS = ("/etc/sudoers.d/", "/etc/pam.d/")
CRON_FILES = frozenset({"/etc/crontab"})
CRON_DIRS = ("/etc/cron.", "/var/spool/cron/", "/var/spool/cron")
#: Devices a hook may write to without touching a disk.
HARMLESS_DEVICES = frozenset(
    {
        "/dev/null",
        "/dev/zero",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/stdin",
        "/dev/tty",
        "/dev/full",
        "/dev/random",
        "/dev/urandom",
    }
)


def normal_path(text: str) -> str:
    """Fold home spellings into ``~`` and collapse ``//`` and ``/./``; keeps a leading ``./``-less form."""
    path = _HOME.sub("~", text.strip())
    if not path:
        return path
    collapsed = posixpath.normpath(path)
    return collapsed if not path.endswith("/") or collapsed == "/" else collapsed + "/"


def sweeping_target(text: str) -> bool:
    """True for ``/``, ``~``, ``.``, ``*``, a system directory, or those plus ``/*``: what ``rm -r`` must never get."""
    path = normal_path(text)
    end = len(path)
    while end:  # drop trailing /*, /.*, /. and / by index: no rescans of a long path
        suffix = next((x for x in ("/*", "/.*", "/.", "/") if path.endswith(x, 0, end)), "")
        if not suffix:
            break
        end -= len(suffix)
    path = path[:end]
    if path in ("", "~", ".", "..", "*", ".*", "~/*") or path in SYSTEM_DIRS:
        return True
    return bool(re.fullmatch(r"~[A-Za-z_][\w.-]*|(\.\./)+\.\.|/\*", path))


def protected_write(text: str) -> tuple[str, str] | None:
    """(level, reason) when writing ``text`` is refused, else None."""
    path = normal_path(text).rstrip("/")
    folder, base = posixpath.split(path)
    # A start-up or history file counts in a home directory, the working directory
    # (often home) or a folder named by a variable ($ZDOTDIR); a copy in backup/ does not.
    homely = folder in ("", ".", "~") or folder.startswith("$")
    system = path in SYSTEM_STARTUP or path.startswith(SYSTEM_STARTUP_DIRS) or path.endswith("/fish/config.fish")
    if system or (homely and base in STARTUP_FILES):
        return BLOCK, f"changes the shell start-up file {text} (runs in every later shell)"
    if base in SSH_FILES or path in SSH_LOGIN_FILES:
        return BLOCK, f"changes {text} (grants or changes SSH log-in)"
    if homely and base in HISTORY_FILES:
        return BLOCK, f"erases or rewrites the shell history file {text}"
    if path in ACCOUNT_FILES or path.startswith(ACCOUNT_DIRS):
        return BLOCK, f"changes {text} (accounts and privileges)"
    if path.startswith("/dev/") and path not in HARMLESS_DEVICES and not path.startswith(("/dev/fd/", "/dev/pts/")):
        return BLOCK, f"writes to the device {text}"
    if path in CRON_FILES or path.startswith(CRON_DIRS):
        return ESCALATE, f"changes scheduled jobs ({text})"
    return None
