"""A command hook cancelled by a timeout takes its whole process group with it, grandchildren included."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from guard.core.events.model import parse_event
from guard.core.hook import HookContext
from guard.core.settings import Settings
from guard.core.spec import HookSpec
from guard.hooks.command import KILL_GRACE, CommandHook
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry

EVENT = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}


def alive(pid: int) -> bool:
    """Running or sleeping; a zombie waiting for its new parent to reap it counts as gone."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def grandchild_command(pid_file: Path, *, ignore_term: bool = False) -> str:
    """/bin/sh -c → inner sh → background sleep (the grandchild), whose pid is written to ``pid_file``."""
    trap = 'trap "" TERM; ' if ignore_term else ""
    return f"sh -c '{trap}sleep 300 & echo $! > {pid_file}; wait'; true"


async def wait_for_file(path: Path) -> int:
    for _ in range(200):
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never appeared")


@pytest.mark.parametrize("ignore_term", [False, True], ids=["sigterm", "needs-sigkill"])
async def test_timeout_kills_the_grandchild(tmp_path: Path, ignore_term: bool) -> None:
    pid_file = tmp_path / "grandchild.pid"
    spec = HookSpec(
        id="slow",
        kind="command",
        event="pre_tool_use",
        options={"command": grandchild_command(pid_file, ignore_term=ignore_term)},
    )
    hook = CommandHook(spec, HookContext(Settings(base_dir=str(tmp_path), audit_path=None)))
    task = asyncio.ensure_future(hook.run(parse_event(EVENT)))
    pid = await wait_for_file(pid_file)
    assert alive(pid)
    started = time.perf_counter()
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(task, timeout=0.2)
    assert time.perf_counter() - started < 0.2 + KILL_GRACE + 1.0
    for _ in range(100):  # SIGKILL is delivered asynchronously; give the kernel a moment
        if not alive(pid):
            break
        await asyncio.sleep(0.01)
    assert not alive(pid), f"grandchild {pid} survived the timeout"


@pytest.mark.slow
async def test_engine_timeout_kills_the_group_and_fails_closed(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    spec = HookSpec(
        id="slow",
        kind="command",
        event="pre_tool_use",
        options={"command": grandchild_command(pid_file)},
        timeout=1,
        failure_mode="fail_closed",
    )
    engine = Engine(Settings(base_dir=str(tmp_path), audit_path=None), Registry([spec]))
    decision = await engine.decide(EVENT)
    assert decision.decision == "deny"
    assert "timed out" in (decision.hooks[0].error or "")
    pid = int(pid_file.read_text())
    for _ in range(100):
        if not alive(pid):
            break
        await asyncio.sleep(0.01)
    assert not alive(pid)


async def test_finished_hook_leaves_nothing_to_kill(tmp_path: Path) -> None:
    """A normal run does not touch other processes: the cleanup path is only for cancellation."""
    spec = HookSpec(id="quick", kind="command", event="pre_tool_use", options={"command": "echo $$ > leader.pid"})
    hook = CommandHook(spec, HookContext(Settings(base_dir=str(tmp_path), audit_path=None)))
    await hook.run(parse_event({**EVENT, "cwd": str(tmp_path)}))
    leader = int((tmp_path / "leader.pid").read_text())
    assert not alive(leader)
    assert os.getpgid(0) != leader
