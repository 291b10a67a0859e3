"""Codex CLI: the Claude Code protocol (PascalCase events, ``hookSpecificOutput``, exit 2 blocks)."""

from __future__ import annotations

from guard.adapters.claude import normalize, render

__all__ = ["normalize", "render"]
