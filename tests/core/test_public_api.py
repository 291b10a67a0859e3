"""The public API agent builders import; changing it is a deliberate act."""

from __future__ import annotations

import guard


def test_exported_members() -> None:
    assert sorted(guard.__all__) == [
        "Decision",
        "Engine",
        "Event",
        "Gate",
        "GuardError",
        "HookResult",
        "LoadedConfig",
        "Registry",
        "allow",
        "ask",
        "default_registry",
        "deny",
        "hook",
        "load_config",
        "rewrite",
    ]
    for name in guard.__all__:
        assert getattr(guard, name) is not None


async def test_library_use_as_documented() -> None:
    registry = guard.Registry()

    @registry.callable("pre_tool_use", matcher="Bash")
    def no_force_push(event: guard.Event) -> guard.HookResult | None:
        if "push --force" in event.tool_input.get("command", ""):
            return guard.deny("force-push rewrites shared history")
        return None

    from guard.core.settings import Settings

    engine = guard.Engine(Settings(audit_path=None), registry)
    d = await engine.decide(
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git push --force"}}
    )
    assert d.decision == "deny" and d.to_dict()["hooks"][0]["id"].endswith("no_force_push")


def test_a_python_caller_gets_the_gate_fast_path_and_policy(tmp_path: object, monkeypatch: object) -> None:
    """guard.Gate answers like guard hook: no-match fast, a fail_closed failure denies, an unjudged allow warns."""
    from pathlib import Path

    import pytest

    root = Path(str(tmp_path))
    mp: pytest.MonkeyPatch = monkeypatch  # type: ignore[assignment]
    mp.chdir(root)
    (root / "guard.yaml").write_text(
        "audit: {enabled: false}\ncache: {url: 'off'}\nhooks:\n  PreToolUse:\n"
        "    - {id: strict, matcher: Bash, rule: Deny deletes., failure_mode: fail_closed}\n"
        "    - {id: lenient, matcher: Edit, rule: Deny secrets.}\n"
    )
    for var in ("GUARD_MODEL_QUICK", "GUARD_MODEL_THOROUGH", "GUARD_API_BASE"):
        mp.delenv(var, raising=False)
    gate = guard.Gate()
    _, none = gate.decide({"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {}})
    assert none.decision == "allow" and none.judged and none.hooks == []
    # not `rm -rf /`: the built-in self-protection rule denies that one without a model (it removes guard.yaml)
    _, strict = gate.decide(
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf ~/photos"}}
    )
    assert strict.decision == "deny" and "no model" in strict.reason
    _, lenient = gate.decide({"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": {"file_path": "x"}})
    assert lenient.decision == "allow" and not lenient.judged and "lenient" in lenient.warnings[0]


def test_an_in_process_gate_keeps_one_model_connection_and_its_databases_across_calls(
    tmp_path: object, monkeypatch: object
) -> None:
    """A Python caller deciding many calls pays one connection to the model, not one (left open) per miss."""
    import os
    from pathlib import Path

    from guard.testing.openai_stub import Reply, StubServer

    folder = Path(str(tmp_path))
    with StubServer(default=Reply.verdict("allow", "fine", confidence=0.95)) as stub:
        (folder / "guard.yaml").write_text(
            f"models: {{quick: openai/stub-quick, api_base: {stub.url}}}\n"
            "hooks:\n  PreToolUse:\n    - id: r\n      matcher: Bash\n      depth: quick\n      rule: Deny deletes.\n"
        )
        gate = guard.Gate(str(folder / "guard.yaml"))
        open_files = []
        for number in range(12):
            event = {
                "hook_event_name": "PreToolUse",
                "session_id": "s",
                "cwd": str(folder),
                "tool_name": "Bash",
                "tool_input": {"command": f"echo {number}"},
            }
            assert gate.decide(event)[1].hooks[0].decision == "allow"
            assert gate.decide(event)[1].hooks[0].cached  # the second is a hit
            open_files.append(len(os.listdir("/proc/self/fd")))
        assert stub.calls == 12 and stub.connections == 1
        assert open_files[-1] == open_files[1]  # nothing more held open after the first calls


def test_a_results_data_is_the_callers_to_change() -> None:
    result = guard.HookResult(
        "h",
        "callable",
        "allow",
        updated_input={"command": "ls", "env": {"A": "1"}},
        details={"calls": [{"tier": "quick"}]},
    )
    data = result.to_dict()
    data["updated_input"]["env"]["A"] = "2"
    data["details"]["calls"][0]["tier"] = "thorough"
    assert result.updated_input == {"command": "ls", "env": {"A": "1"}} and result.details == {
        "calls": [{"tier": "quick"}]
    }
    assert data["decision"] == "allow" and "shadow" not in data
