"""The public API agent builders import; changing it is a deliberate act."""

from __future__ import annotations

import guard


def test_exported_members() -> None:
    assert sorted(guard.__all__) == [
        "Decision", "Engine", "Event", "GuardError", "HookResult", "LoadedConfig", "Registry",
        "allow", "ask", "default_registry", "deny", "hook", "load_config", "rewrite",
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

    from guard.settings import Settings

    engine = guard.Engine(Settings(audit_path=None), registry)
    d = await engine.decide({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git push --force"}})
    assert d.decision == "deny" and d.to_dict()["hooks"][0]["id"].endswith("no_force_push")
