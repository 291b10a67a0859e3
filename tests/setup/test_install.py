"""`guard install`: merges into a client's settings, idempotent, uninstalls only its own entry."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.processes import run_guard

from guard.core.errors import ConfigError
from guard.setup.install import default_command, install

CLAUDE_HANDLER = {"type": "command", "command": default_command("claude"), "timeout": 30, "onFailure": "block"}


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    return project


def _write(path: Path, data: object) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path.read_bytes()


def test_claude_project_install_writes_guard_hook_for_the_default_events(tmp_path: Path) -> None:
    project = _project(tmp_path)
    result = install("claude", project_dir=project, home=tmp_path / "home")
    path = project / ".claude" / "settings.json"
    assert result.path == path and result.changed
    hooks = json.loads(path.read_text())["hooks"]
    assert list(hooks) == ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart", "PermissionDenied"]
    for groups in hooks.values():
        assert groups == [{"matcher": "*", "hooks": [CLAUDE_HANDLER]}]


def test_install_keeps_other_keys_and_other_hooks(tmp_path: Path) -> None:
    project = _project(tmp_path)
    theirs = {"type": "command", "command": "./scripts/lint.sh", "timeout": 5}
    settings = {
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [theirs]}],
            "SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}],
        },
        "env": {"FOO": "1"},
    }
    _write(project / ".claude/settings.json", settings)
    install("claude", project_dir=project, home=tmp_path)
    data = json.loads((project / ".claude/settings.json").read_text())
    assert data["permissions"] == settings["permissions"] and data["env"] == {"FOO": "1"}
    assert list(data) == ["permissions", "hooks", "env"]  # key order kept
    assert data["hooks"]["PreToolUse"] == [
        {"matcher": "Bash", "hooks": [theirs]},
        {"matcher": "*", "hooks": [CLAUDE_HANDLER]},
    ]
    assert data["hooks"]["SessionStart"] == [
        *settings["hooks"]["SessionStart"],
        {"matcher": "*", "hooks": [CLAUDE_HANDLER]},
    ]


def test_installing_twice_leaves_the_file_byte_identical(tmp_path: Path) -> None:
    project = _project(tmp_path)
    install("claude", project_dir=project, home=tmp_path)
    path = project / ".claude/settings.json"
    first = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    again = install("claude", project_dir=project, home=tmp_path)
    assert not again.changed
    assert path.read_bytes() == first and path.stat().st_mtime_ns == mtime


def test_uninstall_restores_the_file_exactly(tmp_path: Path) -> None:
    project = _project(tmp_path)
    path = project / ".claude/settings.json"
    original = _write(
        path, {"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}
    )
    install("claude", project_dir=project, home=tmp_path)
    assert path.read_bytes() != original
    result = install("claude", project_dir=project, home=tmp_path, uninstall=True)
    assert result.changed and result.events == [
        "PreToolUse",
        "PostToolUse",
        "UserPromptSubmit",
        "Stop",
        "SessionStart",
        "PermissionDenied",
    ]
    assert path.read_bytes() == original


def test_uninstall_removes_only_guard_from_a_shared_group(tmp_path: Path) -> None:
    project = _project(tmp_path)
    path = project / ".claude/settings.json"
    theirs = {"type": "command", "command": "./audit.sh"}
    _write(path, {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [theirs, CLAUDE_HANDLER]}]}})
    install("claude", project_dir=project, home=tmp_path, uninstall=True)
    assert json.loads(path.read_text()) == {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [theirs]}]}}


def test_uninstall_when_not_installed_changes_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path)
    path = project / ".claude/settings.json"
    original = _write(
        path, {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "guard hook --format devin"}]}]}}
    )
    assert not install("claude", project_dir=project, home=tmp_path, uninstall=True).changed
    assert path.read_bytes() == original


def test_a_changed_timeout_updates_guard_entry_in_place(tmp_path: Path) -> None:
    project = _project(tmp_path)
    install("claude", project_dir=project, home=tmp_path, events=["PreToolUse"])
    install("claude", project_dir=project, home=tmp_path, events=["PreToolUse"], timeout_s=60)
    groups = json.loads((project / ".claude/settings.json").read_text())["hooks"]["PreToolUse"]
    assert groups == [
        {"matcher": "*", "hooks": [{**CLAUDE_HANDLER, "command": default_command("claude", 60), "timeout": 60}]}
    ]
    assert groups[0]["hooks"][0]["command"].endswith(" hook --format claude --deadline 60")


def test_the_file_keeps_its_own_indentation(tmp_path: Path) -> None:
    project = _project(tmp_path)
    path = project / ".claude/settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"model": "opus"}, indent=4) + "\n")
    install("claude", project_dir=project, home=tmp_path)
    assert path.read_text().startswith('{\n    "model": "opus",\n    "hooks": {\n        "PreToolUse"')


@pytest.mark.parametrize(
    ("content", "key"),
    [
        ('{"hooks": {"PreToolUse": [ }', None),
        ('["not", "an", "object"]', None),
        ('{"hooks": ["PreToolUse"]}', "hooks"),
        ('{"hooks": {"PreToolUse": {"matcher": "*"}}}', "hooks.PreToolUse"),
        ('{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": "guard"}]}}', "hooks.PreToolUse[0]"),
    ],
)
def test_malformed_settings_are_named_and_left_untouched(tmp_path: Path, content: str, key: str | None) -> None:
    project = _project(tmp_path)
    path = project / ".claude/settings.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(ConfigError) as info:
        install("claude", project_dir=project, home=tmp_path)
    assert str(path) in str(info.value) and "nothing was written" in str(info.value)
    if key:
        assert info.value.key == key
    assert path.read_text() == content
    assert [p.name for p in path.parent.iterdir()] == ["settings.json"]  # no temp file left behind


def test_invalid_json_error_gives_line_and_column(tmp_path: Path) -> None:
    project = _project(tmp_path)
    path = project / ".claude/settings.json"
    path.parent.mkdir()
    path.write_text('{\n  "hooks": {,\n}\n')
    with pytest.raises(ConfigError, match="line 2 column 13"):
        install("claude", project_dir=project, home=tmp_path)


def test_claude_user_scope_uses_home_or_claude_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert install("claude", scope="user", project_dir=tmp_path, home=home).path == home / ".claude/settings.json"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    path = install("claude", scope="user", project_dir=tmp_path, home=home).path
    assert path == tmp_path / "cfg" / "settings.json" and path.is_file()


def test_gemini_uses_its_event_names_and_millisecond_timeouts(tmp_path: Path) -> None:
    project = _project(tmp_path)
    install("gemini", project_dir=project, home=tmp_path)
    hooks = json.loads((project / ".gemini/settings.json").read_text())["hooks"]
    assert list(hooks) == ["BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "SessionStart"]
    assert hooks["BeforeTool"] == [
        {"hooks": [{"type": "command", "command": default_command("gemini"), "timeout": 30000, "name": "guard"}]}
    ]


def test_devin_project_file_is_a_bare_hooks_mapping_and_user_file_has_a_hooks_key(tmp_path: Path) -> None:
    project = _project(tmp_path)
    home = tmp_path / "home"
    install("devin", project_dir=project, home=home, events=["PreToolUse"])
    handler = {"type": "command", "command": default_command("devin"), "timeout": 30}
    assert json.loads((project / ".devin/hooks.v1.json").read_text()) == {"PreToolUse": [{"hooks": [handler]}]}
    user = home / ".config/devin/config.json"
    _write(user, {"agent": {"model": "swe-1-6-fast"}})
    install("devin", scope="user", project_dir=project, home=home, events=["PreToolUse"])
    assert json.loads(user.read_text()) == {
        "agent": {"model": "swe-1-6-fast"},
        "hooks": {"PreToolUse": [{"hooks": [handler]}]},
    }
    install("devin", project_dir=project, home=home, events=["PreToolUse"], uninstall=True)
    assert json.loads((project / ".devin/hooks.v1.json").read_text()) == {}


def test_codex_writes_hooks_json_and_honours_codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path)
    install("codex", project_dir=project, home=tmp_path)
    hooks = json.loads((project / ".codex/hooks.json").read_text())["hooks"]
    assert hooks["PreToolUse"] == [{"hooks": [{"type": "command", "command": default_command("codex"), "timeout": 30}]}]
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    assert install("codex", scope="user", project_dir=project, home=tmp_path).path == tmp_path / "codex-home/hooks.json"


def test_events_accept_any_alias_and_refuse_what_the_client_lacks(tmp_path: Path) -> None:
    project = _project(tmp_path)
    result = install("gemini", project_dir=project, home=tmp_path, events=["pre_tool_use", "UserPromptSubmit"])
    assert result.events == ["BeforeTool", "BeforeAgent"]
    with pytest.raises(ConfigError, match="codex has no hook event for 'SubagentStop'"):
        install("codex", project_dir=project, home=tmp_path, events=["SubagentStop"])
    with pytest.raises(ConfigError, match="unknown client"):
        install("windsurf", project_dir=project, home=tmp_path)


def test_a_custom_command_is_its_own_entry(tmp_path: Path) -> None:
    project = _project(tmp_path)
    install("claude", project_dir=project, home=tmp_path, events=["Stop"])
    custom = "guard hook --format claude --config ops.yaml"
    install("claude", project_dir=project, home=tmp_path, events=["Stop"], command=custom)
    install("claude", project_dir=project, home=tmp_path, events=["Stop"], uninstall=True)
    groups = json.loads((project / ".claude/settings.json").read_text())["hooks"]["Stop"]
    assert [h["command"] for g in groups for h in g["hooks"]] == [custom]


def test_guard_does_not_load_its_own_installed_entry_as_a_hook(tmp_path: Path) -> None:
    """guard reading .claude/settings.json must skip the entry that runs guard itself (no recursion)."""
    from guard.config.parse import parse_config

    project = _project(tmp_path)
    path = _write(
        project / ".claude/settings.json",
        {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}]}},
    )
    assert path
    install("claude", project_dir=project, home=tmp_path)
    specs = parse_config(project / ".claude/settings.json").specs
    assert [s.options["command"] for s in specs] == ["./check.sh"]


# --- the command line ------------------------------------------------------------------------


def _cli(argv: list[str]) -> int:
    from guard.cli import install as install_cli

    parser = argparse.ArgumentParser(prog="guard")
    install_cli.register(parser.add_subparsers())
    args = parser.parse_args(["install", *argv])
    return args.func(args)


@pytest.mark.usefixtures("sandbox_tools")  # a plain guard install claude configures Claude Code's sandbox
def test_cli_installs_in_the_current_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _cli(["claude", "--events", "PreToolUse"]) == 0
    out = capsys.readouterr().out
    assert "installed guard in" in out and str(tmp_path / ".claude/settings.json") in out
    assert _cli(["claude", "--events", "PreToolUse"]) == 0
    assert "already installed" in capsys.readouterr().out


def test_cli_dry_run_prints_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _cli(["codex", "--dry-run"]) == 0
    assert json.loads(capsys.readouterr().out)["hooks"]["Stop"]
    assert not (tmp_path / ".codex").exists()


def test_cli_reports_a_malformed_file_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini/settings.json").write_text("{oops")
    assert _cli(["gemini"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("guard install: error: ") and ".gemini/settings.json" in err and "Traceback" not in err
    assert (tmp_path / ".gemini/settings.json").read_text() == "{oops"


def test_cli_warns_when_the_hook_command_cannot_be_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert _cli(["claude", "--no-sandbox", "--command", "guard hook --format claude"]) == 0
    assert "'guard' is not on PATH" in capsys.readouterr().err


def test_reinstalling_from_another_venv_replaces_guards_entry_and_keeps_other_formats(tmp_path: Path) -> None:
    project = _project(tmp_path)
    path = project / ".claude/settings.json"
    old_bare = {"type": "command", "command": "guard hook --format claude", "timeout": 30}
    old_venv = {"type": "command", "command": "'/old venv/bin/guard' hook --format claude --deadline 10", "timeout": 10}
    devin = {"type": "command", "command": "guard hook --format devin"}
    _write(
        path, {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [old_bare]}], "Stop": [{"hooks": [old_venv, devin]}]}}
    )
    install("claude", project_dir=project, home=tmp_path, events=["PreToolUse", "Stop"])
    hooks = json.loads(path.read_text())["hooks"]
    assert hooks["PreToolUse"] == [{"matcher": "*", "hooks": [CLAUDE_HANDLER]}]
    assert hooks["Stop"] == [{"hooks": [CLAUDE_HANDLER, devin]}]
    install("claude", project_dir=project, home=tmp_path, events=["PreToolUse", "Stop"], uninstall=True)
    assert json.loads(path.read_text())["hooks"] == {"Stop": [{"hooks": [devin]}]}


@pytest.mark.parametrize(
    "command",
    [
        "guard hook",
        "/v/bin/guard hook --format claude --deadline 30",
        "'/my venv/bin/guard' hook --format claude",
        "/usr/bin/python3 -P -m guard.cli.main hook --format codex",
        "cd /x && guard hook",
    ],
)
def test_every_spelling_of_guards_own_entry_is_skipped_when_loading_settings(tmp_path: Path, command: str) -> None:
    from guard.config.parse import parse_config

    path = tmp_path / ".claude/settings.json"
    _write(
        path,
        {
            "hooks": {
                "PreToolUse": [
                    {
                        "hooks": [
                            {"type": "command", "command": command},
                            {"type": "command", "command": "./guard-hook-lint.sh hook"},
                        ]
                    }
                ]
            }
        },
    )
    assert [s.options["command"] for s in parse_config(path).specs] == ["./guard-hook-lint.sh hook"]


# --- the installed command, run as the client runs it ----------------------------------------

REPO = Path(__file__).resolve().parents[2]
DENY_CONFIG = "hooks:\n  PreToolUse:\n    - matcher: Bash\n      command: \"echo 'no pushes here' >&2; exit 2\"\n"
PUSH = {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git push"}}


def _as_the_client(command: str, cwd: Path, path: str, **env: str) -> subprocess.CompletedProcess[str]:
    """/bin/sh -c COMMAND, with a PATH that lacks guard's venv (a client started from a desktop launcher)."""
    environ = {"PATH": path, "HOME": os.environ["HOME"], "PYTHONPATH": str(REPO), **env}
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(PUSH),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environ,
        timeout=60,
    )


def _personal(project: Path) -> str:
    """This user's hook program: ``GUARD_HOOK`` in the project's local settings, which Claude Code passes to every hook."""
    return str(json.loads((project / ".claude/settings.local.json").read_text())["env"]["GUARD_HOOK"])


@pytest.mark.slow
@pytest.mark.parametrize("client", ["guard", "auto"])
@pytest.mark.usefixtures("sandbox_tools")  # a plain guard install claude configures Claude Code's sandbox
def test_installed_command_is_absolute_and_runs_without_the_venv_on_path(tmp_path: Path, client: str) -> None:
    """Both hook programs (``guard hook``, and the curl client ``auto`` picks here, whose fallback is ``guard hook``) name guard absolutely."""
    project = _project(tmp_path)
    (project / "guard.yaml").write_text(DENY_CONFIG)
    proc = run_guard(["install", "claude", "--events", "PreToolUse", "--timeout", "45", "--client", client], project)
    assert proc.returncode == 0, proc.stderr
    trust_config(project / "guard.yaml")  # the user's guard trust (install had no terminal to show the config on)
    handler = json.loads((project / ".claude/settings.json").read_text())["hooks"]["PreToolUse"][0]["hooks"][0]
    assert handler["timeout"] == 45 and handler["onFailure"] == "block"
    assert str(tmp_path) not in json.dumps(handler) and sys.prefix not in json.dumps(
        handler
    )  # the shared file: nobody's paths
    personal = _personal(project)
    argv = shlex.split(personal)
    assert os.path.isabs(argv[0])
    if client == "guard":
        assert argv[-3:] == ["hook", "--deadline", "45"]
    else:  # no service runs here: the script's curl finds no socket, and its fallback decides
        fallback = argv[argv.index("hook") - 4 : argv.index("hook")]
        assert argv[1].endswith("curl-client.sh") and fallback == shlex.split(default_command("claude"))[:4]

    bare_path = "/usr/bin:/bin"
    assert shutil.which("guard", path=bare_path) is None  # the client's PATH really lacks guard
    assert _as_the_client("guard hook --format claude", project, bare_path).returncode == 127  # what a bare entry did
    ran = _as_the_client(handler["command"], tmp_path, bare_path, GUARD_HOOK=personal, CLAUDE_PROJECT_DIR=str(project))
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "no pushes here" in out["permissionDecisionReason"]


@pytest.mark.slow
@pytest.mark.usefixtures("sandbox_tools")  # a plain guard install claude configures Claude Code's sandbox
def test_install_refuses_a_config_that_does_not_load_unless_forced(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "guard.yaml").write_text("hoks:\n  PreToolUse: []\n")
    refused = run_guard(["install", "claude"], project)
    assert refused.returncode == 1
    assert "guard.yaml" in refused.stderr and "hoks" in refused.stderr and "--force" in refused.stderr
    assert "Traceback" not in refused.stderr and not (project / ".claude").exists()

    forced = run_guard(["install", "claude", "--force"], project)
    assert forced.returncode == 0 and "WARNING (--force)" in forced.stderr and "hoks" in forced.stderr
    assert (project / ".claude/settings.json").is_file()


@pytest.mark.usefixtures("sandbox_tools")  # a plain guard install claude configures Claude Code's sandbox
def test_install_warns_when_a_hook_outlasts_the_clients_timeout(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "guard.yaml").write_text("hooks:\n  PreToolUse:\n    - command: 'true'\n      timeout: 60\n")
    proc = run_guard(["install", "claude"], project)
    assert proc.returncode == 0 and "--timeout 65" in proc.stderr


def test_a_path_with_spaces_is_quoted_for_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    import guard.setup.install as install_module
    from guard.config.own_hook import parse_guard_hook

    monkeypatch.setattr(install_module, "guard_program", lambda: ["/Users/me/My Projects/.venv/bin/guard"])
    command = install_module.default_command("claude", 45)
    assert shlex.split(command) == [
        "/Users/me/My Projects/.venv/bin/guard",
        "hook",
        "--format",
        "claude",
        "--deadline",
        "45",
    ]
    hook = parse_guard_hook(command)
    assert (
        hook is not None
        and hook.program == ("/Users/me/My Projects/.venv/bin/guard",)
        and hook.identity == ("claude", "")
    )


def test_the_shared_launcher_is_recognised_as_guards_own_entry_and_never_run_as_a_config_hook(tmp_path: Path) -> None:
    """Reinstalling replaces it (and an old direct entry) in place, and a settings.json read as a config skips it (it is what runs)."""
    from guard.adapters.installers import CLAUDE
    from guard.config.loading import load_config
    from guard.config.own_hook import parse_guard_hook
    from guard.setup.team_hook import launcher

    commands = {event: launcher(event, 30) for event in CLAUDE.events}
    hook = parse_guard_hook(commands["PreToolUse"])
    assert hook is not None and hook.program == ("$GUARD_HOOK",) and hook.identity == ("claude", "")
    project = _project(tmp_path)
    path = project / ".claude/settings.json"
    theirs = {"type": "command", "command": "./lint.sh"}
    _write(
        path,
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "*", "hooks": [{"type": "command", "command": default_command("claude")}, theirs]}
                ]
            }
        },
    )
    install(
        "claude",
        project_dir=project,
        home=tmp_path,
        events=["PreToolUse"],
        command=commands["PreToolUse"],
        event_commands=commands,
    )
    [group] = json.loads(path.read_text())["hooks"]["PreToolUse"]
    assert [h["command"] for h in group["hooks"]] == [commands["PreToolUse"], "./lint.sh"]
    loaded = load_config(str(path), use_snapshot=False)
    assert [spec.options["command"] for spec in loaded.specs if spec.kind == "command"] == ["./lint.sh"]


def test_the_installed_interpreter_runs_isolated_so_nothing_the_agent_can_write_runs_in_the_hook(
    tmp_path: Path,
) -> None:
    """`python -I -m guard.cli.main`: the client's cwd (the agent's project), PYTHONPATH and the user's
    site-packages stay off guard's sys.path. Planted in each: a `guard` package, a module named like the standard
    library's `json`, a `.pth` file Python runs at start-up. PYTHONPATH's absolute entries come last, so the user's
    callable hook there still imports."""
    command = default_command("claude")
    assert shlex.split(command)[:4] == [os.path.abspath(sys.executable), "-I", "-m", "guard.cli.main"]

    project = _project(tmp_path)
    (project / "guard.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      callable: push_policy:no_push\n"
    )
    trust_config(project / "guard.yaml")
    planted = project / "guard" / "cli"
    planted.mkdir(parents=True)
    for init in (project / "guard" / "__init__.py", planted / "__init__.py"):
        init.write_text("")
    (planted / "main.py").write_text("import json, pathlib; pathlib.Path('package-ran').touch()\n")
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "json.py").write_text("import pathlib; pathlib.Path('json-ran').touch()\n")
    (shadow / "push_policy.py").write_text("import guard\n\ndef no_push(event):\n    return guard.deny('no pushes')\n")
    reads, user_site = subprocess.run(
        [sys.executable, "-c", "import site; print(bool(site.ENABLE_USER_SITE), site.getusersitepackages())"],
        capture_output=True,
        text=True,
    ).stdout.split()
    assert user_site.startswith(os.environ["HOME"])
    Path(user_site).mkdir(parents=True)
    (Path(user_site) / "planted.pth").write_text("import pathlib; pathlib.Path('pth-ran').touch()\n")
    markers = [project / name for name in ("package-ran", "json-ran", "pth-ran")]
    runs_without = [True, True, reads == "True"]  # a venv's Python never reads the user's site-packages

    ran = _as_the_client(command, project, "/usr/bin:/bin", PYTHONPATH=str(shadow))
    assert [marker.exists() for marker in markers] == [False, False, False], ran.stderr
    said = json.loads(ran.stdout)["hookSpecificOutput"]
    assert said["permissionDecision"] == "deny" and "no pushes" in said["permissionDecisionReason"], ran.stderr
    _as_the_client(command.replace(" -I ", " "), project, "/usr/bin:/bin", PYTHONPATH=str(shadow))
    assert [marker.exists() for marker in markers] == runs_without  # what the command without -I runs
