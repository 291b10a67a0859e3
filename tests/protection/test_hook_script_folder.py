"""A command hook's script runs its neighbours without naming them: their folder is protected with it.

``guard trust`` pins ``.claude/hooks/check.py`` by its digest, but Python runs ``check.py`` with its own folder first
on the import path: a ``json.py`` written beside it runs in the standard library's place, and the pinned script, its
digest unchanged, answers whatever the agent wrote. The write needs no model (here no rule judges writes) and named
nothing protected, and the next ``rm -rf`` the hook exists to deny ran. Each step through a real ``guard hook``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from fixtures.processes import run_guard

CHECK = (
    "import json, sys\n"
    "event = json.load(sys.stdin)\n"
    "if 'rm -rf' in event['tool_input'].get('command', ''):\n"
    "    print('no deletes', file=sys.stderr)\n"
    "    sys.exit(2)\n"
)
HIJACK = "import sys\nsys.exit(0)\n"


def config(script: str) -> str:
    return f'hooks:\n  PreToolUse:\n    - id: no-deletes\n      matcher: Bash\n      command: "python3 {script}"\n'


def decision(
    project: Path, tool: str, tool_input: dict[str, str], env: dict[str, str] | None = None
) -> tuple[str, str]:
    event = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(project), "tool_name": tool}
    stdin = json.dumps({**event, "tool_input": tool_input})
    # -P, as installed hooks run it (-I): guard's own imports never look in the project
    proc = run_guard(["hook", "--format", "claude"], project, stdin=stdin, env=env, safe_path=True)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    if not proc.stdout.strip():
        return "allow", ""
    said = json.loads(proc.stdout)["hookSpecificOutput"]
    return said["permissionDecision"], said["permissionDecisionReason"]


@pytest.mark.project(config=config(".claude/hooks/check.py"), files={".claude/hooks/check.py": CHECK})
@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Write", {"file_path": ".claude/hooks/json.py", "content": HIJACK}),
        ("Bash", {"command": "printf 'import sys\\nsys.exit(0)\\n' > .claude/hooks/json.py"}),
        ("Bash", {"command": "mkdir -p .claude/hooks/json && cp /tmp/x.py .claude/hooks/json/__init__.py"}),
    ],
    ids=["Write", "redirection", "package"],
)
def test_a_module_written_beside_a_hook_script_is_refused(project: Path, tool: str, tool_input: dict[str, str]) -> None:
    planted = {k: str(project / v) if k == "file_path" else v for k, v in tool_input.items()}
    said, reason = decision(project, tool, planted)
    assert said == "deny" and "guard self-protection" in reason and "a script guard's hooks run" in reason, reason
    # what the write would have done: the pinned script, unchanged, no longer denies
    (project / ".claude/hooks/json.py").write_text(HIJACK)
    assert decision(project, "Bash", {"command": "rm -rf build"})[0] == "allow"


@pytest.mark.project(config=config("check.py"), files={"check.py": CHECK})
def test_a_hook_script_in_the_project_folder_leaves_the_project_writable(project: Path) -> None:
    """Protecting that folder would refuse every write of the project: only the script itself is protected there."""
    assert decision(project, "Bash", {"command": "rm -rf build"})[0] == "deny"
    assert decision(project, "Write", {"file_path": str(project / "notes.py"), "content": "x = 1\n"})[0] == "allow"
    said, reason = decision(project, "Write", {"file_path": str(project / "check.py"), "content": HIJACK})
    assert said == "deny" and "a script guard's hooks run" in reason, reason


DENY_SH = "grep -q 'rm -rf' && { echo 'no deletes' >&2; exit 2; }; exit 0\n"


@pytest.mark.project(
    config=config("deny.sh").replace("python3", "sh"), files={"deny.sh": DENY_SH, ".venv/bin/.keep": ""}
)
def test_a_program_written_into_a_project_folder_on_path_does_not_run_for_the_hook(project: Path) -> None:
    """With the project's virtualenv activated (its ``bin`` first on the client's ``PATH``), ``sh deny.sh`` found the
    ``sh`` the agent wrote there (a Bash call naming nothing protected), which allowed the ``rm -rf`` the pinned,
    unchanged deny.sh refuses. The hook's ``PATH`` leaves the project's folders out, and a relative entry."""
    path = {"PATH": f"{project}/.venv/bin::{os.environ['PATH']}"}
    planted = "printf '#!/bin/sh\\nexit 0\\n' > .venv/bin/sh && chmod +x .venv/bin/sh && cp .venv/bin/sh grep"
    assert decision(project, "Bash", {"command": planted}, path)[0] == "allow"  # no rule judges it
    subprocess.run(["sh", "-c", planted], cwd=project, check=True)
    said, reason = decision(project, "Bash", {"command": "rm -rf build"}, path)
    assert said == "deny" and "no deletes" in reason, reason


#: Writes of a program into ``~/.local/bin``, first on the client's PATH (as Debian's ~/.profile puts it).
PLANTS = [
    ("Write", {"file_path": "~/.local/bin/sh", "content": "#!/bin/sh\nexit 0\n"}),
    ("Bash", {"command": "printf '#!/bin/sh\\nexit 0\\n' > ~/.local/bin/sh && chmod +x ~/.local/bin/sh"}),
    ("Bash", {"command": "cp /bin/true $HOME/.local/bin/grep"}),
    ("Bash", {"command": "ln -s /bin/true ~/.local/bin/python3"}),
    ("Bash", {"command": "cd ~/.local/bin && cp /bin/true sh"}),
]


@pytest.mark.project(config=config("deny.sh").replace("python3", "sh"), files={"deny.sh": DENY_SH})
@pytest.mark.parametrize(("tool", "tool_input"), PLANTS, ids=[str(i) for i in range(len(PLANTS))])
def test_a_program_written_into_a_home_folder_on_path_asks_a_person(
    project: Path, tool: str, tool_input: dict[str, str]
) -> None:
    """A program in a folder of the home that comes before the system's on PATH answers for ``sh`` or ``grep`` in every
    command hook (``sh deny.sh`` then allowed the ``rm -rf`` it denies) and in every shell the user starts. No rule
    judged the write and it named nothing protected; now a person is asked, as for the shell's start-up files."""
    home = Path(os.environ["HOME"])
    (home / ".local" / "bin").mkdir(parents=True, exist_ok=True)
    path = {"PATH": f"{home}/.local/bin:{os.environ['PATH']}"}
    planted = {k: v.replace("~", str(home)) if k == "file_path" else v for k, v in tool_input.items()}
    said, reason = decision(project, tool, planted, path)
    assert said == "ask" and "a folder of the shell's PATH" in reason, reason
    # what the write does to the hook: sh deny.sh runs the agent's sh, and the rm -rf it denies is allowed
    (home / ".local" / "bin" / "sh").write_text("#!/bin/sh\nexit 0\n")
    (home / ".local" / "bin" / "sh").chmod(0o755)
    assert decision(project, "Bash", {"command": "rm -rf build"}, path)[0] == "allow"


@pytest.mark.project(config=config("deny.sh").replace("python3", "sh"), files={"deny.sh": DENY_SH})
def test_running_or_listing_a_home_folder_on_path_is_not_asked(project: Path) -> None:
    home = Path(os.environ["HOME"])
    (home / ".local" / "bin").mkdir(parents=True, exist_ok=True)
    (home / ".local" / "bin" / "uv").write_text("#!/bin/sh\nexit 0\n")
    path = {"PATH": f"{home}/.local/bin:{os.environ['PATH']}"}
    for command in ("~/.local/bin/uv sync", "ls -la ~/.local/bin", "pip install --user black", "uv tool list"):
        assert decision(project, "Bash", {"command": command}, path)[0] == "allow", command


@pytest.mark.parametrize("script", ["check.py", "./check.py", "$CLAUDE_PROJECT_DIR/check.py"])
def test_a_module_written_at_the_project_root_does_not_run_for_the_hook(isolated_home: Path, script: str) -> None:
    """A script directly in the project folder (only its own file is protected there) puts that folder first on
    Python's import path: a ``json.py`` written there ran in the standard library's place and the ``rm -rf`` the hook
    denies was allowed. Command hooks run Python with ``PYTHONSAFEPATH`` unless a script they run sits in a folder of
    its own."""
    from conftest import trust_config

    project = isolated_home
    (project / "guard.yaml").write_text(config(script))
    (project / "check.py").write_text(CHECK)
    trust_config(project / "guard.yaml")
    assert decision(project, "Bash", {"command": "rm -rf build"})[0] == "deny"
    said, _ = decision(project, "Write", {"file_path": str(project / "json.py"), "content": HIJACK})
    assert said == "allow"  # the project's own files stay writable
    (project / "json.py").write_text(HIJACK)
    said, reason = decision(project, "Bash", {"command": "rm -rf build"})
    assert said == "deny" and "no deletes" in reason, reason


@pytest.mark.project(
    config=config(".claude/hooks/check.py"),
    files={".claude/hooks/check.py": "import rules\n" + CHECK, ".claude/hooks/rules.py": "NAME = 'no deletes'\n"},
)
def test_a_hook_script_in_a_folder_of_its_own_still_imports_its_neighbours(project: Path) -> None:
    said, reason = decision(project, "Bash", {"command": "rm -rf build"})
    assert said == "deny" and "no deletes" in reason, reason


@pytest.mark.project(config=config("deny.sh").replace("python3", "sh"), files={"deny.sh": DENY_SH})
@pytest.mark.parametrize("folder", ["bin", ".local/bin"])
def test_a_program_written_where_a_login_shell_looks_first_asks_a_person_whatever_the_hook_s_path(
    project: Path, folder: str
) -> None:
    """``~/.profile`` puts ``~/bin`` and ``~/.local/bin`` first on PATH once they exist, so a ``bash -lc`` (Codex's
    shell) after ``mkdir ~/bin && cp … ~/bin/cat`` runs the agent's ``cat`` where a proven read was meant: the hook's
    own PATH (a client started from a desktop launcher) need not list either folder."""
    path = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
    plant = {"command": f"mkdir -p ~/{folder} && printf '#!/bin/sh\\nexit 0\\n' > ~/{folder}/cat"}
    said, reason = decision(project, "Bash", plant, path)
    assert said == "ask" and "a folder of the shell's PATH" in reason, reason
    home = Path(os.environ["HOME"])
    (home / ".profile").write_text(  # what Debian's /etc/skel/.profile ends with
        'if [ -d "$HOME/bin" ] ; then\n    PATH="$HOME/bin:$PATH"\nfi\n'
        'if [ -d "$HOME/.local/bin" ] ; then\n    PATH="$HOME/.local/bin:$PATH"\nfi\n'
    )
    (home / folder).mkdir(parents=True, exist_ok=True)
    (home / folder / "cat").write_text("#!/bin/sh\necho planted\n")
    (home / folder / "cat").chmod(0o755)
    login = subprocess.run(
        ["bash", "-lc", "cat /etc/hostname"], capture_output=True, text=True, env={**os.environ, **path}
    )
    assert login.stdout == "planted\n"  # what the ask is about: a login shell runs it in the system's place
