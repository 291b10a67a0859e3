"""Shared set-up of the cache and service benchmarks: the stub-judged config, events, ports, processes.

Not a benchmark itself; ``bench_cache_hook.py``, ``bench_serve.py`` and
``bench_cache_backends.py`` import it (they run as scripts from ``bench/``).
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

RULE = "Deny shell commands that delete files outside the project."


def config(cache_url: str, *, audit: bool = True) -> str:
    """guard.yaml with one smart hook whose quick tier is the stub model (GUARD_API_BASE points at it)."""
    return f"""models:
  quick: openai/stub-judge
cache:
  url: {cache_url}
audit:
  enabled: {str(audit).lower()}
hooks:
  PreToolUse:
    - id: no-delete
      matcher: Bash
      rule: {RULE}
      depth: quick
      timeout: 120
"""


def event(command: str) -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": "bench",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }


def event_json(command: str) -> str:
    return json.dumps(event(command))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(port: int, proc: subprocess.Popen[Any], timeout: float = 180) -> None:
    """Wait until ``proc`` listens on ``port``; fail fast if it exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{proc.args} is not listening on {port} after {timeout}s")


def loadavg() -> str:
    """The machine's load average, printed beside every figure (this box is shared)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]
