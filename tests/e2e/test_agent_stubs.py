"""The agent-API stubs speak their wire formats and play scripts as documented (no agent CLI needed)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from guard.testing.agent_script import final_text, tool_use
from guard.testing.anthropic_stub import AnthropicStub
from guard.testing.gemini_stub import GeminiStub
from guard.testing.responses_stub import ResponsesStub

TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def _post(url: str, body: dict[str, Any]) -> tuple[str, str]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers.get("Content-Type", ""), response.read().decode()


def _sse_data(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")]


def test_anthropic_stream_carries_the_tool_input_as_json_deltas() -> None:
    with AnthropicStub([tool_use("Bash", {"command": "ls -la /tmp"}), final_text("done")]) as stub:
        kind, text = _post(f"{stub.base_url}/v1/messages?beta=true", {"stream": True, "tools": TOOLS, "messages": []})
    events = _sse_data(text)
    assert kind == "text/event-stream"
    assert [e["type"] for e in events][:2] == ["message_start", "content_block_start"]
    assert events[-2]["delta"]["stop_reason"] == "tool_use" and events[-1]["type"] == "message_stop"
    start = events[1]["content_block"]
    assert start["type"] == "tool_use" and start["name"] == "Bash" and start["input"] == {}
    fragments = [e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"]
    assert len(fragments) == 2 and json.loads("".join(fragments)) == {"command": "ls -la /tmp"}


def test_side_requests_do_not_consume_turns_and_everything_is_recorded() -> None:
    with AnthropicStub([final_text("the answer")]) as stub:
        _, side = _post(f"{stub.base_url}/v1/messages", {"messages": [{"role": "user", "content": "judge"}]})
        _, turn = _post(f"{stub.base_url}/v1/messages", {"tools": TOOLS, "messages": []})
        _, after = _post(f"{stub.base_url}/v1/messages", {"tools": TOOLS, "messages": []})
        assert json.loads(side)["content"][0]["text"] == '{"ok": true}'  # what a Claude prompt hook expects
        assert json.loads(turn)["content"][0]["text"] == "the answer"
        assert "script finished" in json.loads(after)["content"][0]["text"]
        assert [r.is_agent_turn for r in stub.requests] == [False, True, True]
        assert stub.agent_requests[0].received_at <= stub.agent_requests[1].received_at


def test_anthropic_request_lists_the_tool_results_the_model_saw() -> None:
    with AnthropicStub() as stub:
        result = {"type": "tool_result", "tool_use_id": "t1", "content": "blocked: deletes files", "is_error": True}
        _post(f"{stub.base_url}/v1/messages", {"tools": TOOLS, "messages": [{"role": "user", "content": [result]}]})
        assert stub.agent_requests[0].tool_results() == [result]


def test_gemini_stub_answers_schema_side_requests_and_plays_function_calls() -> None:
    schema = {"type": "OBJECT", "properties": {"complexity_score": {"type": "INTEGER"}, "why": {"type": "STRING"}}}
    with GeminiStub([tool_use("run_shell_command", {"command": "ls"})]) as stub:
        base = f"{stub.base_url}/v1beta/models/gemini-x"
        _, side = _post(f"{base}:generateContent", {"generationConfig": {"responseJsonSchema": schema}})
        _, turn = _post(f"{base}:streamGenerateContent?alt=sse", {"tools": [{}], "contents": []})
    assert json.loads(json.loads(side)["candidates"][0]["content"]["parts"][0]["text"]) == {
        "complexity_score": 1,
        "why": "stub",
    }
    parts = _sse_data(turn)[0]["candidates"][0]["content"]["parts"]
    assert parts == [{"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}}]


def test_responses_stub_streams_a_function_call_item() -> None:
    with ResponsesStub([tool_use("exec_command", {"cmd": "ls"})]) as stub:
        _, text = _post(f"{stub.base_url}/v1/responses", {"stream": True, "tools": [{}], "input": []})
    events = _sse_data(text)
    assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"
    item = next(e["item"] for e in events if e["type"] == "response.output_item.done")
    assert item["type"] == "function_call" and item["name"] == "exec_command"
    assert json.loads(item["arguments"]) == {"cmd": "ls"}
