"""Where a replay's model calls go: each tool call that reached the judge, classed by what it runs and why nothing answered it first.

``bench_traffic.py --provenance --calls FILE`` writes one JSON line per such call and prints, per row, the model
requests per 1,000 tool calls of each class. Two labels per call:

- ``runs``: what the command is, read from its first program (an agent-written script run by an interpreter, a test
  runner, ``python -c``, ``sed -i``, a file utility, git, a here-document writing a file, an install …): a report's
  wording, not a proof of anything;
- ``why``: why neither a lane, the cache nor an earlier judgement of the same code answered it, from guard's own
  answers (:func:`guard.session.call_effects.runs_code` and :func:`~guard.session.call_effects.run_identity`, and the
  deferred files the judge was shown): it runs no project code (so the lane or cache alone could have), it runs code
  with no one spelling, its judge was shown changed files no judge of the rule had seen run, or its code was not
  judged before (a new script, new content, new arguments).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: What a command runs, by its first program (checked in order; the first match names the class).
_RUNS = (
    (
        "here-document writing a file, then running it",
        re.compile(r"<<-?\s*['\"]?\w+['\"]?\s*>[\s\S]*\n\w+\s*\n+\s*(?:python|pytest|bash|sh|node|\./)"),
    ),
    ("here-document writing a file", re.compile(r"<<-?\s*['\"]?\w+['\"]?\s*>|^\s*cat\s*>")),
    ("test runner", re.compile(r"\b(?:pytest|py\.test|tox|nox|runtests\.py|bin/test|unittest)\b")),
    ("python -c", re.compile(r"\bpython[\d.]*\s+(?:-\S+\s+)*-c\b")),
    (
        "interpreter running a script",
        re.compile(r"\b(?:python[\d.]*|bash|sh|node)\s+(?:-\S+\s+)*[\w./-]+\.(?:py|sh|js)\b|(?:^|&&\s*)\./[\w./-]+"),
    ),
    ("sed -i", re.compile(r"\bsed\s+(?:-\S+\s+)*-\w*i")),
    (
        "install",
        re.compile(r"\b(?:pip[\d.]*|apt(?:-get)?|conda|npm|yarn)\s+(?:install|add)\b|setup\.py\s+(?:install|develop)"),
    ),
    ("git", re.compile(r"\bgit\s")),
    ("file utility (rm, mkdir, cp, mv, touch)", re.compile(r"^\s*(?:rm|rmdir|mkdir|cp|mv|touch|chmod)\b")),
)


def runs(command: str) -> str:
    """What the command is, for the report (see the module's docstring)."""
    for label, pattern in _RUNS:
        if pattern.search(command):
            return label
    first = command.split()[0] if command.split() else ""
    return f"other: {os.path.basename(first)}"


def requests(smart: list[Any]) -> int:
    """Model requests the call's smart hooks made (one shared by rules judged together counts once)."""
    return sum(
        1
        for h in smart
        if not h.cached
        for call in h.details.get("calls", ())
        if not call.get("shared_with") and not call.get("cached")
    )


def why(command: str, cwd: str, smart: list[Any], env: Mapping[str, str]) -> str:
    """Why nothing answered the call before the judge (see the module's docstring)."""
    try:
        from guard.session.call_effects import run_identity, runs_code
    except ImportError:  # a checkout of guard from before the record of what the agent wrote (measured for comparison)
        return "not known: this checkout of guard does not tell which calls run project code"
    tool_input = {"command": command}
    if not runs_code("Bash", tool_input, cwd, env):
        return "runs no project code: a new call the lanes do not prove"
    if run_identity("Bash", tool_input, cwd, env) is None:
        return "runs code, in no one spelling (a here-document, ;, ||, a subshell …): never answered by an earlier judgement"
    if any((h.details.get("deferred") or {}).get("files") for h in smart):
        return "runs code while files changed that no judge of the rule had seen run"
    return "runs code not judged before (a new script, new content or new arguments)"


def reached(
    session: str, raw: str, command: str, cwd: str, smart: list[Any], env: Mapping[str, str]
) -> dict[str, Any] | None:
    """The record of a call that reached the judge (None when no model request was made for it): ``raw`` as the traffic
    has it, ``command`` as it ran in ``cwd``."""
    made = requests(smart)
    if not made:
        return None
    return {
        "session": session,
        "command": raw,
        "requests": made,
        "runs": runs(raw),
        "why": why(command, cwd, smart, env),
    }


def table(label: str, rows: list[dict[str, Any]], tool_calls: int) -> str:
    """Model requests per 1,000 tool calls by class, most first."""
    lines = [
        f"\nwhere the model calls of {label} go (requests per 1,000 tool calls):",
        "",
        "| by | class | per 1,000 |",
        "|---|---|---|",
    ]
    for field in ("why", "runs"):
        counted: Counter[str] = Counter()
        for row in rows:
            counted[row[field]] += row["requests"]
        lines += [f"| {field} | {name} | {1000 * n / tool_calls:.0f} |" for name, n in counted.most_common()]
    return "\n".join(lines)


def write(path: Path, label: str, rows: list[dict[str, Any]]) -> None:
    """Append the row's calls to ``path`` as JSON Lines."""
    with path.open("a", encoding="utf-8") as out:
        out.writelines(json.dumps({"row": label, **row}) + "\n" for row in rows)
