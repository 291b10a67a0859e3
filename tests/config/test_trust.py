"""A trusted, pinned config: guard hook enforces what the user approved with ``guard trust``, not what the agent left on disk.

Every attack runs through a real ``guard hook`` process with the client's payload
(Claude Code unless said otherwise); ``guard trust`` runs at a real pseudo-terminal.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.guide import guide_config
from fixtures.processes import SOURCE_ROOT, run_guard
from fixtures.terminal import at_terminal

from guard.testing.openai_stub import Reply, StubServer

TREE = str(Path(__file__).resolve().parents[2])
NO_FETCH = "hooks:\n  PreToolUse:\n    - id: no-fetch\n      matcher: WebFetch\n      command: 'echo no fetching >&2; exit 2'\n"
FETCH = {"url": "https://example.com"}


def guard(args: list[str], cwd: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    """A real ``guard`` process on this tree."""
    return run_guard(args, cwd, stdin=stdin, env=env)


def claude(
    cwd: Path, tool: str, tool_input: dict[str, Any], *, event: str = "PreToolUse", **env: str
) -> tuple[str, str, str]:
    """(decision, reason, what the user is shown) from ``guard hook --format claude`` for one event."""
    payload = {
        "hook_event_name": event,
        "session_id": "s",
        "cwd": str(cwd),
        "tool_name": tool,
        "tool_input": tool_input,
    }
    proc = guard(["hook", "--format", "claude"], cwd, json.dumps(payload), **env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout) if proc.stdout.strip() else {}
    specific = out.get("hookSpecificOutput", {})
    return (
        specific.get("permissionDecision", "allow"),
        specific.get("permissionDecisionReason", ""),
        out.get("systemMessage", ""),
    )


def user_terminal(cwd: Path, answer: str | None, *args: str, **env: str) -> tuple[int, str]:
    """``guard trust`` typed by the user at their terminal."""
    return at_terminal(
        [sys.executable, "-m", "guard.cli.main", "trust", *args],
        answer=answer,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": TREE, **env},
    )


# -- attack 1: a config that shadows the one in use, and include targets --------------------------------------


@pytest.mark.slow
def test_a_new_guard_yaml_does_not_shadow_the_trusted_one(isolated_home: Path) -> None:
    (isolated_home / ".guard").mkdir()
    (isolated_home / ".guard" / "guard.yaml").write_text(NO_FETCH)
    trust_config(isolated_home / ".guard" / "guard.yaml")
    assert claude(isolated_home, "WebFetch", FETCH)[0] == "deny"

    decision, reason, _ = claude(
        isolated_home, "Write", {"file_path": "guard.yaml", "content": "protect: false\nhooks: {}\n"}
    )
    assert decision == "deny" and "guard's config" in reason, (
        "the agent may not write a config that would shadow the trusted one"
    )

    (isolated_home / "guard.yaml").write_text(
        "protect: false\nhooks: {}\n"
    )  # written by a route the analysis does not see
    decision, reason, shown = claude(isolated_home, "WebFetch", FETCH)
    assert decision == "deny" and "decided by command hook no-fetch: no fetching." in reason, (
        "the trusted .guard/guard.yaml is still what is enforced"
    )
    assert "guard.yaml would now be loaded instead of the trusted" in shown and "guard trust" in shown


def test_an_edited_include_is_not_obeyed(isolated_home: Path) -> None:
    (isolated_home / "rules.yaml").write_text(NO_FETCH)
    (isolated_home / "guard.yaml").write_text("include: [rules.yaml]\n")
    trust_config(isolated_home / "guard.yaml")
    (isolated_home / "rules.yaml").write_text("hooks: {}\n")
    decision, reason, shown = claude(isolated_home, "WebFetch", FETCH)
    assert decision == "deny" and "decided by command hook no-fetch: no fetching." in reason
    assert f"{isolated_home / 'rules.yaml'} (include) changed" in shown


@pytest.mark.slow
def test_an_edited_config_keeps_the_trusted_rules_until_the_user_accepts_the_change(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(NO_FETCH)
    trust_config(isolated_home / "guard.yaml")
    (isolated_home / "guard.yaml").write_text("hooks: {}\n")
    decision, _, shown = claude(isolated_home, "WebFetch", FETCH)
    assert (
        decision == "deny" and "(config) changed" in shown and "guard keeps enforcing the config you trusted" in shown
    )
    stderr = guard(
        ["hook"], isolated_home, json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {}})
    ).stderr
    assert "guard: warning:" in stderr and "guard trust" in stderr, "shown on stderr too"

    code, screen = user_terminal(isolated_home, "y")
    assert code == 0, screen
    assert "-      command: 'echo no fetching >&2; exit 2'" in screen and "+hooks: {}" in screen, (
        "the user is shown the diff"
    )
    assert claude(isolated_home, "WebFetch", FETCH) == ("allow", "", ""), (
        "accepted: the new config is enforced, with no warning"
    )


@pytest.mark.slow
def test_a_typo_in_a_trusted_config_keeps_guarding_with_the_trusted_rules(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(NO_FETCH)
    trust_config(isolated_home / "guard.yaml")
    (isolated_home / "guard.yaml").write_text(NO_FETCH.replace("matcher", "matchr"))
    decision, reason, shown = claude(isolated_home, "WebFetch", FETCH)
    assert decision == "deny" and "decided by command hook no-fetch: no fetching." in reason and "changed" in shown
    code, screen = user_terminal(isolated_home, None)
    assert code == 1 and "matchr" in screen and "guard trusts only a config that loads" in screen


# -- first use: a config that was never trusted --------------------------------------------------------------------


@pytest.mark.slow
def test_a_cloned_repositorys_config_runs_nothing_until_trusted(isolated_home: Path) -> None:
    marker = isolated_home / "ran"
    (isolated_home / "guard.yaml").write_text(
        f"hooks:\n  PreToolUse:\n    - command: touch {marker}\n  UserPromptSubmit:\n    - command: touch {marker}\n"
    )
    decision, reason, _ = claude(isolated_home, "Bash", {"command": "ls"})
    assert decision == "deny" and "never trusted" in reason and "guard trust" in reason
    decision, _, shown = claude(isolated_home, "", {}, event="UserPromptSubmit")
    assert decision == "allow" and "not trusted" in shown and "no rule is enforced" in shown, (
        "other events are allowed, visibly"
    )
    relaxed = claude(isolated_home, "Bash", {"command": "ls"}, GUARD_FAIL_OPEN="1")
    assert relaxed[0] == "allow" and "not trusted" in relaxed[2]
    assert not marker.exists(), "an untrusted config's command hooks never run, fail-open or not"

    code, screen = user_terminal(isolated_home, "y")
    assert (
        code == 0 and "never trusted here: review all of it" in screen and f"+    - command: touch {marker}" in screen
    )
    claude(isolated_home, "Bash", {"command": "ls"})
    assert marker.exists(), "trusted: its hooks run"


@pytest.mark.parametrize("payload", ["not json", '{"hook_event_name": "PreToolUse", "tool_name": 5}'])
def test_an_untrusted_config_blocks_a_call_it_cannot_read(isolated_home: Path, payload: str) -> None:
    """An untrusted config has no hooks to take a failure mode from: a malformed call was allowed silently (exit 0, no output)."""
    (isolated_home / "guard.yaml").write_text(NO_FETCH)
    proc = guard(["hook", "--format", "claude"], isolated_home, payload)
    said = proc.stdout + proc.stderr
    blocked = (
        proc.returncode == 2
        or json.loads(proc.stdout or "{}").get("hookSpecificOutput", {}).get("permissionDecision") == "deny"
    )
    assert blocked and "untrusted config" in said, (proc.returncode, said)


def test_a_forged_trust_record_is_no_trust(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(NO_FETCH)
    trust_config(isolated_home / "guard.yaml")
    (isolated_home / "guard.yaml").write_text("hooks: {}\n")
    store = isolated_home.parent / "home" / ".local" / "state" / "guard" / "trusted"
    for record in store.glob("*.json"):
        mac, _, body = record.read_text().partition("\n")
        data = json.loads(body)
        data["files"] = [[path, role, "0" * 64] for path, role, _ in data["files"]]
        record.write_text(mac + "\n" + json.dumps(data))  # the agent rewrites the record: the seal no longer verifies
    decision, reason, _ = claude(isolated_home, "WebFetch", FETCH)
    assert decision == "deny" and "never trusted" in reason


# -- guard trust asks the user, and nobody else ---------------------------------------------------------------------


@pytest.mark.slow
def test_guard_trust_refuses_without_a_terminal(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(NO_FETCH)
    for args in (["trust"], ["trust", "--yes"]):
        proc = guard(args, isolated_home)  # a tool call's pipes: no controlling terminal
        assert proc.returncode == 1 and "no terminal" in proc.stderr
    assert "never trusted" in claude(isolated_home, "Bash", {"command": "ls"})[1]


@pytest.mark.slow
@pytest.mark.parametrize(
    "marker", ["CLAUDECODE", "GEMINI_CLI", "CODEX_SANDBOX", "COPILOT_CLI", "CURSOR_AGENT", "AI_AGENT"]
)
def test_guard_trust_refuses_under_an_agent_client_even_at_a_terminal(isolated_home: Path, marker: str) -> None:
    (isolated_home / "guard.yaml").write_text(NO_FETCH)
    code, screen = user_terminal(isolated_home, None, **{marker: "1"})
    assert code == 1 and "needs you, not an agent" in screen and marker in screen
    assert "never trusted" in claude(isolated_home, "Bash", {"command": "ls"})[1]


@pytest.mark.slow
def test_guard_trust_keeps_the_old_trust_when_the_user_says_no(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(NO_FETCH)
    trust_config(isolated_home / "guard.yaml")
    (isolated_home / "guard.yaml").write_text("hooks: {}\n")
    code, screen = user_terminal(isolated_home, "n")
    assert code == 1 and "not trusted" in screen
    assert claude(isolated_home, "WebFetch", FETCH)[0] == "deny"
    assert user_terminal(isolated_home, None, "--yes")[0] == 0, "--yes at a terminal skips only the question"
    assert claude(isolated_home, "WebFetch", FETCH)[0] == "allow"


# -- attack 4: the scripts command hooks run ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "decision"), [("fail_closed", "deny"), ("fail_open", "allow")])
def test_a_rewritten_hook_script_is_not_run(isolated_home: Path, mode: str, decision: str) -> None:
    hooks = isolated_home / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "check.py").write_text(
        "import sys\nsys.stderr.write('no deletes')\nsys.exit(2 if 'rm ' in sys.stdin.read() else 0)\n"
    )
    (isolated_home / "guard.yaml").write_text(
        f"hooks:\n  PreToolUse:\n    - matcher: Bash\n      failure_mode: {mode}\n"
        f"      command: {sys.executable} .claude/hooks/check.py\n"
    )
    trust_config(isolated_home / "guard.yaml")
    denied, reason, _ = claude(isolated_home, "Bash", {"command": "rm -rf src"})
    assert denied == "deny" and "decided by command hook pre_tool_use[0]: no deletes." in reason

    written, reason, _ = claude(
        isolated_home, "Write", {"file_path": ".claude/hooks/check.py", "content": "import sys; sys.exit(0)\n"}
    )
    assert written == "deny" and "a script guard's hooks run" in reason

    (hooks / "check.py").write_text("import sys\nsys.exit(0)\n")  # rewritten by a route the analysis does not see
    verdict, reason, shown = claude(isolated_home, "Bash", {"command": "rm -rf src"})
    assert verdict == decision
    told = reason if decision == "deny" else shown
    assert f"{hooks / 'check.py'} changed since you trusted the config" in told and "guard trust" in told

    # swapped for a link to a file outside the project and the home, which the interpreter runs
    elsewhere = isolated_home.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "check.py").write_text("import sys\nsys.exit(0)\n")
    (hooks / "check.py").unlink()
    (hooks / "check.py").symlink_to(elsewhere / "check.py")
    verdict, reason, shown = claude(isolated_home, "Bash", {"command": "rm -rf src"})
    told = reason if decision == "deny" else shown
    assert verdict == decision and f"{elsewhere / 'check.py'} was not pinned when you trusted" in told, told


def _trust_no_deletes(home: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """``callable: policy:no_deletes`` (under ``mode``) in ``home``/guard.yaml, trusted, with ``home`` on PYTHONPATH where
    the user put the modules: the hook runs and denies ``rm -rf src``."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([SOURCE_ROOT, str(home)]))
    (home / "guard.yaml").write_text(
        f"hooks:\n  PreToolUse:\n    - matcher: Bash\n      failure_mode: {mode}\n      callable: policy:no_deletes\n"
    )
    trust_config(home / "guard.yaml")
    denied, reason, _ = claude(home, "Bash", {"command": "rm -rf src"})
    assert denied == "deny" and "no deletes" in reason, reason


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "decision"), [("fail_closed", "deny"), ("fail_open", "allow")])
def test_a_rewritten_callable_hook_module_is_not_run(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, mode: str, decision: str
) -> None:
    """``callable: policy:no_deletes`` runs policy.py inside guard: pinned by guard trust, guarded with its byte-code
    cache (which Python would run in its place), and not imported once it changed behind guard's back."""
    policy = isolated_home / "policy.py"
    policy.write_text(
        "import guard\n\ndef no_deletes(event):\n"
        "    if 'rm ' in event.tool_input.get('command', ''):\n        return guard.deny('no deletes')\n"
    )
    _trust_no_deletes(isolated_home, monkeypatch, mode)

    cache = importlib.util.cache_from_source(str(policy))
    for tool, tool_input in (
        ("Write", {"file_path": "policy.py", "content": "def no_deletes(event):\n    return None\n"}),
        ("Bash", {"command": "echo 'def no_deletes(event): pass' > policy.py"}),
        ("Write", {"file_path": cache, "content": "bytecode"}),
    ):
        written, reason, _ = claude(isolated_home, tool, tool_input)
        assert written == "deny" and "a script guard's hooks run" in reason, (tool_input, reason)

    policy.write_text("def no_deletes(event):\n    return None\n")  # rewritten by a route the analysis does not see
    verdict, reason, shown = claude(isolated_home, "Bash", {"command": "rm -rf src"})
    assert verdict == decision
    told = reason if decision == "deny" else shown
    assert f"{policy} changed since you trusted the config" in told and "guard trust" in told


POLICY = """import guard
import helpers


def no_deletes(event):
    from rules import words  # imported on the first call, in the worker thread a sync hook runs in
    if any(word in event.tool_input.get("command", "") for word in words()):
        return helpers.verdict(event)
"""
HELPERS = "import guard\n\ndef verdict(event):\n    return guard.deny('no deletes')\n"
RULES = "def words():\n    return ['rm ']\n"
#: What the agent would have a hook module run: leaves a mark, and lets every call through.
PLANTED = "import pathlib\npathlib.Path({mark!r}).write_text('ran')\n\ndef verdict(event):\n    return None\n\ndef words():\n    return []\n"


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "decision"), [("fail_closed", "deny"), ("fail_open", "allow")])
def test_the_modules_a_callable_hook_imports_run_only_as_trusted(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, mode: str, decision: str
) -> None:
    """policy.py imports helpers.py at the top and rules.py inside its function: guard trust pins both, self-protection
    refuses the agent's writes to them, and a rewritten one, a planted byte-code cache or a module no import statement
    names never runs inside guard (the mark stays absent) while the hook fails under its failure_mode."""
    files = {"policy.py": POLICY, "helpers.py": HELPERS, "rules.py": RULES}
    for name, text in files.items():
        (isolated_home / name).write_text(text)
    _trust_no_deletes(isolated_home, monkeypatch, mode)

    for name in ("helpers.py", "rules.py"):
        written, reason, _ = claude(isolated_home, "Write", {"file_path": name, "content": "def words(): return []\n"})
        assert written == "deny" and "a script guard's hooks run" in reason, (name, reason)

    mark = isolated_home / "ran"
    planted = PLANTED.format(mark=str(mark))

    def refused(name: str, why: str) -> None:
        verdict, reason, shown = claude(isolated_home, "Bash", {"command": "rm -rf src"})
        told = reason if decision == "deny" else shown
        assert verdict == decision and f"{isolated_home / name} {why} you trusted the config" in told, told
        assert "guard trust" in told and not mark.exists()

    for name in ("helpers.py", "rules.py"):  # rewritten by a route the analysis does not see
        (isolated_home / name).write_text(planted)
        refused(name, "changed since")
        (isolated_home / name).write_text(files[name])

    # a pinned module swapped for a link to a file outside the project and the home: Python runs what it leads to
    elsewhere = isolated_home.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "helpers.py").write_text(planted)
    (isolated_home / "helpers.py").unlink()
    (isolated_home / "helpers.py").symlink_to(elsewhere / "helpers.py")
    refused("helpers.py", f"is a link: {elsewhere / 'helpers.py'} was not pinned when")
    (isolated_home / "helpers.py").unlink()
    (isolated_home / "helpers.py").write_text(HELPERS)

    # byte-code Python would run in the pinned source's place: it matches the source's size and time stamp
    helpers = isolated_home / "helpers.py"
    stat = helpers.stat()
    code = compile(planted, str(helpers), "exec")
    cache = Path(importlib.util.cache_from_source(str(helpers)))
    cache.parent.mkdir(exist_ok=True)
    cache.write_bytes(importlib._bootstrap_external._code_to_timestamp_pyc(code, int(stat.st_mtime), stat.st_size))  # type: ignore[attr-defined]
    denied, reason, _ = claude(isolated_home, "Bash", {"command": "rm -rf src"})
    assert denied == "deny" and "no deletes" in reason and not mark.exists(), reason

    # a module named only at run time: no import statement shows it to guard trust
    (isolated_home / "extra.py").write_text(planted)
    (isolated_home / "policy.py").write_text(
        POLICY.replace("import helpers\n", "helpers = __import__(''.join(('ex', 'tra')))\n")
    )
    trust_config(isolated_home / "guard.yaml")  # the user reviews and trusts the new policy.py
    refused("extra.py", "was not pinned when")  # there, but no import statement named it


@pytest.mark.slow
def test_a_module_a_callable_hook_imports_by_a_constant_name_is_pinned(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``importlib.import_module("rules")`` (or ``__import__``) with the name written out is an import guard trust
    reads: rules.py is pinned, the hook runs, and a rewritten rules.py is refused as any pinned file is."""
    (isolated_home / "policy.py").write_text(
        "import importlib\nimport guard\n\ndef no_deletes(event):\n"
        "    rules = importlib.import_module('rules')\n"
        "    if any(word in event.tool_input.get('command', '') for word in rules.words()):\n"
        "        return guard.deny('no deletes')\n"
    )
    (isolated_home / "rules.py").write_text(RULES)
    _trust_no_deletes(isolated_home, monkeypatch, "fail_closed")
    written, reason, _ = claude(
        isolated_home, "Write", {"file_path": "rules.py", "content": "def words(): return []\n"}
    )
    assert written == "deny" and "a script guard's hooks run" in reason, reason
    (isolated_home / "rules.py").write_text("def words():\n    return []\n")
    verdict, reason, _ = claude(isolated_home, "Bash", {"command": "rm -rf src"})
    assert verdict == "deny" and f"{isolated_home / 'rules.py'} changed since you trusted the config" in reason, reason


@pytest.mark.slow
def test_the_imports_of_a_long_callable_hook_module_are_pinned(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module with more than 256 names or constants: its byte-code spells their indexes over two instructions, and
    guard trust still reads every import (helpers.py at the top, rules.py in the function) and pins it."""
    preamble = "".join(f"limit_{n} = {n}.5\n" for n in range(300))
    files = {"policy.py": preamble + POLICY, "helpers.py": HELPERS, "rules.py": RULES}
    for name, text in files.items():
        (isolated_home / name).write_text(text)
    _trust_no_deletes(isolated_home, monkeypatch, "fail_closed")


#: Optional modules guard's dependencies import when they are there (httpx: brotli, brotlicffi; socksio): an
#: interpreter without them looks for them on every folder of ``sys.path``.
OPTIONAL_MODULES = ("brotli", "brotlicffi", "socksio")


@pytest.mark.slow
@pytest.mark.stub(default=Reply.verdict("allow", "not a delete", confidence=0.95))
def test_a_module_the_agent_leaves_on_pythonpath_never_runs_inside_guard(isolated_home: Path, stub: StubServer) -> None:
    """``PYTHONPATH`` names the folder the user keeps their callable hooks in, where the agent writes too; guard hook
    runs as ``guard install`` writes it (``python -I``: only a hook's code reads ``PYTHONPATH``). A model call loads the
    model client, whose dependencies import optional modules they may lack: one the agent left in that folder is not
    imported (it was, and ran inside guard, while the CLI put ``PYTHONPATH`` at the end of ``sys.path``)."""
    missing = [name for name in OPTIONAL_MODULES if importlib.util.find_spec(name) is None]
    if not missing:
        pytest.skip(f"this interpreter has every optional module ({', '.join(OPTIONAL_MODULES)}): none is looked for")
    mark = isolated_home / "ran"
    for name in missing:
        (isolated_home / f"{name}.py").write_text(f"import pathlib\npathlib.Path({str(mark)!r}).write_text({name!r})\n")
    (isolated_home / "guard.yaml").write_text(guide_config(stub))
    trust_config(isolated_home / "guard.yaml")
    event = {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "cwd": str(isolated_home),
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /tmp/guard-test-nothing-there"},
    }
    entry = f"import sys; sys.path.insert(0, {SOURCE_ROOT!r}); from guard.cli.main import main; sys.exit(main())"
    proc = subprocess.run(
        [sys.executable, "-I", "-c", entry, "hook", "--format", "claude"],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        cwd=isolated_home,
        env={**os.environ, "PYTHONPATH": str(isolated_home), "GUARD_TRANSPORT": "litellm"},  # as anthropic/… models go
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert stub.calls >= 1, proc.stdout[:2000]  # the model was asked through LiteLLM: it and httpx were loaded
    assert not mark.exists(), f"guard imported the agent's {mark.read_text()}.py"


# -- attack 3: client settings in the project when the config is kept elsewhere ------------------------------------

CLIENT_FILES = [
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".gemini/settings.json",
    ".codex/hooks.json",
    ".github/hooks/guard.json",
    ".cursor/hooks.json",
    ".devin/hooks.v1.json",
]


@pytest.mark.slow
@pytest.mark.parametrize("name", CLIENT_FILES)
def test_client_settings_in_the_project_are_protected_when_the_config_lives_elsewhere(
    isolated_home: Path, tmp_path: Path, name: str
) -> None:
    elsewhere = tmp_path / "configs" / "team.yaml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(NO_FETCH)
    trust_config(elsewhere)
    project = isolated_home / "app"
    project.mkdir()
    decision, reason, _ = claude(
        project, "Write", {"file_path": name, "content": '{"disableAllHooks": true}'}, GUARD_CONFIG=str(elsewhere)
    )
    assert decision == "deny" and "the agent client's hook settings" in reason


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        ".copilot/hooks/guard.json",
        ".claude/settings.json",
        ".gemini/settings.json",
        ".codex/config.toml",
        ".cursor/hooks.json",
    ],
)
def test_client_settings_in_the_users_scope_are_protected(isolated_home: Path, name: str) -> None:
    (isolated_home / "guard.yaml").write_text(NO_FETCH)
    trust_config(isolated_home / "guard.yaml")
    decision, reason, _ = claude(isolated_home, "Write", {"file_path": f"~/{name}", "content": "{}"})
    assert decision == "deny" and "the agent client's hook settings" in reason


def test_gemini_and_copilot_writes_to_the_projects_hook_settings_are_denied(
    isolated_home: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "team.yaml"
    elsewhere.write_text(NO_FETCH)
    trust_config(elsewhere)
    project = isolated_home / "app"
    project.mkdir()
    env = {"GUARD_CONFIG": str(elsewhere)}
    gemini = {
        "hook_event_name": "BeforeTool",
        "cwd": str(project),
        "tool_name": "write_file",
        "tool_input": {"file_path": ".gemini/settings.json", "content": "{}"},
    }
    out = json.loads(guard(["hook", "--format", "gemini"], project, json.dumps(gemini), **env).stdout)
    assert out["decision"] == "deny" and "hook settings" in out["reason"]
    copilot = {
        "toolName": "create",
        "cwd": str(project),
        "toolArgs": json.dumps({"path": ".github/hooks/hooks.json", "file_text": "{}"}),
    }
    out = json.loads(guard(["hook", "--format", "copilot"], project, json.dumps(copilot), **env).stdout)
    assert out["permissionDecision"] == "deny" and "hook settings" in out["permissionDecisionReason"]


def test_the_trusted_store_is_protected(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(NO_FETCH)
    trust_config(isolated_home / "guard.yaml")
    decision, reason, _ = claude(isolated_home, "Bash", {"command": "rm -rf ~/.local/state/guard/trusted"})
    assert decision == "deny" and "guard's" in reason


# -- the user's own tools say what differs -------------------------------------------------------------------------


@pytest.mark.slow
def test_check_and_doctor_say_when_the_disk_differs_from_what_guard_hook_enforces(isolated_home: Path) -> None:
    (isolated_home / "guard.yaml").write_text(NO_FETCH)
    proc = guard(["check", "--tool", "WebFetch", "--input", json.dumps(FETCH)], isolated_home)
    assert proc.returncode == 1 and "note: this config is not trusted" in proc.stderr, (
        "guard check judges the disk, and says so"
    )
    doctor = guard(["doctor", "--model-timeout", "1"], isolated_home)
    assert "never trusted" in doctor.stdout and "guard trust" in doctor.stdout
    trust_config(isolated_home / "guard.yaml")
    (isolated_home / "guard.yaml").write_text("hooks: {}\n")
    proc = guard(["check", "--tool", "WebFetch", "--input", json.dumps(FETCH)], isolated_home)
    assert proc.returncode == 0 and "(config) changed" in proc.stderr
    assert "(config) changed" in guard(["doctor", "--model-timeout", "1"], isolated_home).stdout


@pytest.mark.slow
def test_guard_install_trusts_the_config_it_is_installed_over_once_and_only_at_a_terminal(isolated_home: Path) -> None:
    """At your terminal, installing is adopting the config you wrote; from a script or a tool call nobody saw it, so it stays untrusted."""
    (isolated_home / "guard.yaml").write_text(NO_FETCH)
    proc = guard(["install", "claude", "--no-sandbox"], isolated_home)  # no terminal: a script, CI, an agent's pipes
    assert proc.returncode == 0 and "is not trusted" in proc.stderr and "guard trust" in proc.stderr, proc.stderr
    decision, reason, _ = claude(isolated_home, "WebFetch", FETCH)
    assert decision == "deny" and "never trusted" in reason, reason  # blocked until trusted, not enforced unseen
    code, shown = at_terminal(
        [sys.executable, "-m", "guard.cli.main", "install", "claude", "--no-sandbox"],
        answer=None,
        cwd=isolated_home,
        env={**os.environ, "PYTHONPATH": TREE},
    )
    assert code == 0 and "trusted" in shown and "is not trusted" not in shown, shown
    assert claude(isolated_home, "WebFetch", FETCH)[0] == "deny"
    (isolated_home / "guard.yaml").write_text("hooks: {}\n")
    proc = guard(["install", "claude", "--no-sandbox", "--timeout", "40"], isolated_home)
    assert proc.returncode == 0 and "differs from the version you trusted" in proc.stderr, (
        "a changed config needs guard trust"
    )
    assert claude(isolated_home, "WebFetch", FETCH)[0] == "deny"
    refused = guard(["install", "claude"], isolated_home, CLAUDECODE="1")
    assert refused.returncode == 1 and "needs you, not an agent" in refused.stderr
