"""No input makes ``guard hook`` crash, print a traceback, or answer with a code the client reads as "proceed".

Random and hostile events go through the CLI entry point (``main(["hook"])`` with
stdin replaced, many per second; a few also as real processes). Every answer must
be one of the client protocol's: exit 0 with nothing or one JSON object, or exit 2
with a reason. Under a fail_closed hook nothing malformed is allowed; under
fail_open hooks a malformed event is allowed only with a warning the user sees,
and one over the size or nesting limit is refused under either.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.processes import SOURCE_ROOT

from guard.cli.main import main

GOOD = {
    "session_id": "s",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "ls"},
    "cwd": "/tmp",
}
FIELDS = [
    "hook_event_name",
    "tool_name",
    "tool_input",
    "cwd",
    "session_id",
    "prompt",
    "stop_hook_active",
    "transcript_path",
]
ODD_VALUES: list[object] = [
    None,
    0,
    -1,
    1e308,
    True,
    "",
    "\u0000",
    "x" * 100_000,
    [],
    {},
    ["Bash"],
    {"a": {"b": []}},
    "\ud800",
    "PreToolUse\n",
    "../../etc",
]


def hostile_inputs(seed: int = 7, count: int = 250) -> list[bytes]:
    rng = random.Random(seed)
    fixed = [
        b"",
        b" ",
        b"null",
        b"[]",
        b"1",
        b'"PreToolUse"',
        b"{",
        b"\xff\xfe\x00",
        b'{"hook_event_name": "PreToolUse"',
        b"{}",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 5000 + b"1" + b"}" * 5000,
        b'{"hook_event_name": "PreToolUse", "n": ' + b"9" * 5000 + b"}",
        b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": NaN}}',
        b'{"hook_event_name": "PreToolUse", "hook_event_name": "Stop", "tool_name": "Bash"}',
        b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "\\ud800\\udfff\\udc00"}}',
        b'{"hook_event_name": "Pre Tool Use!", "tool_name": "Bash"}',
        b'{"hook_event_name": "' + b"A" * 10_000 + b'"}',
        json.dumps({**GOOD, "tool_input": {"command": "ls", "content": "y" * 2_000_000}}).encode(),
        b"\xef\xbb\xbf" + json.dumps(GOOD).encode(),
    ]
    out = list(fixed)
    for _ in range(count):
        event = json.loads(json.dumps(GOOD))
        for _ in range(rng.randint(1, 3)):
            event[rng.choice(FIELDS)] = rng.choice(ODD_VALUES)
        text = json.dumps(event)
        roll = rng.random()
        if roll < 0.15:
            text = text[: rng.randint(0, len(text))]
        elif roll < 0.25:
            out.append(bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 200))))
            continue
        out.append(text.encode("utf-8", "surrogatepass"))
    return out


def run_hook(raw: bytes, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(raw)))
    code = main(["hook", "--deadline", "30"])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fail_open", "fail_closed"])
def test_hostile_events_never_crash_and_never_pass_silently(
    mode: str, isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (isolated_home / "policy.py").write_text("def check(event):\n    return None\n")
    (isolated_home / "guard.yaml").write_text(
        f"audit: {{path: audit.db}}\nhooks:\n  PreToolUse:\n    - id: p\n      failure_mode: {mode}\n      callable: policy:check\n"
    )
    trust_config(isolated_home / "guard.yaml")
    monkeypatch.chdir(isolated_home)
    monkeypatch.syspath_prepend(str(isolated_home))
    for raw in hostile_inputs():
        code, out, err = run_hook(raw, monkeypatch, capsys)
        assert "Traceback" not in err, (raw[:200], err)
        assert code in (0, 2), (raw[:200], code, err)
        body = json.loads(out) if out.strip() else {}
        decision = body.get("hookSpecificOutput", {}).get("permissionDecision")
        blocked = code == 2 or decision == "deny"
        malformed = "malformed event" in err + out
        too_large = "too large to judge" in err + out
        if too_large or (malformed and mode == "fail_closed"):  # the agent chose its size: refused whatever the mode
            assert blocked, (raw[:200], out, err)
        elif malformed and mode == "fail_open":
            assert not blocked and "malformed event" in body.get("systemMessage", ""), (raw[:200], out, err)
        if not malformed:
            assert not blocked and "systemMessage" not in body, (raw[:200], out, err)


@pytest.mark.slow
def test_hostile_events_as_real_processes(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - id: p\n      failure_mode: fail_closed\n      command: 'true'\n"
    )
    trust_config(isolated_home / "guard.yaml")
    for raw in hostile_inputs(seed=11, count=6)[::3]:
        proc = subprocess.run(
            [sys.executable, "-m", "guard.cli.main", "hook"],
            input=raw,
            capture_output=True,
            cwd=isolated_home,
            timeout=60,
            env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
        )
        assert b"Traceback" not in proc.stderr and proc.returncode in (0, 2), (raw[:200], proc.stderr)
