"""Under the real Codex CLI, the permission profile ``guard install codex`` writes holds where guard's own analysis cannot see.

As for Claude Code (``test_claude_sandbox.py``): the command is decoded and run by
the shell, so only Codex's sandbox (its bubblewrap on Linux) can refuse it. A
write into guard's state folder and into guard.yaml fails, reading guard's secret
fails, a write elsewhere in the project works.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from fixtures.sandbox_strays import strays_removed

from guard.testing.agent_script import final_text, tool_use

from .conftest import AgentProject
from .test_claude_sandbox import hidden

pytestmark = [pytest.mark.codex, pytest.mark.slow]

CONFIG = 'hooks:\n  PreToolUse:\n    - id: anything\n      command: "cat > /dev/null"\n'


def test_a_shell_write_into_guards_store_fails_and_a_write_in_the_project_works(codex_project: AgentProject) -> None:
    project = codex_project
    secret_file = Path(os.environ["XDG_CONFIG_HOME"]) / "guard" / "secret"
    secret_file.parent.mkdir(parents=True, exist_ok=True)
    secret = "e2e-secret-fedcba9876543210"
    secret_file.write_text(secret + "\n")
    state = project.home / ".local" / "state" / "guard"
    project.configure(CONFIG)
    yaml_before = (project.dir / "guard.yaml").read_text()
    script = (
        f"touch {state}/planted; echo state=$?; cat {secret_file}; echo secret=$?; "
        "echo 'protect: false' >> guard.yaml; echo config=$?; touch made-in-project; echo project=$?"
    )

    _, agent = project.run(tool_use("exec_command", {"cmd": hidden(script)}), final_text("ok"))

    shown = str(agent.agent_requests[1].tool_outputs())
    assert "project=0" in shown and (project.dir / "made-in-project").exists(), shown
    assert "state=0" not in shown and not (state / "planted").exists(), shown
    assert "secret=0" not in shown and secret not in shown, shown
    assert "config=0" not in shown and (project.dir / "guard.yaml").read_text() == yaml_before, shown


def test_a_protected_file_below_the_folder_a_session_starts_in_stays_read_only(codex_project: AgentProject) -> None:
    """Codex joins the profile's ``:project_roots`` keys to the folder a session starts in: started in ``src/``, the
    key ``src/policy.py`` named ``src/src/policy.py``, and the module guard's hook imports was writable (``codex
    sandbox -C src -P guard`` runs a command as a session started there does). Its absolute path holds there too."""
    project = codex_project
    subprocess.run(
        ["git", "init", "-q", str(project.dir)], check=True
    )  # the project's root, above the session's folder
    source = project.dir / "src"
    (source / "src").mkdir(parents=True)  # a package inside a package: the joined key's folder exists, so Codex starts
    (source / "__init__.py").write_text("")
    (source / "policy.py").write_text("def check(event):\n    return None\n")
    project.configure("hooks:\n  PreToolUse:\n    - callable: src.policy:check\n")
    (project.home / ".codex").mkdir(exist_ok=True)
    (project.home / ".codex" / "config.toml").write_text(f'[projects."{project.dir}"]\ntrust_level = "trusted"\n')
    env = project.cli.env("", project.home, project.env)
    env["TMPDIR"] = str(project.home.parent / "tmpdir")  # as a session gets it (agent_cli.AgentCLI.own_tmpdir)
    Path(env["TMPDIR"]).mkdir(exist_ok=True)
    script = "echo '# planted' >> policy.py; echo policy=$?; touch made-here; echo made=$?"

    with strays_removed():  # a later Copilot run would take a /tmp/.git left here for its repository
        done = subprocess.run(
            [str(project.binary), "sandbox", "-C", str(source), "-P", "guard", "--", "sh", "-c", script],
            cwd=source,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    assert "made=0" in done.stdout and (source / "made-here").exists(), done.stdout + done.stderr
    assert "policy=0" not in done.stdout and "planted" not in (source / "policy.py").read_text(), done.stdout


def test_a_session_started_in_a_subfolder_runs_its_commands_and_keeps_guards_files_read_only(
    codex_project: AgentProject,
) -> None:
    """Codex (0.171) joined the profile's relative keys (``:project_roots``) to the folder a session starts in, and
    for a path missing there makes a placeholder, mounts over it and removes it: the session starts several sandboxes
    at once (skills, AGENTS.md), which took each other's placeholders for real paths or stacked two on ``docs/.claude``
    (``.claude/settings.json`` and ``.claude/settings.local.json``), and the session failed to start. The profile now
    names only paths that exist, by their absolute names; guard's files above the folder stay read-only, and a
    missing ``settings.local.json`` is left to the hook, which refuses a write it can read (in the project's folder,
    that file's placeholder made some sessions fail to start)."""
    project = codex_project
    subprocess.run(["git", "init", "-q", str(project.dir)], check=True)  # the root Codex reads .codex/ up to
    (project.dir / ".claude").mkdir()
    (project.dir / ".claude" / "settings.json").write_text("{}\n")  # as guard install claude leaves it
    docs = project.dir / "docs"
    docs.mkdir()
    project.configure(CONFIG)
    yaml_before = (project.dir / "guard.yaml").read_text()
    script = (
        f"touch made-here; echo made=$?; echo '{{}}' >> {project.dir}/.claude/settings.json; echo settings=$?; "
        f"echo 'protect: false' >> {project.dir}/guard.yaml; echo config=$?"
    )

    _, agent = project.run(tool_use("exec_command", {"cmd": hidden(script)}), final_text("ok"), cwd=docs)

    shown = str(agent.agent_requests[1].tool_outputs())
    assert "made=0" in shown and (docs / "made-here").exists(), shown
    assert "settings=0" not in shown and (project.dir / ".claude" / "settings.json").read_text() == "{}\n", shown
    assert "config=0" not in shown and (project.dir / "guard.yaml").read_text() == yaml_before, shown


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ((), None),
        (("-s", "workspace-write"), "-s"),
        (("-c", 'sandbox_mode="danger-full-access"'), "-c sandbox_mode"),
        (("--dangerously-bypass-approvals-and-sandbox",), "--dangerously-bypass-approvals-and-sandbox"),
    ],
    ids=["plain", "sandbox", "sandbox_mode", "bypass"],
)
def test_a_session_whose_command_line_puts_the_profile_aside_has_its_tool_calls_denied(
    codex_project: AgentProject, options: tuple[str, ...], named: str | None
) -> None:
    """``codex -s workspace-write`` (or ``-c sandbox_mode=…``, or no sandbox at all) selects another sandbox than
    guard's profile: a command no hook could read then wrote guard.yaml. Neither the config files nor the event say
    so; the hook's parent process is the session's ``codex``, whose arguments do. ``codex exec`` (0.171) shows no
    SessionStart message (neither its text output nor its ``--json`` stream prints a hook's ``systemMessage`` or
    ``stopReason``), so guard denies each tool call of the session, naming the option: the model is told, and
    ``codex exec``'s text output prints the denial (its ``--json`` stream prints no hook output at all;
    ``tests/setup/test_codex_command_line.py``)."""
    project = codex_project
    project.configure(CONFIG)
    args = [arg for arg in project.cli.headless_args if arg != "--json" or named is None]  # text output: what it shows
    cli = replace(project.cli, headless_args=(args[0], *options, *args[1:]))
    write = tool_use("exec_command", {"cmd": hidden("echo '# planted' >> guard.yaml; echo config=$?")})
    yaml_before = (project.dir / "guard.yaml").read_text()

    run, agent = replace(project, cli=cli).run(write, final_text("ok"))

    shown = str(agent.agent_requests[1].tool_outputs())
    assert "config=0" not in shown and (project.dir / "guard.yaml").read_text() == yaml_before, shown
    if named is None:
        assert "Read-only file system" in shown, shown  # guard's profile refused the write
    else:
        assert "config=" not in shown and f"started with {named}, which puts another sandbox" in shown, shown
        assert f"was started with {named}, which puts another sandbox" in run.stderr, run.stderr
