"""The read-only lane never prints a credential without the judge, however the read reaches it.

The lane checks the names a read gives (``cat .env`` goes to the judge); these are the routes where
the name given is not the credential's: a glob that matches one (``cat sub/.e*``), a link or a hard
link the agent made in an earlier call, a search that walks down to one below the folder's top
(``grep -rn KEY .`` with ``config/.env``), ``diff FILE DIR`` (which reads ``DIR/FILE``), a FIFO or a device node (``mknod disk b 8 0``), and git, which prints a credential from its history or a
blob by its hash (``git show --stat SHA``), or says which commits hold a string (``git log -S``). Each is asked of a real ``guard hook`` process (the agent
working in ``app/`` below the project's trusted guard.yaml, the home folder elsewhere) whose stub
model denies: a call decided without it would be allowed. Each was decided in the lane before the
fix, and its real effect was seen in a sandbox: the secret printed. Two are names the credential list lacked
(direnv's ``.envrc``, MySQL's ``.my.cnf``).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.guide import hook_decision
from fixtures.processes import run_guard

from guard.testing.openai_stub import Reply, StubServer

RULE = "Deny shell commands that delete or overwrite files outside the project directory."
CONFIG = (
    'models:\n  quick: openai/stub-judge\ncache:\n  url: "off"\nhooks:\n  PreToolUse:\n'
    f'    - id: no-destructive\n      matcher: "*"\n      depth: quick\n      rule: {RULE}\n'
    "      skip_read_only: true\n"
)

pytestmark = pytest.mark.stub(default=Reply.verdict("deny", "judged by the stub", confidence=0.95))


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=folder,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def _secret_at_home(app: Path) -> Path:
    key = Path.home() / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_text("SECRET KEY\n")
    return key


def _history(app: Path) -> None:
    """A .env committed once, then removed: only git's history holds it."""
    (app / ".env").write_text("API_KEY=SECRET\n")
    _git(app, "add", ".env")
    _git(app, "commit", "-qm", "env")
    _git(app, "rm", "-q", ".env")
    _git(app, "commit", "-qm", "no env")


def _blob(app: Path) -> str:
    (app / "sub" / ".env").write_text("API_KEY=SECRET\n")
    _git(app, "add", "-f", "sub/.env")
    _git(app, "commit", "-qm", "env")
    sha = _git(app, "rev-parse", "HEAD:./sub/.env")
    _git(app, "rm", "-q", "sub/.env")
    _git(app, "commit", "-qm", "no env")
    return sha


#: (what an earlier call left in app/, the read) -> the read prints a credential.
ROUTES: list[tuple[Callable[[Path], object], Callable[[Path], str]]] = [
    (lambda app: (app / "sub" / ".env").write_text("API_KEY=SECRET\n"), lambda app: "cat sub/.e*"),
    (lambda app: (app / "sub" / ".env").write_text("API_KEY=SECRET\n"), lambda app: "head -n 5 sub/.en?"),
    (
        lambda app: ((app / "sub" / ".env").write_text("API_KEY=SECRET\n"), (app / "data.txt").symlink_to("sub/.env")),
        lambda app: "cat data.txt",
    ),
    (lambda app: os.link(_secret_at_home(app), app / "data.txt"), lambda app: "cat data.txt"),
    (lambda app: (app / "sub" / ".env").write_text("API_KEY=SECRET\n"), lambda app: "grep -rn SECRET ."),
    (lambda app: (app / "sub" / "deep").mkdir() or (app / "sub/deep/id_rsa").write_text("K\n"), lambda app: "rg -uu K"),
    (lambda app: os.link(_secret_at_home(app), app / "sub" / "notes.md"), lambda app: "grep -r SECRET sub"),
    (lambda app: (app / "sub" / "notes.txt").symlink_to(_secret_at_home(app)), lambda app: "diff notes.txt sub"),
    (
        lambda app: (app / "sub" / "notes.txt").symlink_to(_secret_at_home(app)),
        lambda app: "diff --to-file=sub notes.txt",
    ),
    (lambda app: os.mkfifo(app / "sub" / "pipe"), lambda app: "head -c 100 sub/pipe"),  # what another process writes
    (lambda app: (app / ".envrc").write_text("export AWS_SECRET_ACCESS_KEY=SECRET\n"), lambda app: "cat .envrc"),
    (lambda app: (app / "sub" / ".my.cnf").write_text("[client]\npassword=SECRET\n"), lambda app: "head sub/.my.cnf"),
    (_history, lambda app: "git log -p"),
    (_history, lambda app: "git log -wp"),  # -w -p clustered
    (_history, lambda app: "git log --binary"),  # implies -p
    (_history, lambda app: "git log --check"),  # prints each line with a whitespace error
    (lambda app: None, lambda app: f"git show --stat {_blob(app)}"),
    (_history, lambda app: "git log --oneline --all -SY=SECR"),  # an oracle: which commits hold the string
    (_history, lambda app: "git log --oneline -sGY=SEC"),
]


@pytest.fixture
def app(isolated_home: Path, write_config: Callable[..., Path]) -> Path:
    write_config(CONFIG)
    app = isolated_home / "app"
    (app / "sub").mkdir(parents=True)
    (app / "notes.txt").write_text("notes\n")
    (app / "sub" / "x.py").write_text("x = 1\n")
    _git(isolated_home, "init", "-q")
    _git(isolated_home, "add", "app")
    _git(isolated_home, "commit", "-qm", "app")
    return app


def _decide(app: Path, command: str, stub: StubServer) -> tuple[str, int]:
    """The decision for a Bash call in ``app``, and how many judge requests it made."""
    before = stub.calls
    decision, _ = hook_decision(app, command, env={"GUARD_API_BASE": stub.url}, started_in=app.parent)
    return decision, stub.calls - before


@pytest.mark.parametrize("route", range(len(ROUTES)), ids=[str(i) for i in range(len(ROUTES))])
def test_a_read_that_reaches_a_credential_goes_to_the_judge(app: Path, stub: StubServer, route: int) -> None:
    setup, read = ROUTES[route]
    setup(app)
    command = read(app)
    assert _decide(app, command, stub) == ("deny", 1), command


def test_the_same_reads_of_a_project_without_credentials_stay_in_the_lane(app: Path, stub: StubServer) -> None:
    _git(app, "commit", "-q", "--allow-empty", "-m", "second")
    for command in ("cat sub/x.p*", "cat notes.txt", "grep -rn x .", "rg -uu x", "git show --stat", "git log --stat"):
        assert _decide(app, command, stub) == ("allow", 0), command
    (app / "sub" / ".env").write_text("API_KEY=SECRET\n")
    for command in ("find . -type f", "tree -a", "ls -laR"):  # names, not what the files hold
        assert _decide(app, command, stub) == ("allow", 0), command


def _call(
    app: Path, stub: StubServer, tool: str, tool_input: dict[str, object], client: str = "claude"
) -> tuple[bool, int, str]:
    """One tool call in ``app`` through ``guard hook --format CLIENT``: (denied, judge requests it made, what guard said)."""
    event = {
        "hook_event_name": "BeforeTool" if client == "gemini" else "PreToolUse",
        "session_id": "s",
        "cwd": str(app),
        "tool_name": tool,
        "tool_input": tool_input,
    }
    before = stub.calls
    proc = run_guard(
        ["hook", "--format", client], app.parent, stdin=json.dumps(event), env={"GUARD_API_BASE": stub.url}
    )
    said = proc.stdout + proc.stderr
    assert "Traceback" not in said, said
    return proc.returncode == 2 or '"deny"' in proc.stdout, stub.calls - before, said


@pytest.mark.parametrize(
    ("client", "tool", "key"), [("codex", "Bash", "workdir"), ("gemini", "run_shell_command", "directory")]
)
def test_a_read_in_the_folder_a_tool_input_names_is_checked_there(
    app: Path, stub: StubServer, client: str, tool: str, key: str
) -> None:
    """Codex's ``workdir`` and Gemini's ``directory`` say where the command runs: ``cat config`` there is ~/.aws/config,
    not the project's ``config``; before, its words were checked against the event's folder and it was in the lane."""
    aws = Path.home() / ".aws"
    aws.mkdir()
    (aws / "config").write_text("[default]\naws_secret_access_key = SECRET\n")
    for folder, command, judged in (
        (str(aws), "cat config", 1),
        ("../../home/.aws", "cat config", 1),
        ("sub", "cat x.py", 0),
        (str(app), "cat notes.txt", 0),
    ):
        denied, calls, said = _call(app, stub, tool, {"command": command, key: folder}, client)
        assert (denied, calls) == (bool(judged), judged), (folder, said)


def test_a_built_in_read_of_a_name_with_a_space_is_checked_whole(app: Path, stub: StubServer) -> None:
    """A read tool's path is one name, though it holds a space, a quote or a ``;``: before, the lane checked its pieces
    (``…/app/a`` and ``b``), neither of them the link ``a b`` to ~/.ssh/id_rsa, and Read printed the key in the lane
    (and LS of ``k(l``, a link to ~/.ssh, listed it)."""
    (app / "a b").symlink_to(_secret_at_home(app))
    (app / "k(l").symlink_to(Path.home() / ".ssh")
    (app / "my notes.txt").write_text("notes\n")
    for tool, tool_input, judged in (
        ("Read", {"file_path": str(app / "a b")}, 1),
        ("LS", {"path": str(app / "k(l")}, 1),
        ("Read", {"file_path": str(app / "my notes.txt")}, 0),
    ):
        assert _call(app, stub, tool, tool_input)[1] == judged, tool_input


@pytest.mark.parametrize(
    "extra",
    [
        {"env": {"LD_PRELOAD": "./evil.so"}},  # the library runs as cat starts
        {"working_directory": "../../home/.aws"},  # local_shell's own name for the folder
        {"workdir": ".", "cwd": "../../home/.aws"},  # two folders: which one the client takes is not known
        {"user": "root"},
    ],
    ids=["env", "working_directory", "two-folders", "user"],
)
def test_a_shell_tool_input_that_changes_how_its_command_runs_goes_to_the_judge(
    app: Path, stub: StubServer, extra: dict[str, object]
) -> None:
    """Codex's ``local_shell`` carries ``env``, ``working_directory`` and ``user`` beside its command: before, the lane
    proved ``cat notes.txt`` whatever they said (with ``LD_PRELOAD`` a library the agent wrote runs, unjudged)."""
    assert _call(app, stub, "local_shell", {"command": ["cat", "notes.txt"], **extra}, "codex")[1] == 1
    # the same read, in the folder it names as one string, stays in the lane
    assert _call(app, stub, "local_shell", {"command": ["cat", "notes.txt"], "workdir": str(app)}, "codex")[1] == 0


def test_a_shell_tool_input_with_two_different_lines_is_read_as_neither(app: Path, stub: StubServer) -> None:
    """Codex's ``exec_command`` runs ``cmd``: with ``command`` beside it holding another line, the lane proved
    ``command`` and allowed the call unjudged, and self-protection never read ``cmd`` (rm guard.yaml ran)."""
    for cmd, refused_by_protection in (("pwd", False), ("rm ../guard.yaml", True)):
        denied, calls, said = _call(app, stub, "exec_command", {"command": "cat notes.txt", "cmd": cmd}, "codex")
        assert denied, (cmd, said)
        assert calls == (0 if refused_by_protection else 1), (cmd, said)
        assert ("guard.protect" in said) == refused_by_protection, (cmd, said)


def test_an_argv_whose_shell_is_not_the_system_s_goes_to_the_judge(app: Path, stub: StubServer) -> None:
    """Codex runs ``["bash", "-lc", LINE]`` as given: with ``./bash`` (a program the agent wrote) in its place, the lane
    proved LINE and the agent's program ran unjudged."""
    (app / "bash").write_text("#!/bin/sh\necho ran > ran.txt\n")
    (app / "bash").chmod(0o755)
    for shell, judged in (("./bash", 1), (str(app / "bash"), 1), ("bash", 0), ("/bin/sh", 0)):
        assert _call(app, stub, "shell", {"command": [shell, "-lc", "cat notes.txt"]}, "codex")[1] == judged, shell


def test_an_mcp_server_s_shell_tool_is_read_as_a_shell_tool(app: Path, stub: StubServer) -> None:
    """The prover reads ``mcp__srv__bash``'s command as a shell line; the lane read it as a tool's words, so git's content
    reads, which it leaves to the judge, were never looked for: ``git log -p`` printed a removed .env unjudged."""
    _history(app)
    assert _call(app, stub, "mcp__srv__bash", {"command": "git log -p"})[1] == 1
