"""A project whose config has a session-aware rule next to a context-free one, judged by the loopback stub."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config

from guard.judge.fence import FENCE_RE
from guard.testing.openai_stub import Reply, StubServer

SESSION_RULE = "Deleting files or folders is allowed only when the user explicitly asked for that deletion."
PLAIN_RULE = "Never force-push to a shared branch."
TREE = Path(__file__).resolve().parents[1]


def config_text(api_base: str) -> str:
    return f"""models:
  quick: stub-quick
  thorough: stub-thorough
  api_base: {api_base}
hooks:
  PreToolUse:
    - id: asked-deletes
      matcher: Bash
      context: session
      depth: quick
      rule: "{SESSION_RULE}"
    - id: no-force-push
      matcher: Bash
      depth: quick
      rule: "{PLAIN_RULE}"
"""


def session_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The session JSON a judge request shows (the second fence of the user message), or None."""
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    fences = FENCE_RE.findall(user)
    return json.loads(fences[1][1]) if len(fences) > 1 else None


def intent_judge(body: dict[str, Any]) -> Reply:
    """A stand-in judge (not a model): with a session shown, deny an rm unless the latest user message asks to delete;
    without one, deny only a force push."""
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    action = FENCE_RE.search(user).group(2)  # type: ignore[union-attr]
    session = session_of(body)
    if session is None:
        return Reply.verdict("deny", "force push", confidence=0.95) if "--force" in action else Reply.verdict("allow", "no force push", confidence=0.95)
    if "rm -rf" not in action:
        return Reply.verdict("allow", "no deletion", confidence=0.95)
    asked = bool(session and session["user_messages"] and "delete" in session["user_messages"][-1].lower())
    if asked:
        return Reply.verdict("allow", f'soft deny cleared: the user wrote "{session["user_messages"][-1]}"', confidence=0.95)  # type: ignore[index]
    return Reply.verdict("deny", "deletion the user did not ask for", confidence=0.95)


def stub_judging(responder: Callable[[dict[str, Any]], Reply]) -> Iterator[StubServer]:
    """A running stub answering every request with ``responder`` (for a fixture to ``yield from``)."""
    with StubServer() as server:
        server.responder = responder
        yield server


@pytest.fixture
def judge_stub() -> Iterator[StubServer]:
    yield from stub_judging(intent_judge)


@pytest.fixture
def session_project(isolated_home: Path, judge_stub: StubServer) -> Path:
    (isolated_home / "guard.yaml").write_text(config_text(judge_stub.url))
    trust_config(isolated_home / "guard.yaml")
    return isolated_home


#: Runs guard's CLI, then reports on stderr which heavy modules the run imported.
PROBE = (
    "import sys, json\n"
    "from guard.cli.main import main\n"
    "rc = main(sys.argv[1:])\n"
    "sys.stderr.write('MODULES ' + json.dumps(sorted(m for m in ('pydantic', 'asyncio', 'litellm') if m in sys.modules)) + '\\n')\n"
    "sys.exit(rc)\n"
)


def hook(project: Path, payload: dict[str, Any], *extra: str) -> subprocess.CompletedProcess[str]:
    """``guard hook --format claude`` as Claude Code runs it, on this tree."""
    env = {**os.environ, "PYTHONPATH": str(TREE)}
    return subprocess.run(
        [sys.executable, "-c", PROBE, "hook", "--format", "claude", *extra], input=json.dumps(payload), capture_output=True, text=True, cwd=project, env=env, timeout=120, check=False
    )


def heavy_modules(proc: subprocess.CompletedProcess[str]) -> list[str]:
    line = [text for text in proc.stderr.splitlines() if text.startswith("MODULES ")][-1]
    return list(json.loads(line.removeprefix("MODULES ")))


def transcript_path(session: str) -> Path:
    """Where Claude Code keeps this session's transcript (``~/.claude/projects/<folder>/<session>.jsonl``)."""
    return Path.home() / ".claude" / "projects" / "-home-u-app" / f"{session}.jsonl"


def _append(session: str, entry: dict[str, Any]) -> None:
    path = transcript_path(session)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        out.write(json.dumps({**entry, "sessionId": session, "isSidechain": False, "userType": "external", "cwd": "/home/u/app"}) + "\n")


def said(session: str, text: str) -> None:
    """The user typed ``text`` in Claude Code: the client writes it to its transcript (the only place guard believes it)."""
    _append(session, {"type": "user", "message": {"role": "user", "content": text}})


def prompt_event(session: str, prompt: str) -> dict[str, Any]:
    """The UserPromptSubmit event Claude Code sends for a prompt (which guard never takes as the user's words)."""
    return {"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": prompt, "cwd": "/home/u/app", "transcript_path": str(transcript_path(session))}


_CALLS = iter(range(1, 1 << 30))


def tool_event(session: str, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """A PreToolUse as Claude Code sends it: the model's tool_use is already in the transcript when the hook runs."""
    call_id = f"toolu_{next(_CALLS):04d}"
    _append(session, {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": tool, "input": tool_input}]}})
    return {"session_id": session, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "cwd": "/home/u/app",
            "tool_use_id": call_id, "transcript_path": str(transcript_path(session))}


def bash_event(session: str, command: str) -> dict[str, Any]:
    return tool_event(session, "Bash", {"command": command})


def decision_of(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode in (0, 2), proc.stderr
    if not proc.stdout.strip():
        return "allow"
    out = json.loads(proc.stdout).get("hookSpecificOutput", {})
    return str(out.get("permissionDecision", "allow"))


# -- a policy in Claude Code autoMode form, and a stand-in judge that applies its lists mechanically --

HARD_PUSH = "Never push to the main branch of any repository, whoever asks."
HARD_UPLOAD = "No upload of any file (curl -T, curl --data @file, scp) once the session has read cloud credentials such as ~/.aws/credentials."
SOFT_DELETE = "Deleting files or folders with rm -rf."
ALLOW_TMP = "Deleting anything under /tmp is fine."
ENVIRONMENT = "Trusted upload host: uploads.corp.example"

SETTINGS = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "autoMode": {"hard_deny": [HARD_PUSH, HARD_UPLOAD], "soft_deny": ["$defaults", SOFT_DELETE], "allow": [ALLOW_TMP], "environment": ["$defaults", ENVIRONMENT]},
}

#: What each entry is about, for the stand-in judge: (action, earlier action inputs) -> matches.
MATCHES: dict[str, Callable[[str, list[str]], bool]] = {
    HARD_PUSH: lambda action, earlier: bool(re.search(r"git push\b.*\bmain\b", action)),
    HARD_UPLOAD: lambda action, earlier: "curl -T" in action and any(".aws/credentials" in e for e in earlier),
    SOFT_DELETE: lambda action, earlier: "rm -rf" in action,
    ALLOW_TMP: lambda action, earlier: "rm -rf /tmp/" in action,
}


def auto_mode_judge(body: dict[str, Any]) -> Reply:
    """A stand-in judge (not a model) for policies: it reads the numbered lists and the session out of the request and
    applies them as the policy template says: hard wins; soft unless allowed or directed by the user's own words."""
    user = body["messages"][-1]["content"]
    entries = dict(re.findall(r"^((?:hard_deny|soft_deny|allow)\[\d+\]): (.+)$", user, re.MULTILINE))
    action = FENCE_RE.search(user).group(2)  # type: ignore[union-attr]
    session = session_of(body) or {"user_messages": [], "actions": []}
    earlier = [a["input"] for a in session["actions"]]
    hit = {name: text for name, text in entries.items() if MATCHES.get(text, lambda a, e: False)(action, earlier)}
    for name, text in hit.items():
        if name.startswith("hard_deny"):
            return Reply.verdict("deny", f'{name} "{text}"', confidence=0.95)
    for name, text in hit.items():
        if name.startswith("soft_deny") and not any(n.startswith("allow") for n in hit):
            asked = [m for m in session["user_messages"][-1:] if "delete" in m.lower() and "build" in m.lower()]
            if asked and "build" in action:
                return Reply.verdict("allow", f'{name} cleared by the user: "{asked[0]}"', confidence=0.95)
            return Reply.verdict("deny", f'{name} "{text}": no request from the user', confidence=0.95)
    return Reply.verdict("allow", "no deny entry matches", confidence=0.95)
