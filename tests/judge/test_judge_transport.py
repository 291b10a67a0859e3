"""The fast route to ``openai/…`` models: no LiteLLM import, pooled connections, forced LiteLLM, cassettes across routes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.judge import bash_event, context, settings_for, smart_spec

from guard.core.events.model import parse_event
from guard.eval.recording import recording
from guard.hooks.smart import SmartHook
from guard.testing.openai_stub import Reply, StubServer

CHECK = [
    "check",
    "--rule",
    "Deny deleting files outside the project",
    "--tool",
    "Bash",
    "--depth",
    "quick",
    "--input",
    '{"command": "rm -rf ~/"}',
]


def check_importing(stub: StubServer, cwd: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``guard check`` in a fresh process, and the top-level modules it imported (``-X importtime``)."""
    env = {
        "GUARD_MODEL_QUICK": "openai/stub-quick",
        "GUARD_MODEL_THOROUGH": "openai/stub-thorough",
        "GUARD_API_BASE": stub.url,
        **env,
    }
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "guard.cli.main", *CHECK],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=cwd,
        timeout=120,
    )
    modules = {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in out.stderr.splitlines()
        if line.startswith("import time:")
    }
    return out, modules


@pytest.mark.slow
@pytest.mark.parametrize("forced", [False, True], ids=["openai-route", "GUARD_TRANSPORT=litellm"])
def test_a_fresh_judged_call_imports_litellm_only_when_forced(
    stub: StubServer, isolated_home: Path, forced: bool
) -> None:
    stub.default = Reply.verdict("deny", "deletes a home folder", confidence=0.9)
    out, modules = check_importing(stub, isolated_home, **({"GUARD_TRANSPORT": "litellm"} if forced else {}))
    assert out.returncode == 1 and stub.calls == 1, out.stderr[-2000:]
    assert ("litellm" in modules) is forced and ("httpx" in modules) is forced  # guard's wire needs no HTTP library


def test_an_unknown_transport_is_named_not_a_traceback(stub: StubServer, isolated_home: Path) -> None:
    out, _ = check_importing(stub, isolated_home, GUARD_TRANSPORT="grpc")
    assert out.returncode != 0 and "GUARD_TRANSPORT" in out.stderr and "Traceback" not in out.stderr
    assert stub.calls == 0


async def test_calls_reuse_pooled_connections(stub: StubServer) -> None:
    stub.latency = 0.05
    hook = SmartHook(smart_spec(), context(settings_for(stub)))
    for command in ("ls", "pwd", "whoami"):  # one after another: one connection
        await hook.run(parse_event(bash_event(command)))
    assert stub.connections == 1
    for round_ in range(3):  # 6 at a time, three rounds: never more connections than calls in flight
        await asyncio.gather(*(hook.run(parse_event(bash_event(f"echo {round_}-{i}"))) for i in range(6)))
    assert stub.calls == 21 and stub.connections <= 6


@pytest.mark.parametrize(("recorded_on", "replayed_on"), [("openai", "litellm"), ("litellm", "openai")])
async def test_a_cassette_recorded_on_one_route_replays_offline_on_the_other(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recorded_on: str, replayed_on: str
) -> None:
    stub.responder = lambda body: Reply.verdict("deny" if "rm -rf" in str(body) else "allow", "stub", confidence=0.9)
    settings = settings_for(stub)

    async def decisions() -> list[str | None]:
        hook = SmartHook(smart_spec(), context(settings))
        return [(await hook.run(parse_event(bash_event(c)))).decision for c in ("rm -rf /home/u/x", "ls")]

    monkeypatch.setenv("GUARD_TRANSPORT", "litellm" if recorded_on == "litellm" else "auto")
    with recording("record", str(tmp_path), ["cases"]):
        recorded = await decisions()
    monkeypatch.setenv("GUARD_TRANSPORT", "litellm" if replayed_on == "litellm" else "auto")
    stub.stop()  # replay has nothing to reach
    with recording("replay", str(tmp_path), ["cases"]):
        replayed = await decisions()
    assert recorded == replayed == ["deny", "allow"] and stub.calls == 2
