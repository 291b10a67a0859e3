"""The integrations are optional: importing guard or guard.integrations loads no agent SDK."""

from __future__ import annotations

import json
import subprocess
import sys


def test_importing_guard_and_its_integrations_package_loads_no_sdk() -> None:
    probe = "import json, sys, guard, guard.integrations, guard.integrations.tool_calls; print(json.dumps([m for m in ('claude_agent_sdk', 'agents', 'langchain', 'langgraph') if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
