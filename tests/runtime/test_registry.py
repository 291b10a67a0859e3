from __future__ import annotations

import asyncio
import logging

import pytest

from guard.core.matching import compile_filter
from guard.core.spec import HookSpec
from guard.runtime.registry import Registry


def spec(
    id: str, *, event: str = "pre_tool_use", matcher: str | None = None, tools: tuple[str, ...] | None = None
) -> HookSpec:
    return HookSpec(id=id, kind="callable", event=event, matcher=matcher, tools=tools)


@pytest.mark.parametrize(
    ("matcher", "tool", "expected"),
    [
        (None, "Bash", True),
        ("", "Write", True),
        ("*", "mcp__x__y", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),  # exact, not a substring
        ("Write|Edit", "Edit", True),
        ("Write|Edit", "MultiEdit", False),
        ("Write, Edit", "Write", True),
        ("mcp__github__.*", "mcp__github__create_issue", True),
        ("mcp__github__.*", "mcp__slack__post", False),
        ("^exec$", "exec", True),
        ("^exec$", "exec2", False),
        ("Notebook.*", "NotebookEdit", True),
    ],
)
def test_matcher_follows_claude_code_rules(matcher: str | None, tool: str, expected: bool) -> None:
    assert compile_filter(matcher, None)(tool) is expected


def test_tools_globs_and_lists() -> None:
    assert compile_filter(None, ("bash_*",))("bash_code_execute_tool")
    assert not compile_filter(None, ("bash_*",))("write_file_tool")
    assert compile_filter(None, ("bash_*", "write_file_tool"))("write_file_tool")
    assert compile_filter("Bash", ("Ba*",))("Bash") and not compile_filter("Bash", ("X*",))("Bash")


@pytest.mark.parametrize(("matcher", "tools"), [("(unclosed", None), (None, ()), (None, ("",)), (None, (3,))])
def test_invalid_filter_matches_nothing_never_everything(matcher, tools, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.WARNING)
    f = compile_filter(matcher, tools)
    assert not f("Bash") and not f(None)
    assert "skipped" in caplog.text


def test_matching_by_event_alias_in_registration_order() -> None:
    reg = Registry([spec("a", matcher="Bash"), spec("b", event="post_tool_use"), spec("c")])
    assert [s.id for s in reg.matching("PreToolUse", "Bash")] == ["a", "c"]
    assert [s.id for s in reg.matching("BeforeTool", "Write")] == ["c"]
    assert [s.id for s in reg.matching("AfterTool", "Write")] == ["b"]


def test_tool_filtered_hooks_do_not_match_events_without_a_tool() -> None:
    reg = Registry([spec("filtered", event="user_turn", matcher="Bash"), spec("all", event="user_turn")])
    assert [s.id for s in reg.matching("UserPromptSubmit", None)] == ["all"]


async def test_run_scoped_hooks_are_invisible_to_concurrent_runs_and_released() -> None:
    reg = Registry([spec("global")])
    seen: dict[str, list[str]] = {}
    mounted = asyncio.Event()
    other_checked = asyncio.Event()

    async def run_with_skill() -> None:
        with reg.run():
            reg.mount([spec("skill-hook")])
            mounted.set()
            await other_checked.wait()  # the other run looks while this one is still mounted
            seen["skill"] = [s.id for s in reg.matching("pre_tool_use", "Bash")]

    async def plain_run() -> None:
        with reg.run():
            await mounted.wait()
            seen["plain"] = [s.id for s in reg.matching("pre_tool_use", "Bash")]
            other_checked.set()

    await asyncio.gather(run_with_skill(), plain_run())
    assert seen == {"skill": ["global", "skill-hook"], "plain": ["global"]}
    assert [s.id for s in reg.matching("pre_tool_use", "Bash")] == ["global"]  # released at run end


def test_mount_outside_a_run_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="open run"):
        Registry().mount([spec("x")])


def test_decorator_registers_a_callable_hook() -> None:
    reg = Registry()

    @reg.callable("PreToolUse", matcher="Bash", failure_mode="fail_closed")
    def no_force_push(event: object) -> None:
        return None

    (s,) = reg.matching("pre_tool_use", "Bash")
    assert s.kind == "callable" and s.func is no_force_push and s.failure_mode == "fail_closed"
