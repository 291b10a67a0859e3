"""``memory://``: a decision cache that lives as long as its process (a dict)."""

from __future__ import annotations

import os
from typing import Any


class MemoryCache:
    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self.rows: dict[str, dict[str, Any]] = {}

    @classmethod
    def from_url(cls, url: str, *, ttl: float, base_dir: str | os.PathLike[str] = ".") -> MemoryCache:
        return cls(ttl)

    def get(self, key: str, *, record_miss: bool = True) -> dict[str, Any] | None:
        return self.rows.get(key)

    def set(self, key: str, value: dict[str, Any], ttl: float | None = None) -> None:
        self.rows[key] = value

    def stats(self) -> dict[str, Any]:
        return {"backend": "memory", "entries": len(self.rows)}

    def clear(self) -> int:
        count = len(self.rows)
        self.rows.clear()
        return count
