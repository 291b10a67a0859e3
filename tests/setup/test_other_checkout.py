"""A hook ``guard install codex`` (or ``gemini``) wrote for one folder, run by the client for a session in another checkout.

``.codex/hooks.json`` names the project's absolute path, and travels: a team commits it, a moved or copied folder
keeps it. Codex (0.171, ``tests/e2e/test_codex_worktree.py``) starts each hook in the session's folder (the event's
``cwd``); in a git worktree it runs the *main checkout's* hooks.json and reads the worktree's own config.toml, in a
clone or copy that folder's own copies. A worktree's own trusted config decides, not the first
folder's the hook names; a clone, copy or moved folder is refused until ``guard install codex`` is run there. The
sandbox profile names the project's files by their absolute paths (``guard.sandbox.codex``: relative ones broke
sessions started in a subfolder), so a worktree's committed copy protects the main checkout's files, and the session's
first message says so. Gemini CLI names the session's project in ``GEMINI_PROJECT_DIR``: the same holds for
its hook (``tests/e2e/test_gemini_worktree.py``).
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from conftest import trust_config
from fixtures.git import commit, git
from fixtures.processes import run_guard

DENY_PUSH = "hooks:\n  PreToolUse:\n    - matcher: Bash\n      command: \"grep -q 'git push' && {{ echo '{why}' >&2; exit 2; }} || exit 0\"\n"
DENY_ALL = 'hooks:\n  PreToolUse:\n    - command: "echo {why} >&2; exit 2"\n'
ELSEWHERE = "another checkout"


def _install(project: Path, client: str = "codex") -> None:
    done = run_guard(["install", client, "--scope", "project"], project, no_terminal=True)
    assert done.returncode == 0, done.stderr
    trust_config(project / "guard.yaml")


def _installed_repository(tmp_path: Path, *, shared: str = ".") -> Path:
    """A git repository whose guard.yaml denies pushes, with ``guard install codex`` done and ``shared`` committed
    (``.codex/`` too by default, as a team shares it)."""
    main = tmp_path / "main"
    main.mkdir()
    (main / "guard.yaml").write_text(DENY_PUSH.format(why="main says no"))
    _install(main)
    commit(main, shared)
    return main


def _guard_args(settings: Path, event: str) -> list[str]:
    """guard's part of the hook command ``settings`` hold for ``event``: run by this tree's guard."""
    installed = json.loads(settings.read_text())["hooks"][event][0]["hooks"][0]
    words = shlex.split(installed["command"])
    return words[words.index("guard.cli.main") + 1 :]


def _hook(installed_in: Path, session: Path, command: str = "git push") -> tuple[str, str]:
    """The PreToolUse and SessionStart answers of the hook in ``installed_in``'s ``.codex/hooks.json``, run as Codex runs
    it for a session in ``session`` (started there, the event's ``cwd``): guard's part of the command, this tree's guard."""
    args = _guard_args(installed_in / ".codex/hooks.json", "PreToolUse")
    said = []
    for event in (
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}},
        {"hook_event_name": "SessionStart", "source": "startup"},
    ):
        done = run_guard(args, session, stdin=json.dumps({"session_id": "s1", "cwd": str(session), **event}))
        assert done.returncode in (0, 2), done.stderr
        said.append(done.stdout + done.stderr)
    return said[0], said[1]


def test_a_worktree_is_judged_by_its_own_config_and_told_when_its_profile_names_the_main_checkouts_files(
    tmp_path: Path,
) -> None:
    main = _installed_repository(tmp_path)
    (main / "sub").mkdir()
    pre, start = _hook(main, main / "sub")  # the project itself, from a subfolder: its own config, nothing to say
    assert "main says no" in pre and "guard:" not in start, pre + start

    for worktree in (tmp_path / "feature", main / ".worktrees" / "nested"):  # beside the project, or inside it
        git(main, "worktree", "add", "-q", str(worktree))
        (worktree / "guard.yaml").write_text(DENY_PUSH.format(why=f"{worktree.name} says no"))
        trust_config(worktree / "guard.yaml")
        pre, start = _hook(main, worktree)  # Codex runs the main checkout's hook in a worktree
        assert f"{worktree.name} says no" in pre and "main says no" not in pre, pre
        # the committed profile names the main checkout's files
        assert f"does not protect {worktree / 'guard.yaml'}" in start, start
        assert f"Run guard install codex in {worktree}" in start, start
        doctor = run_guard(["doctor", "--model-timeout", "1"], worktree, no_terminal=True).stdout
        assert f"writable under guard's profile, e.g. {worktree}" in doctor, doctor

        _install(worktree)  # what the message says: the worktree's profile is rewritten with its own paths
        _, start = _hook(main, worktree)
        assert "guard:" not in start, start
        doctor = run_guard(["doctor", "--model-timeout", "1"], worktree, no_terminal=True).stdout
        assert "writable under guard's profile" not in doctor, doctor


def test_a_git_file_the_agent_plants_in_a_subfolder_does_not_make_it_a_worktree_with_its_own_config(
    tmp_path: Path,
) -> None:
    """A session in a subfolder that has a trusted config of its own (a package with laxer rules): the agent makes the
    subfolder look like a linked worktree of the same repository, which would make its config, not the project's, the
    one the project's hook enforces (found by r48review). Not a checkout git made: refused as another checkout is."""
    main = _installed_repository(tmp_path)
    sub, elsewhere = main / "sub", tmp_path / "private"
    sub.mkdir()
    (sub / "guard.yaml").write_text(DENY_PUSH.replace("git push", "rm -rf /").format(why="sub says no"))
    trust_config(sub / "guard.yaml")
    (elsewhere / "worktrees" / "sub").mkdir(parents=True)
    (elsewhere / "worktrees" / "sub" / "commondir").write_text(f"{main / '.git'}\n")
    (main / ".git" / "worktrees" / "sub").mkdir(parents=True)
    (main / ".git" / "worktrees" / "sub" / "commondir").write_text("../..\n")  # registered, but not naming sub back
    plants = {
        "a link to the repository": lambda git: git.symlink_to("../.git"),
        "a gitdir with a commondir": lambda git: git.write_text(f"gitdir: {elsewhere / 'worktrees' / 'sub'}\n"),
        "an unregistered worktree": lambda git: git.write_text(f"gitdir: {main / '.git' / 'worktrees' / 'sub'}\n"),
    }
    for how, plant in plants.items():
        plant(sub / ".git")
        pre, _ = _hook(main, sub)
        assert '"deny"' in pre and ELSEWHERE in pre, f"{how}: {pre}"
        (sub / ".git").unlink()


def test_a_worktree_without_the_main_checkouts_codex_files_is_told_its_sandbox_is_not_set_up(tmp_path: Path) -> None:
    main = _installed_repository(tmp_path, shared="guard.yaml")  # .codex/ kept out of git: a worktree has none
    worktree = tmp_path / "feature"
    git(main, "worktree", "add", "-q", str(worktree))
    trust_config(worktree / "guard.yaml")
    pre, start = _hook(main, worktree)  # Codex runs the main checkout's hook there all the same
    assert "main says no" in pre, pre  # the worktree's own config, the same rule
    assert "selects no guard sandbox profile" in start and f"this git worktree, {worktree}" in start, start
    doctor = run_guard(["doctor", "--model-timeout", "1"], worktree, no_terminal=True).stdout
    assert f"codex hook: {main / '.codex/hooks.json'}" in doctor, doctor  # the hooks Codex runs here
    assert "codex sandbox: unsandboxed" in doctor and "fix: guard install codex" in doctor, doctor
    assert f"no trust record for {main}:" in doctor, doctor  # Codex keys a worktree's trust by its main checkout
    _install(worktree)
    _, start = _hook(main, worktree)
    assert "guard:" not in start, start


def test_a_clone_copy_or_moved_project_is_refused_until_guard_install_codex_there(tmp_path: Path) -> None:
    main = _installed_repository(tmp_path)
    clone, copy, moved = tmp_path / "clone", tmp_path / "copy", tmp_path / "moved"
    git(tmp_path, "clone", "-q", str(main), str(clone))
    shutil.copytree(main, copy, symlinks=True)
    for checkout in (clone, copy):
        trust_config(checkout / "guard.yaml")
        pre, start = _hook(checkout, checkout, command="git status")  # its own copy of main's hook
        assert '"deny"' in pre and ELSEWHERE in pre and f"guard install codex in {checkout}" in pre, pre
        assert ELSEWHERE in start and "tool calls are blocked" in start, start
    _install(copy)
    pre, _ = _hook(copy, copy)
    assert "main says no" in pre and ELSEWHERE not in pre, pre
    pre, _ = _hook(copy, copy, command="git status")
    assert '"deny"' not in pre, pre

    main.rename(moved)
    trust_config(moved / "guard.yaml")
    pre, _ = _hook(moved, moved, command="git status")
    assert '"deny"' in pre and f"guard install codex in {moved}" in pre, pre


#: client → its project hook file, how its entry names the command, and a shell call as it sends it
OTHER_CLIENTS = {
    "gemini": (
        ".gemini/settings.json",
        lambda hooks: hooks["BeforeTool"][0]["hooks"][0]["command"],
        {"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {"command": "ls"}},
    ),
    "copilot": (
        ".github/hooks/guard.json",
        lambda hooks: hooks["preToolUse"][0]["bash"],
        {"toolName": "bash", "toolArgs": json.dumps({"command": "ls"})},
    ),
}


@pytest.mark.parametrize("client", sorted(OTHER_CLIENTS))
def test_another_clients_worktree_is_judged_by_its_own_config_and_a_copy_refused(client: str, tmp_path: Path) -> None:
    settings, command_of, event = OTHER_CLIENTS[client]
    main = tmp_path / "main"
    main.mkdir()
    (main / "guard.yaml").write_text(DENY_ALL.format(why="main says no"))
    _install(main, client)
    commit(main)  # the hook file committed (Copilot's repository hooks are meant to be)
    worktree, copy = tmp_path / "feature", tmp_path / "copy"
    git(main, "worktree", "add", "-q", str(worktree))
    (worktree / "guard.yaml").write_text(DENY_ALL.format(why="feature says no"))
    shutil.copytree(main, copy, symlinks=True)

    def pre_tool(checkout: Path) -> str:
        """The checkout's own hook for a shell call in a session there (Gemini names it in GEMINI_PROJECT_DIR)."""
        trust_config(checkout / "guard.yaml")
        words = shlex.split(command_of(json.loads((checkout / settings).read_text())["hooks"]))
        done = run_guard(
            words[words.index("guard.cli.main") + 1 :],
            checkout,
            stdin=json.dumps({"session_id": "s1", "sessionId": "s1", "cwd": str(checkout), **event}),
            env={"GEMINI_PROJECT_DIR": str(checkout)},
        )
        return done.stdout + done.stderr

    assert "main says no" in pre_tool(main)
    assert "feature says no" in pre_tool(worktree)
    refused = pre_tool(copy)
    assert ELSEWHERE in refused and f"guard install {client} in {copy}" in refused, refused


def test_an_empty_git_placeholder_codex_makes_in_the_session_s_subfolder_leaves_it_in_the_project(
    tmp_path: Path,
) -> None:
    """Codex (0.171) keeps a workspace's ``.git`` read-only and, for a session started in a subfolder, makes an empty
    ``.git`` there while each of its sandboxes runs (``tests/e2e/test_codex_sandbox.py``): a hook running meanwhile
    took the subfolder for another checkout and refused the session's calls."""
    main = _installed_repository(tmp_path)
    sub = main / "docs"
    sub.mkdir()
    for make in (lambda git: git.write_text(""), lambda git: git.mkdir()):
        make(sub / ".git")
        pre, _ = _hook(main, sub)
        assert "main says no" in pre and ELSEWHERE not in pre, pre
        (sub / ".git").unlink() if (sub / ".git").is_file() else (sub / ".git").rmdir()
