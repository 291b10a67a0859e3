"""Every ``guard …`` command the README and docs/ name in running text is one guard's own parser accepts.

The docs once said ``guard services stop``, which guard does not have (``--stop PID`` /
``--stop-all``): a reader typing it got a usage error. A span naming a command only
(``guard install``, ``guard eval --out``) may leave out what it requires; an argument or
sub-command guard does not know is an error, as is a placeholder spelled as a real word.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

from guard.cli.main import COMMANDS as TABLE
from guard.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_SPAN = re.compile(r"`(guard [^`]+)`")
#: Spans that stand for many commands (alternatives, optional parts, placeholders) rather than spell one.
_TEMPLATE = re.compile(r"[…|\[\]<>{}]|\.\.\.|\b[A-Z][A-Z_]+\b")
#: What a span naming a command without spelling it in full may leave out.
_INCOMPLETE = ("the following arguments are required", "expected one argument")
COMMANDS = set(TABLE)


def documented() -> list[tuple[str, str]]:
    found = []
    for document in DOCUMENTS:
        for match in _SPAN.finditer(document.read_text(encoding="utf-8")):
            text = match.group(1)
            try:
                words = shlex.split(text)
            except ValueError:
                continue
            if len(words) > 1 and words[1] in COMMANDS and not _TEMPLATE.search(text):
                found.append((document.relative_to(ROOT).as_posix(), text))
    return found


def test_every_documented_command_parses() -> None:
    spans = documented()
    assert len(spans) > 100, "the scan found almost no commands: the pattern is broken"
    parser = build_parser()
    wrong = []
    for document, text in spans:
        errors = io.StringIO()
        try:
            with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
                parser.parse_args(shlex.split(text)[1:])
        except SystemExit as exit_:
            said = errors.getvalue().strip().splitlines()[-1] if errors.getvalue().strip() else ""
            if exit_.code and not any(part in said for part in _INCOMPLETE):
                wrong.append(f"{document}: `{text}`: {said}")
    assert not wrong, "\n".join(wrong)
