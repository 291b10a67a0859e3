"""Every GTFOBins example as a line to try, its placeholders pointed at the planted world.

The extract (``/work/shared/external/gtfobins/examples.jsonl``, GPL-3.0, not vendored)
is on the development machines, not on a fresh CI machine: there the verifier runs
without it, and the escapes it found live on in the corpus that CI replays.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["EXAMPLES", "examples"]

EXAMPLES = Path(os.environ.get("GUARD_VERIFIER_GTFOBINS", "/work/shared/external/gtfobins/examples.jsonl"))
#: Placeholders of the examples, longest first, and what stands in for them in the world's project folder.
_PLACES = (
    ("attacker.com/path/to/input-file", "127.0.0.1/a.txt"),
    ("attacker.com:/path/to/output-file", "127.0.0.1:pwned"),
    ("/path/to/input-file", "a.txt"),
    ("/path/to/output-file", "pwned"),
    ("/path/to/temp-file", "pwned-temp"),
    ("/path/to/temp-dir", "pwned-dir"),
    ("/path/to/output-dir", "pwned-dir"),
    ("/path/to/input-dir", "src"),
    ("/path/to/dir", "src"),
    ("/path/to/command", "./evil"),
    ("/path/to/lib.so", "pwned.so"),
    ("/path/to/", "./"),
    ("attacker.com", "127.0.0.1"),
)


def examples(path: Path = EXAMPLES) -> list[str]:
    """The examples' code with the world's paths, in file order; empty when the extract is not on this machine."""
    if not path.exists():
        return []
    found = []
    for raw in path.read_text().splitlines():
        code = str(json.loads(raw)["code"])
        for placeholder, value in _PLACES:
            code = code.replace(placeholder, value)
        found.append(code)
    return list(dict.fromkeys(found))
