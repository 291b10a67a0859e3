"""The corpus: every escape the verifier found, in its minimal form, replayed by every CI run.

One JSON object a line: ``line``, ``mode`` (``read``: it was proven to only read;
``write``: to write only its redirection targets), ``class``, ``effects``, ``evidence``
(the system calls or output that showed it), ``found`` (the date), ``against``
(the guard it escaped), and whether that guard's lane allowed it without a model
(``lane``) and self-protection let it run (``protect``). A corpus line passes when the prover no longer proves it, or
when it runs clean.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["CORPUS", "Entry", "append", "load"]

CORPUS = Path(__file__).with_name("corpus.jsonl")


@dataclass(frozen=True)
class Entry:
    """One corpus line (``klass``: the escape's class, ``class`` in the file)."""

    line: str
    mode: str
    klass: str
    effects: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    found: str = ""
    against: str = ""
    lane: bool = False
    protect: bool = False

    def to_json(self) -> str:
        data = asdict(self)
        data["class"] = data.pop("klass")
        return json.dumps(data, ensure_ascii=False)


def load(path: Path = CORPUS) -> list[Entry]:
    if not path.exists():
        return []
    entries = []
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        if raw.strip():
            data = json.loads(raw)
            try:
                entries.append(
                    Entry(
                        data["line"],
                        data["mode"],
                        data["class"],
                        data.get("effects", []),
                        data.get("evidence", []),
                        data.get("found", ""),
                        data.get("against", ""),
                        data.get("lane", False),
                        data.get("protect", False),
                    )
                )
            except KeyError as exc:
                raise ValueError(f"{path}:{number}: a corpus line needs {exc}") from exc
    return entries


def append(entries: list[Entry], path: Path = CORPUS) -> int:
    """Add the entries whose (line, mode) is new; the number added."""
    known = {(e.line, e.mode) for e in load(path)}
    new = []
    for entry in entries:
        if (entry.line, entry.mode) not in known:
            known.add((entry.line, entry.mode))
            new.append(entry)
    if new:
        with path.open("a") as file:
            file.writelines(e.to_json() + "\n" for e in new)
    return len(new)
