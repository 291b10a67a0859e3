"""The class of an escape, named as issue 35 names them, read from its minimal form and what it did."""

from __future__ import annotations

import re

__all__ = ["BUILTINS", "CLASSES", "EXPANSION", "INPUTS", "LINKS", "REDIRECTIONS", "SHELLS", "SPELLING", "classify"]

EXPANSION, SPELLING, INPUTS, BUILTINS, REDIRECTIONS = (
    "expansion",
    "option spellings",
    "inputs from elsewhere",
    "builtins",
    "redirections",
)
#: Found after issue 35: a line sh reads otherwise than bash; a walk through a symbolic link to guard's secret.
SHELLS, LINKS = "another shell's reading", "links followed"
CLASSES = (EXPANSION, SPELLING, INPUTS, BUILTINS, REDIRECTIONS, SHELLS, LINKS)
_STATE = re.compile(
    r"(?:^|[;&|\n(]\s*)(?:printf\s+-v|read|cd|export|declare|typeset|local|readonly|hash|alias|set|shopt|source|\.|mapfile|readarray|pushd|popd"
    r"|unset|enable|trap|umask|eval|exec|command|builtin|getopts|let|function|test\s+-v|\[\s+-v)\b|\$\(\(|\(\(|\$\{\w+:?=|\w+\s*\(\)\s*\{"
)
_EXPANDS = re.compile(r"\{[^{}\s]*,[^{}\s]*\}|[*?\[]|\$\{?[\w!@#?*-]|(?:^|\s)~")
_REDIRECTS = re.compile(r"/dev/(?:tcp|udp)/|<>|>&\s*[^\d\s-]|&>")
_READS_ELSEWHERE = re.compile(
    r"files0?-from|--file\b|--from-file|--rawfile|--slurpfile|magic|exclude-from|(?:^|\s)-\w*f\b|@\w|/proc/\w+/environ|\benv\b|\$ENV"
)


_FOLLOWS = re.compile(r"(?:^|\s)-\w*[RL]|--(?:follow|deref)|(?:^|\s)-?follow\b|\bdiff\b.*\s-\w*r")


def _unquoted(line: str) -> str:
    """The line without its single-quoted text (which the shell takes as is)."""
    return re.sub(r"'[^']*'", "''", line)


def classify(line: str, effects: list[str]) -> str:
    """sh's reading first (the line is another line there), builtins (a state change explains what follows it), then
    expansion, redirections, links followed to the secret, inputs from elsewhere; an escape with none of these got
    through by how an option was spelled."""
    if "$'" in line:
        return SHELLS
    text = _unquoted(line)
    if _STATE.search(text):
        return BUILTINS
    if _EXPANDS.search(text):
        return EXPANSION
    if _REDIRECTS.search(text):
        return REDIRECTIONS
    if "reads the secret" in effects and _FOLLOWS.search(text):
        return LINKS
    if _READS_ELSEWHERE.search(line) or {"reads the secret", "prints the environment"} & set(effects):
        return INPUTS
    return SPELLING
