"""What ``guard install`` added to a client's sandbox settings, kept in guard's state directory, so ``--uninstall`` removes exactly that.

A settings file has no room to mark an entry as guard's, and a value guard set
(``"enabled": true``) may have been the user's before: the record keeps the
entries guard added, each value it changed with the value before, and the
containers it created. It lives outside the project, beside guard's other
state (which the sandbox itself keeps from the agent). Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from guard.core.settings import user_dir

__all__ = ["forget", "recall", "remember"]


def _file(settings: Path) -> Path:
    digest = hashlib.sha256(str(settings.absolute()).encode()).hexdigest()[:16]
    return user_dir("state") / "sandbox" / f"{digest}.json"


def recall(settings: Path) -> dict[str, Any] | None:
    """What guard added to ``settings`` at its last install, or None (never installed here, or the record is gone)."""
    try:
        data = json.loads(_file(settings).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("file") == str(settings.absolute()) else None


def remember(settings: Path, record: dict[str, Any]) -> None:
    target = _file(settings)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({**record, "file": str(settings.absolute())}, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, target)


def forget(settings: Path) -> None:
    _file(settings).unlink(missing_ok=True)
