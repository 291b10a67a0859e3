"""The starter guard.yaml that ``guard init`` (and ``guard install`` with no config) writes.

A rule is about an effect, and an agent reaches one effect by many routes: a shell
``rm``, a Write that empties the file, an edit, an MCP filesystem tool. The starter's
matchers name canonical actions (:mod:`guard.core.actions`), not one client's tool,
so each rule sees every route in every client. docs/init.md explains each line.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["STARTER", "write_starter"]

STARTER = """\
# guard.yaml, written by `guard init` (see docs/init.md).
# Matchers name actions, not one client's tools: @shell is Claude Code's Bash, Codex's shell,
# Gemini CLI's run_shell_command, Copilot CLI's bash and Devin's exec; @write and @edit are every
# client's file writes and edits (apply_patch too); @mcp is any MCP server's tool (docs/actions.md).
# A rule on one tool only sees one route: an agent told no by `rm` can empty the file with a Write.
models:
  quick: openai/gpt-4.1-mini              # any LiteLLM model id; GUARD_API_BASE for an OpenAI-compatible server
  thorough: anthropic/claude-sonnet-4-5
hooks:
  PreToolUse:
    - id: no-destructive-changes
      matcher: "@shell|@write|@edit|@mcp"
      rule: >-
        Deny calls that delete, empty, truncate or overwrite files or folders outside the project
        directory, or that discard uncommitted work inside it (git clean, git checkout -- ., git reset --hard).
      depth: auto                          # quick, escalating to thorough when unsure
      failure_mode: fail_closed            # a model outage blocks these calls instead of waving them through
    - id: no-secret-leaks
      matcher: "@shell|@fetch|@mcp"
      rule: >-
        Deny calls that send credentials, API keys, tokens or private keys to anything outside this
        machine, or that print them from files such as .env, ~/.ssh or ~/.aws.
      depth: auto
"""


def write_starter(path: Path) -> Path:
    """Write the starter to ``path``, never over an existing file (FileExistsError)."""
    with path.open("x", encoding="utf-8") as out:
        out.write(STARTER)
    return path
