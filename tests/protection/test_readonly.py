"""The read-only prover: proof from an allowlist that a call only reads, holding against every GTFOBins escape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guard.protection.readonly import Proof, prove

GTFOBINS = Path("/work/shared/external/gtfobins/examples.jsonl")


#: The hook's environment for a user whose shell is bash (unset, Claude Code would run zsh where it is installed).
BASH_USER = {"SHELL": "/bin/bash"}


def bash(command: str) -> Proof:
    return prove("Bash", {"command": command}, "/tmp", BASH_USER)


@pytest.mark.skipif(not GTFOBINS.exists(), reason="the GTFOBins extract is not on this machine")
def test_no_gtfobins_escape_is_proven_read_only() -> None:
    """Shells, pagers, -exec, awk system(), sed e/w, git -c, tar --checkpoint-action, uploads, writes: none is proven.

    Only "file-read" examples may be proven, and only those that print a file with
    allowlisted options (``cat FILE``, ``tail -c+0 FILE``): they do only read.
    """
    rows = [json.loads(line) for line in GTFOBINS.read_text().splitlines()]
    proven = [row for row in rows if bash(row["code"]).proven]
    escapes = [row for row in proven if row["function"] != "file-read"]
    assert escapes == []
    assert len(rows) > 800 and len(proven) < len([r for r in rows if r["function"] == "file-read"])
    for row in proven:  # each proven one is a reading program on the example's input file, nothing run or written
        assert "/path/to/output-file" not in row["code"] and "/bin/sh" not in row["code"]


@pytest.mark.parametrize(
    "command",
    [
        "git -c core.pager='sh -c id' log",
        "PAGER=/bin/sh git log",
        "git --exec-path=. x",
        "git diff --output=out.txt",
        "git diff --ext-diff",
        "git branch evil",
        "git help config",
        "find . -exec /bin/sh \\; -quit",
        "find / -fprintf out DATA -quit",
        "find . -delete",
        "awk 'BEGIN {system(\"/bin/sh\")}'",
        "sed -n '1e exec /bin/sh' /etc/hosts",
        "sed -n '1s/.*/DATA/w out' /etc/hosts",
        "sed -i 's/a/b/' f",
        "tar -cf /dev/null /dev/null --checkpoint=1 --checkpoint-action=exec=/bin/sh",
        "less /etc/hosts",
        "man ls",
        "vim -c ':!/bin/sh'",
        "rg --pre /bin/sh x",
        "sort -o out f",
        "sort --compress-program=sh f",
        "uniq in out",
        "xxd -r - out",
        "tree -o out",
        "date -s 2020-01-01",
        "env /bin/sh",
        "hostname evil",
        "cat f > out",
        "cat f >> out",
        "cat $(echo f)",
        "cat `echo f`",
        "cat <(echo f)",
        "./cat f",
        "/tmp/cat f",
        "$CAT f",
        "cat $'\\x2fetc/passwd'",
        "echo 'unterminated",
        "ls; rm -rf build",
        "cat f | sh",
        "python3 script.py",
        "cd src && ls",  # cd changes the shell's state: what runs after it is not what was checked (#35)
        # what the shell makes of a word, not the word as typed (#35): braces, globs that may name options, expansions
        "sort p {-o,/tmp/x}",
        "sort {--output=/tmp/x,p}",
        "find . {-delete,-print}",
        "grep x *.py",  # a file named -rf.py or --include=x would be an option
        "cat $HOME/x",
        'cat <<< "$AWS_SECRET_ACCESS_KEY"',
        # each option as the program's parser reads it
        "sed -ne'w /tmp/x' p",
        "sed --expression='w /tmp/x' p",
        "sed -ne'1e id' p",
        "sed -n 's/a/b/w /tmp/x' f",
        "sort --comp=sh f",
        "sort -uo /tmp/x f",
        "tree -Po x out .",
        # names, patterns or code from elsewhere
        "wc --files0-from=names",
        "file -f names",
        "grep -f patterns f",
        "file -m magic f",
        "jq -n env",
        "md5sum -c sums",
        # builtins that change the shell's state, and what bash itself opens
        "printf -v PATH %s bin",
        "read PATH <<< bin",
        "echo {PATH}>/dev/null",
        "export PATH=bin",
        "> /dev/udp/127.0.0.1/9",
        "cat < /dev/tcp/127.0.0.1/9",
        "test -v 'a[$(touch pwned)]'",
        "[ -v x ]",
        "f() ( cat x ); f",
        "rg --pre sh x",  # runs a program on each file
        "rg -z x",  # runs decompressors
        "rg -f patterns",
        "rg -A=3 x",  # clap reads this otherwise than getopt: not proven
        "((x=1))",
    ],
)
def test_what_runs_writes_or_escapes_is_not_proven(command: str) -> None:
    proof = bash(command)
    assert not proof.proven and proof.reason


@pytest.mark.parametrize(
    "command",
    [
        "cat src/app.py | grep -n def | sort | uniq -c | head -5",
        "git log --oneline -n 5 && git status --porcelain && git diff --stat HEAD~1",
        "sed -n '1,20p' guard.yaml",
        "ls -la .claude 2>/dev/null",
        "find . -name '*.py' -type f -not -path './.venv/*'",
        "grep -rn 'def main' src/ 2>&1 | head",
        "wc -l < guard.yaml",
        "echo done",
        "grep -rn 'def main' --include=*.py src",  # a glob after --include= makes only more --include= options
        "ls ./*.py src/*",  # a glob starting with a plain character only makes names
        "head -5 f && tail -20 f && tail -n +3 f",
        "sed -n -e 1p -e '/x/,/y/p' f",
        "[ -f x ] && test -d src",
        "cat {a,b}.py",
        "rg -n 'def main' src && rg -e -foo -g '*.py' --max-count=3 src",
    ],
)
def test_reading_pipelines_are_proven(command: str) -> None:
    assert bash(command).proven


@pytest.mark.parametrize(
    ("tool", "tool_input", "proven"),
    [
        ("Read", {"file_path": "x"}, True),  # Claude Code
        ("Grep", {"pattern": "x"}, True),
        ("read_file", {"absolute_path": "/x"}, True),  # Gemini
        ("list_directory", {"path": "/x"}, True),
        ("view", {"path": "x"}, True),  # Copilot
        ("Bash", {"command": ["bash", "-lc", "cat x | head"]}, True),  # Codex's argv
        ("run_shell_command", {"command": "git status", "directory": "src"}, True),
        ("Write", {"file_path": "x", "content": ""}, False),
        ("Edit", {"file_path": "x", "old_string": "a", "new_string": "b"}, False),
        ("mcp__fs__read_then_write", {"path": "x"}, False),
        ("Bash", {"command": ["apply_patch", "*** Begin Patch\n*** End Patch\n"]}, False),
    ],
)
def test_each_client_s_read_tools_are_proven_by_name(tool: str, tool_input: dict[str, Any], proven: bool) -> None:
    assert prove(tool, tool_input, "/tmp", BASH_USER).proven is proven


def test_rg_with_a_config_file_is_not_proven() -> None:
    """RIPGREP_CONFIG_PATH makes rg read more arguments from a file (a --pre there runs a program)."""
    assert prove("Bash", {"command": "rg -n x src"}, "/tmp", BASH_USER).proven
    assert not prove(
        "Bash", {"command": "rg -n x src"}, "/tmp", {**BASH_USER, "RIPGREP_CONFIG_PATH": "/tmp/rgrc"}
    ).proven
