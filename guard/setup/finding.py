"""One ``guard doctor`` check's outcome: its own module, so the checks in other modules make it without importing the doctor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Finding", "Status"]

Status = Literal["ok", "warn", "fail"]


@dataclass(frozen=True)
class Finding:
    """One check's outcome: ``fail`` means guard is not guarding as configured."""

    status: Status
    topic: str
    message: str
    fix: str | None = None
