"""``guard install`` configures the client's own sandbox around guard's files, and ``guard doctor`` reports each client's protection level.

Through the real CLI: what is written (every protected path denied to writes,
the secret to reads, no escape hatch left on), that the user's own settings
survive install, reinstall and uninstall byte for byte, what is refused and
why, and what doctor says when it tries the sandbox here.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from fixtures.processes import run_guard

SOURCE_ROOT = str(Path(__import__("guard").__file__).resolve().parents[1])
CONFIG = 'audit: {path: .guard/audit.db}\nhooks:\n  PreToolUse:\n    - id: anything\n      command: "cat > /dev/null"\n'
CODEX = Path(__file__).resolve().parents[2] / ".e2e" / "node_modules" / ".bin" / "codex"


def guard(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": SOURCE_ROOT, **env}
    done = run_guard(args, project, env=environ, inherit_env=False)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def protected(project: Path) -> tuple[list[str], list[str]]:
    """What the self-protection rule protects for this project's config (the lists the sandbox must hold)."""
    code = (
        "import json, os, sys; os.chdir(sys.argv[1]); from guard.config.loading import load_config; from guard.sandbox.paths import protected_paths;"
        "p = protected_paths(load_config('guard.yaml', use_snapshot=False)); print(json.dumps([p.write, p.read]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(project)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
        timeout=60,
    )
    write, read = json.loads(done.stdout)
    return write, read


pytestmark = pytest.mark.project(config=CONFIG, trusted=False)


def local_settings(project: Path) -> dict:
    return json.loads((project / ".claude/settings.local.json").read_text())


def covered(path: str, denied: list[str]) -> bool:
    return any(path == d or path.startswith(d + "/") for d in denied)


@pytest.mark.slow
@pytest.mark.usefixtures("sandbox_tools")  # a plain guard install claude configures Claude Code's sandbox
def test_claude_install_denies_every_protected_path_and_leaves_no_escape(project: Path) -> None:
    done = guard(project, "install", "claude")
    assert done.returncode == 0 and "protection level sandboxed" in done.stdout, done.stderr

    settings = local_settings(project)
    sandbox = settings["sandbox"]
    assert (sandbox["enabled"], sandbox["failIfUnavailable"], sandbox["allowUnsandboxedCommands"]) == (
        True,
        True,
        False,
    )
    write, read = protected(project)
    assert str(project / "guard.yaml") in write and str(project / ".guard/audit.db") in write
    assert all(covered(p, sandbox["filesystem"]["denyWrite"]) for p in write)
    assert all(covered(p, sandbox["filesystem"]["denyRead"]) for p in read) and read
    rules = settings["permissions"]["deny"]
    assert all(any(f"Edit(/{d})" == r for r in rules) for d in sandbox["filesystem"]["denyWrite"])
    assert all(f"Read(/{d}/**)" in rules for d in sandbox["filesystem"]["denyRead"])
    assert Path(read[0]).exists(), "the secret is made before the sandbox is configured around it"


@pytest.mark.slow
@pytest.mark.usefixtures("sandbox_tools")  # a plain guard install claude configures Claude Code's sandbox
def test_claude_sandbox_settings_merge_with_the_users_and_come_out_exactly(project: Path) -> None:
    mine = {
        "sandbox": {
            "enabled": True,
            "excludedCommands": [],
            "filesystem": {"allowWrite": ["~/.npm"], "denyWrite": ["/srv/data"]},
        },
        "permissions": {"deny": ["Read(./.env)"], "allow": ["Bash(npm test)"]},
        "model": "opus",
    }
    original = json.dumps(mine, indent=4) + "\n"
    (project / ".claude").mkdir()
    (project / ".claude/settings.local.json").write_text(original)

    assert guard(project, "install", "claude").returncode == 0
    installed = (project / ".claude/settings.local.json").read_text()
    assert guard(project, "install", "claude").returncode == 0
    merged = local_settings(project)

    assert (project / ".claude/settings.local.json").read_text() == installed, "a second install changed the file"
    assert installed.startswith('{\n    "sandbox"'), "the file's own indentation is kept"
    assert merged["model"] == "opus" and merged["permissions"]["allow"] == ["Bash(npm test)"]
    assert (
        merged["permissions"]["deny"][0] == "Read(./.env)"
        and merged["sandbox"]["filesystem"]["denyWrite"][0] == "/srv/data"
    )
    assert merged["sandbox"]["filesystem"]["allowWrite"] == ["~/.npm"]
    assert guard(project, "install", "claude", "--uninstall").returncode == 0
    assert (project / ".claude/settings.local.json").read_text() == original


@pytest.mark.slow
@pytest.mark.usefixtures("sandbox_tools")  # a plain guard install claude configures Claude Code's sandbox
def test_no_sandbox_takes_out_only_what_guard_put_in(project: Path) -> None:
    (project / ".claude").mkdir()
    (project / ".claude/settings.local.json").write_text(json.dumps({"sandbox": {"enabled": False}}) + "\n")
    assert guard(project, "install", "claude").returncode == 0
    assert local_settings(project)["sandbox"]["enabled"] is True

    done = guard(project, "install", "claude", "--no-sandbox")

    assert done.returncode == 0 and "removed guard's sandbox settings" in done.stdout
    assert local_settings(project)["sandbox"] == {"enabled": False}  # the user's own value is back
    assert local_settings(project)["env"]["GUARD_HOOK"], "this user's hook program stays"
    assert json.loads((project / ".claude/settings.json").read_text())["hooks"]["PreToolUse"], (
        "the hook stays installed"
    )


@pytest.mark.slow
@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap and socat are what Claude Code's sandbox needs on Linux"
)
def test_without_bubblewrap_install_refuses_and_says_how_to_go_on(project: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("sh", "cat"):  # the hook command's tools, and nothing the sandbox needs
        (bare / tool).symlink_to(shutil.which(tool) or f"/bin/{tool}")
    done = guard(project, "install", "claude", PATH=str(bare))
    assert (
        done.returncode == 1
        and "needs bwrap and socat" in done.stderr
        and "apt-get install bubblewrap socat" in done.stderr
    )
    assert "--no-sandbox" in done.stderr and not (project / ".claude").exists(), "nothing is written"
    assert guard(project, "install", "claude", "--no-sandbox", PATH=str(bare)).returncode == 0


@pytest.mark.slow
def test_codex_install_writes_a_permission_profile_beside_the_users_config(project: Path) -> None:
    (project / ".codex").mkdir()
    original = 'model = "o3"\n\n[tools]\nweb_search = true\n'
    (project / ".codex/config.toml").write_text(original)
    (project / ".claude").mkdir()
    (project / ".claude/settings.json").write_text("{}\n")  # settings.local.json is missing

    assert guard(project, "install", "codex").returncode == 0
    text = (project / ".codex/config.toml").read_text()
    assert guard(project, "install", "codex").returncode == 0
    config = tomllib.loads(text)

    assert (project / ".codex/config.toml").read_text() == text
    assert (
        config["default_permissions"] == "guard" and config["model"] == "o3" and config["tools"] == {"web_search": True}
    )
    rules = config["permissions"]["guard"]["filesystem"]
    write, read = protected(project)
    assert config["permissions"]["guard"]["extends"] == ":workspace"
    assert any(rules.get(p) == "none" for p in read)  # the secret, outside the project: by its absolute path
    # the project's files by their absolute paths, and only those that exist: Codex joins relative keys to the folder
    # a session starts in, and its placeholders for missing paths made sessions fail to start (tests/e2e)
    assert rules[str(project.resolve() / "guard.yaml")] == "read" and rules[str(project.resolve() / ".codex")] == "read"
    assert ":project_roots" not in rules and all(os.path.lexists(p) for p in rules if p.startswith("/")), rules
    claude = project.resolve() / ".claude"
    assert rules[str(claude / "settings.json")] == "read" and str(claude / "settings.local.json") not in rules
    old = text.replace(
        "[permissions.guard.filesystem]",
        '[permissions.guard.filesystem.":project_roots"]\n"guard.yaml" = "read"\n\n[permissions.guard.filesystem]',
    )
    (project / ".codex/config.toml").write_text(old)  # as an older guard install codex wrote it
    assert (
        "a Codex session started in a subfolder fails to start"
        in guard(project, "doctor", "--model-timeout", "1").stdout
    )
    assert guard(project, "install", "codex").returncode == 0 and (project / ".codex/config.toml").read_text() == text
    assert guard(project, "install", "codex", "--uninstall").returncode == 0
    assert (project / ".codex/config.toml").read_text() == original


def test_codex_install_refuses_a_config_whose_sandbox_mode_would_switch_the_profile_off(project: Path) -> None:
    (project / ".codex").mkdir()
    (project / ".codex/config.toml").write_text('sandbox_mode = "workspace-write"\n')
    done = guard(project, "install", "codex")
    assert (
        done.returncode == 1
        and "makes Codex ignore permission profiles" in done.stderr
        and "nothing was written" in done.stderr
    )
    assert (project / ".codex/config.toml").read_text() == 'sandbox_mode = "workspace-write"\n' and not (
        project / ".codex/hooks.json"
    ).exists()


def test_gemini_is_installed_and_said_to_be_unsandboxed(project: Path) -> None:
    done = guard(project, "install", "gemini")
    assert (
        done.returncode == 0
        and "protection level unsandboxed" in done.stdout
        and "cannot deny reading guard's secret" in done.stdout
    )


def doctor_line(done: subprocess.CompletedProcess[str], topic: str) -> str:
    return next(line for line in done.stdout.splitlines() if f" {topic}:" in line)


@pytest.mark.slow
@pytest.mark.usefixtures("sandbox_tools")  # the check runs bubblewrap
def test_doctor_tries_claudes_sandbox_and_reports_the_level(project: Path, tmp_path: Path) -> None:
    assert guard(project, "install", "claude").returncode == 0
    sandboxed = doctor_line(guard(project, "doctor", "--model-timeout", "1"), "claude sandbox")
    assert (
        sandboxed.startswith("ok")
        and "sandboxed:" in sandboxed
        and "checked: a command in the sandbox could not write into" in sandboxed
    )

    broken = tmp_path / "bin"
    broken.mkdir()
    fake = broken / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    cannot = guard(project, "doctor", "--model-timeout", "1", PATH=f"{broken}{os.pathsep}{os.environ['PATH']}")
    failing = doctor_line(cannot, "claude sandbox")
    assert cannot.returncode == 1 and failing.startswith("FAIL") and "No permissions to create new namespace" in failing

    assert guard(project, "install", "claude", "--no-sandbox").returncode == 0
    unsandboxed = doctor_line(guard(project, "doctor", "--model-timeout", "1"), "claude sandbox")
    assert (
        unsandboxed.startswith("WARN") and "unsandboxed" in unsandboxed and "sandbox.enabled is not true" in unsandboxed
    )


@pytest.mark.slow
@pytest.mark.skipif(
    not CODEX.exists(), reason="the Codex CLI is not installed in .e2e (npm install --prefix .e2e @openai/codex)"
)
def test_doctor_tries_codexs_own_sandbox_command(project: Path, tmp_path: Path) -> None:
    codex_home = Path(os.environ["HOME"]) / ".codex"  # Codex reads a project's config only once the project is trusted
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    assert guard(project, "install", "codex").returncode == 0
    (tmp_path / "tmpdir").mkdir()  # beside HOME, not above it: see own_tmpdir in tests/e2e/agent_cli.py
    env = {"PATH": f"{CODEX.parent}{os.pathsep}{os.environ['PATH']}", "TMPDIR": str(tmp_path / "tmpdir")}

    sandboxed = doctor_line(guard(project, "doctor", "--model-timeout", "1", **env), "codex sandbox")

    assert sandboxed.startswith("ok") and "checked: a command in the sandbox could not write into" in sandboxed, (
        sandboxed
    )
    (codex_home / "config.toml").write_text('sandbox_mode = "workspace-write"\n')
    unsandboxed = doctor_line(guard(project, "doctor", "--model-timeout", "1", **env), "codex sandbox")
    assert unsandboxed.startswith("WARN") and "Codex ignores permission profiles" in unsandboxed
