"""A cassette answers the judge at guard's own wire: a replay is read by production's HTTP/1.1 reader and parser, with its limits.

Recorded against the stub, then replayed with the stub stopped and the endpoint
elsewhere: the verdicts come back only while production's code reads them. Breaking
that code (the head parser, the reply parser) breaks the replay, so a CI gate on
recordings tests what parses real replies in production.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fixtures.judge import QUICK, bash_event, context, smart_spec

from guard.core.errors import JudgeBadResponse, JudgeError
from guard.core.events.model import parse_event
from guard.core.settings import Settings
from guard.eval.recording import vcr_config
from guard.hooks.smart import SmartHook
from guard.judge import cassette, http11, openai_transport
from guard.judge.reply_limit import MAX_REPLY_BYTES
from guard.testing.openai_stub import StubServer, keyword_policy

COMMANDS = ["rm -rf /home/u/victim", "ls -la"]
#: Nothing listens here: every answer must come from the cassette.
CLOSED = "http://127.0.0.1:9/v1"


@contextmanager
def cassette_at(path: Path, mode: str) -> Iterator[Any]:
    import vcr

    recorder = vcr.VCR(record_mode=mode, **vcr_config())
    cassette.register(recorder)
    with recorder.use_cassette(str(path)) as opened, cassette.use(opened):
        yield opened


async def judged(api_base: str, commands: list[str] = COMMANDS) -> list[tuple[str | None, str | None]]:
    settings = Settings(models={"quick": QUICK, "thorough": QUICK}, api_base=api_base, cache_url="off", audit_path=None)
    hook = SmartHook(smart_spec(depth="quick"), context(settings))
    results = [await hook.run(parse_event(bash_event(command))) for command in commands]
    return [(r.decision, r.reason) for r in results]


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, list[tuple[str | None, str | None]]]:
    path = tmp_path / "judge.yaml"
    with StubServer() as stub, cassette_at(path, "all"):
        stub.responder = keyword_policy
        decisions = await_all(judged(stub.url))
    assert [d for d, _ in decisions] == ["deny", "allow"]
    return path, decisions


def await_all(coroutine: Any) -> Any:
    import asyncio

    return asyncio.run(coroutine)


def test_a_replay_runs_productions_reader_and_parser(
    recorded: tuple[Path, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, decisions = recorded
    read: list[int] = []
    parse_head, parse_reply = http11._parse_head, openai_transport.parse_reply

    def counting_head(head: bytes) -> Any:
        read.append(len(head))
        return parse_head(head)

    monkeypatch.setattr(http11, "_parse_head", counting_head)
    with cassette_at(path, "none"):
        assert await_all(judged(CLOSED)) == decisions  # another endpoint, nothing listening: matched on what was asked
    assert len(read) == len(COMMANDS), "each replayed answer went through http11's head parser"

    # break production's reply parser, then its head parser: the replay breaks with them
    monkeypatch.setattr(
        openai_transport, "parse_reply", lambda *args: (_ for _ in ()).throw(ValueError("parser broken"))
    )
    with cassette_at(path, "none"), pytest.raises(JudgeError, match="parser broken"):
        await_all(judged(CLOSED))
    monkeypatch.setattr(openai_transport, "parse_reply", parse_reply)
    broken: list[bytes] = []

    def broken_head(head: bytes) -> Any:
        broken.append(head)
        raise http11.BrokenAnswer("head parser broken")

    monkeypatch.setattr(http11, "_parse_head", broken_head)
    with cassette_at(path, "none"), pytest.raises(JudgeError):
        await_all(judged(CLOSED))
    assert broken and broken[0].startswith(b"HTTP/1.1 200")


def _edit_answers(path: Path, edit: Any) -> None:
    import yaml

    data = yaml.safe_load(path.read_text())
    for interaction in data["interactions"]:
        edit(interaction["response"])
    path.write_text(yaml.safe_dump(data))


def test_a_recorded_answer_over_the_size_limit_is_refused_as_a_live_one_is(recorded: tuple[Path, list[Any]]) -> None:
    path, _ = recorded

    def padded(response: dict[str, Any]) -> None:
        body = json.loads(response["body"]["string"])
        body["padding"] = "x" * MAX_REPLY_BYTES
        response["body"]["string"] = json.dumps(body)

    _edit_answers(path, padded)
    with cassette_at(path, "none"), pytest.raises(JudgeBadResponse, match="limit for a model's answer"):
        await_all(judged(CLOSED, COMMANDS[:1]))


def test_a_chunked_recorded_answer_is_read_by_the_chunked_reader(
    recorded: tuple[Path, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, decisions = recorded
    _edit_answers(path, lambda response: response["headers"].update({"Transfer-Encoding": ["chunked"]}))
    chunked: list[int] = []
    read_chunked = http11._read_chunked

    async def counting(reader: Any, status: int) -> bytes:
        chunked.append(status)
        return await read_chunked(reader, status)

    monkeypatch.setattr(http11, "_read_chunked", counting)
    with cassette_at(path, "none"):
        assert await_all(judged(CLOSED)) == decisions
    assert chunked == [200, 200]


def test_a_replay_needs_no_key_and_no_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Recorded from the provider's endpoint with a key; replayed with neither key nor endpoint (the default one, never reached)."""
    path = tmp_path / "provider.yaml"
    settings = Settings(models={"quick": QUICK, "thorough": QUICK}, cache_url="off", audit_path=None)
    hook = SmartHook(smart_spec(depth="quick"), context(settings))
    with StubServer() as stub, cassette_at(path, "all"):
        stub.responder = keyword_policy
        monkeypatch.setenv("OPENAI_BASE_URL", stub.url)  # stands in for the provider's endpoint
        monkeypatch.setenv("OPENAI_API_KEY", "sk-recording-key")
        live = [await_all(hook.run(parse_event(bash_event(command)))) for command in COMMANDS]
    assert "sk-recording-key" not in path.read_text()
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    with cassette_at(path, "none") as opened:
        replayed = [await_all(hook.run(parse_event(bash_event(command)))) for command in COMMANDS]
        assert opened.play_counts == {0: 1, 1: 1}
    assert [(r.decision, r.reason) for r in replayed] == [(r.decision, r.reason) for r in live]
    assert replayed[0].details["calls"][0]["endpoint"] == "https://api.openai.com/v1"


def test_a_call_with_no_recording_fails_and_is_never_sent(recorded: tuple[Path, list[Any]]) -> None:
    path, _ = recorded
    with cassette_at(path, "none"), pytest.raises(JudgeError, match="no recording of this call"):
        await_all(judged(CLOSED, ["git push --force"]))


def test_a_cassette_opened_with_vcrpy_alone_records_and_replays_the_judge(tmp_path: Path) -> None:
    """``vcr.use_cassette`` without handing the cassette to guard: the judge finds it from vcrpy's patch, so its calls
    are recorded rather than go past the cassette to the network, and replay with nothing listening."""
    import vcr

    path = tmp_path / "direct.yaml"
    config = vcr.VCR(**vcr_config())
    cassette.register(config)
    with StubServer() as stub, config.use_cassette(str(path), record_mode="all"):
        stub.responder = keyword_policy
        recorded = await_all(judged(stub.url))
    assert stub.calls == 2 and "chat/completions" in path.read_text(encoding="utf-8")
    with config.use_cassette(str(path), record_mode="none"):
        assert await_all(judged(CLOSED)) == recorded
    assert [d for d, _ in recorded] == ["deny", "allow"] and cassette.active() is None
