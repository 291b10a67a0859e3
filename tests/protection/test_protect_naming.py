"""Self-protection by what a call names (#22 items 2, 5-8, 11): every client's payloads through a real ``guard hook``.

Each case is an attack from issue #22 that today's main allowed: guard's own CLI run
from a tool call, other spellings of writers, writers the old analyser did not
know, routes to the secret it did not follow, tool fields it did not read, and
inputs built to outrun the deadline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fixtures.processes import run_guard

import guard

CONFIG = "hooks:\n  PreToolUse:\n    - id: no-fetch\n      matcher: WebFetch\n      command: 'exit 2'\n"
#: Each client's PreToolUse payload for a tool call (Copilot sends its arguments as a JSON string).
CLIENTS = {
    "claude": lambda cwd, tool, args: {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "cwd": cwd,
        "tool_name": tool,
        "tool_input": args,
    },
    "codex": lambda cwd, tool, args: {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "cwd": cwd,
        "tool_name": tool,
        "tool_input": args,
    },
    "gemini": lambda cwd, tool, args: {
        "hook_event_name": "BeforeTool",
        "session_id": "s",
        "cwd": cwd,
        "tool_name": tool,
        "tool_input": args,
    },
    "copilot": lambda cwd, tool, args: {"toolName": tool, "toolArgs": json.dumps(args), "cwd": cwd, "timestamp": 1},
}


def run_hook(project: Path, client: str, tool: str, tool_input: dict[str, Any], *extra: str) -> tuple[bool, str, float]:
    """(denied, what guard said, seconds) for one call through ``guard hook --format CLIENT`` as the client runs it."""
    payload = CLIENTS[client](str(project), tool, tool_input)
    started = time.monotonic()
    proc = run_guard(["hook", "--format", client, *extra], project, stdin=json.dumps(payload))
    elapsed = time.monotonic() - started
    said = proc.stdout + proc.stderr
    assert "Traceback" not in said, said
    return proc.returncode == 2 or '"deny"' in proc.stdout, said, elapsed


pytestmark = pytest.mark.project(
    config=CONFIG,
    files={".claude/settings.json": '{"hooks": {}}\n', ".codex/hooks.json": "{}\n", "src/app.py": "print('hi')\n"},
)


@pytest.fixture(autouse=True)
def secret(isolated_home: Path) -> None:
    """guard's secret, there before the project's config is trusted with it (autouse: before ``project``)."""
    secret = Path(os.environ["XDG_CONFIG_HOME"]) / "guard" / "secret"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_bytes(b"k" * 32)


VENV_GUARD = str(Path(sys.prefix) / "bin" / "guard")
ATTACKS = [
    # item 2: guard's own CLI and service, from a tool call
    ("claude", "Bash", {"command": "guard install claude --uninstall"}),
    ("claude", "Bash", {"command": "python3 -m guard.cli.main install claude --scope user"}),
    ("claude", "Bash", {"command": f"{VENV_GUARD} trust --yes"}),
    ("claude", "Bash", {"command": 'echo \'{"hook_event_name": "UserPromptSubmit"}\' | env guard hook'}),
    ("claude", "Bash", {"command": "curl -s -X POST http://127.0.0.1:8787/v1/decide -d @event.json"}),
    ("codex", "Bash", {"command": "uv run guard import policy.md --out guard.yaml"}),
    ("claude", "Bash", {"command": "G=guard; $G install claude --uninstall"}),
    ("gemini", "run_shell_command", {"command": "sh -c 'guard install gemini --uninstall'"}),
    ("claude", "Bash", {"command": "python3 -c \"import subprocess; subprocess.run(['guard', 'trust'])\""}),
    # guard's CLI through a program that runs the command it is given: a terminal of its own (what `guard approve`'s question accepts a
    # typed yes from), another user or host, later
    ("claude", "Bash", {"command": "printf 'y\\n' | script -qc 'guard approve 3f9c0a17be' /dev/null"}),
    ("claude", "Bash", {"command": "expect -c 'spawn guard approve 3f9c0a17be; send y\\r; interact'"}),
    ("claude", "Bash", {"command": "socat - EXEC:'guard approve 3f9c0a17be',pty,setsid,ctty"}),
    ("claude", "Bash", {"command": "tmux new -d 'guard approve 3f9c0a17be' && tmux send-keys y Enter"}),
    ("claude", "Bash", {"command": "screen -dm guard approve 3f9c0a17be"}),
    ("claude", "Bash", {"command": 'sudo -u "$USER" guard trust --yes'}),
    ("claude", "Bash", {"command": "ssh localhost guard install claude --uninstall"}),
    ("claude", "Bash", {"command": "echo 'guard install claude --uninstall' | at now"}),
    ("claude", "Bash", {"command": "systemd-run --user --pty guard approve 3f9c0a17be"}),
    ("claude", "Bash", {"command": "pyenv exec guard approve 3f9c0a17be"}),
    # item 5: other spellings of writers
    ("claude", "Bash", {"command": "sed -Ei 's/deny/allow/' guard.yaml"}),
    ("claude", "Bash", {"command": "perl -pi -e 's/deny/allow/' guard.yaml"}),
    ("claude", "Bash", {"command": "cp -t. /tmp/evil/guard.yaml"}),
    ("claude", "Bash", {"command": "mv --target-directory=.claude /tmp/evil/settings.json"}),
    ("claude", "Bash", {"command": "echo '{}' | tee guard.yam{l,}"}),
    ("claude", "Bash", {"command": "echo '{}' | tee {guard.yaml,/dev/null}"}),
    # item 6: writers the old analyser did not know
    ("claude", "Bash", {"command": "sqlite3 ~/.local/state/guard/audit.db 'DELETE FROM decisions'"}),
    ("claude", "Bash", {"command": "rsync -a /tmp/evil/ ."}),
    ("claude", "Bash", {"command": "vim -es -c 'g/deny/d' -c wq guard.yaml"}),
    ("claude", "Bash", {"command": "tar -xf /tmp/evil.tar"}),
    ("claude", "Bash", {"command": "git clean -fdx"}),
    ("claude", "Bash", {"command": "git rm -q .claude/settings.json"}),
    # item 7: the secret by routes the old analyser did not follow
    ("claude", "Bash", {"command": 'cat "$HOME"/.config/guard/secret'}),
    ("claude", "Bash", {"command": 'cat ${XDG_CONFIG_HOME}//guard/./sec"re"t'}),
    ("claude", "Bash", {"command": "cat ~/.config/gu?rd/*"}),
    ("claude", "Bash", {"command": "grep -r . ~/.config"}),
    ("claude", "Bash", {"command": "find ~ -name secret -exec cat {} \\;"}),
    ("claude", "Grep", {"pattern": ".", "path": "~/.config"}),
    ("claude", "Glob", {"pattern": "**/secret", "path": "~"}),
    # item 8: tool fields the old rule did not read
    ("gemini", "run_shell_command", {"command": "echo '{}' > settings.json", "directory": ".claude"}),
    ("codex", "Bash", {"command": "rm hooks.json", "workdir": ".codex"}),
    (
        "codex",
        "Bash",
        {
            "command": [
                "apply_patch",
                "*** Begin Patch\n*** Update File: .codex/hooks.json\n@@\n-{}\n+[]\n*** End Patch\n",
            ]
        },
    ),
    ("claude", "mcp__fs__write", {"relative_path": "guard.yaml", "content": ""}),
    ("claude", "mcp__ide__edit", {"pathInProject": ".claude/settings.json", "text": "{}"}),
    ("claude", "mcp__fs__save", {"uri": "file://{project}/guard.yaml", "data": ""}),
    ("claude", "mcp__fs__copy", {"src": "/tmp/x", "dst": "{project}/.claude/settings.json"}),
    ("claude", "mcp__x__render", {"outputPath": "guard.yaml"}),
    ("claude", "mcp__fs__write_many", {"files": [{"path": "ok.txt"}, {"path": ".codex/hooks.json"}]}),
    ("claude", "mcp__rpc__call", {"params": {"path": "guard.yaml", "mode": "w"}}),
    ("copilot", "create", {"path": ".github/hooks/guard.json", "file_text": "{}"}),
    ("copilot", "bash", {"command": "rm -rf ~/.copilot"}),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("client", "tool", "tool_input"), ATTACKS, ids=[f"{c}-{json.dumps(i)[:60]}" for c, _, i in ATTACKS]
)
def test_attacks_of_issue_22_are_refused_through_guard_hook(
    project: Path, client: str, tool: str, tool_input: dict[str, Any]
) -> None:
    tool_input = json.loads(json.dumps(tool_input).replace("{project}", str(project)))
    denied, said, _ = run_hook(project, client, tool, tool_input)
    assert denied, said
    assert "guard self-protection" in said


ORDINARY = [
    ("claude", "Bash", {"command": "pytest -q . && git status --porcelain"}),
    ("claude", "Bash", {"command": "grep -rn 'def main' src/ | head -20"}),
    ("claude", "Bash", {"command": "find . -name '*.py' -not -path './.venv/*'"}),
    ("claude", "Bash", {"command": "cat guard.yaml .claude/settings.json | grep -c hooks"}),
    ("claude", "Bash", {"command": "sed -n '1,20p' guard.yaml && git diff --stat -- guard.yaml"}),
    ("claude", "Read", {"file_path": "guard.yaml"}),
    ("claude", "Grep", {"pattern": "hooks", "path": "."}),
    ("gemini", "run_shell_command", {"command": "ls -la", "directory": ".claude"}),
    ("codex", "Bash", {"command": ["bash", "-lc", "python -m pytest src"], "workdir": "."}),
    ("copilot", "bash", {"command": "wc -l src/app.py"}),
    ("claude", "Write", {"file_path": "docs/setup.md", "content": "Edit guard.yaml, then run `guard trust`.\n"}),
    ("claude", "Bash", {"command": "script -q /dev/null -c 'pytest -q' && tmux new -d 'npm run dev'"}),
    ("claude", "Bash", {"command": "sudo apt-get install -y jq && ssh ci 'tail -n 50 /var/log/guard.log'"}),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("client", "tool", "tool_input"), ORDINARY, ids=[f"{c}-{json.dumps(i)[:60]}" for c, _, i in ORDINARY]
)
def test_ordinary_work_beside_guard_s_files_is_allowed(
    project: Path, client: str, tool: str, tool_input: dict[str, Any]
) -> None:
    denied, said, _ = run_hook(project, client, tool, tool_input)
    assert not denied, said


#: The first folder of the path guard is installed under (``work`` for /work/main/guard): a holder of a protected path.
TOP = Path(guard.__file__).resolve().parts[1]


def test_a_word_of_a_sed_script_is_not_a_folder_at_the_root(project: Path) -> None:
    """``s/f(x):/f(x, y):/`` splits into a bare ``/`` and words; the words are not put at the top of the file system.

    CI failed on this: a real session's sed script held ``check`` and a ``:/``, and the
    repository sat under /check, so the edit of a Django file was refused.
    """
    denied, said, _ = run_hook(
        project, "claude", "Bash", {"command": f"sed -i '1s/def f(self, {TOP}):/def f(self, {TOP}, code):/' src/app.py"}
    )
    assert not denied, said


def test_an_mcp_filesystem_edit_is_refused_by_the_file_it_edits_not_by_the_text_it_writes(project: Path) -> None:
    """The reference MCP filesystem server's edit_file: ``path`` is what it writes; ``oldText``/``newText`` are its data."""
    edits = [{"oldText": "see the docs", "newText": "see guard.yaml and .claude/settings.json"}]
    denied, said, _ = run_hook(
        project, "claude", "mcp__filesystem__edit_file", {"path": str(project / "notes.md"), "edits": edits}
    )
    assert not denied, said
    denied, said, _ = run_hook(
        project, "claude", "mcp__filesystem__edit_file", {"path": str(project / "guard.yaml"), "edits": edits}
    )
    assert denied and "guard self-protection" in said, said
    denied, said, _ = run_hook(
        project, "claude", "mcp__filesystem__move_file", {"source": "x.json", "destination": ".claude/settings.json"}
    )
    assert denied and "guard self-protection" in said, said


def test_a_tree_copied_onto_the_root_over_guard_s_installation_is_refused(project: Path) -> None:
    """``cp -r work /`` merges ./work into /work, where guard's installation lives."""
    (project / TOP).mkdir()
    for command in (
        f"cp -r {TOP} /",
        f"python3 -c \"import shutil; shutil.copytree('{TOP}', '/', dirs_exist_ok=True)\"",
    ):
        denied, said, _ = run_hook(project, "claude", "Bash", {"command": command})
        assert denied and "guard self-protection" in said, (command, said)


@pytest.mark.parametrize(
    "tool,tool_input",
    [
        ("Write", {"file_path": "{site}/planted.pth", "content": "import os; os.system('id')\n"}),
        ("Bash", {"command": "echo 'import os' > {site}/planted.pth"}),
        ("Bash", {"command": "mkdir -p {site}"}),
    ],
    ids=["Write", "redirection", "mkdir"],
)
def test_a_file_in_the_user_site_packages_the_hook_reads_is_refused(
    project: Path, tool: str, tool_input: dict[str, str]
) -> None:
    """A ``.pth`` file there runs in every later ``guard hook`` whose interpreter reads the user's site-packages
    (a ``guard`` script's does; the ``python -I`` guard install writes does not, nor a venv's): then it is guard's
    installation. An interpreter that does not read it leaves the folder to the agent."""
    reads, site = subprocess.run(
        [sys.executable, "-c", "import site; print(bool(site.ENABLE_USER_SITE), site.getusersitepackages())"],
        capture_output=True,
        text=True,
    ).stdout.split()
    assert site.startswith(os.environ["HOME"])
    planted = {key: value.replace("{site}", site) for key, value in tool_input.items()}
    denied, said, _ = run_hook(project, "claude", tool, planted)
    if reads == "True":
        assert denied and "guard self-protection" in said and "guard's installation" in said, said
    else:
        assert "guard's installation" not in said, said


@pytest.mark.parametrize(
    "tool,tool_input",
    [
        ("Bash", {"command": "echo \"alias ls='rm -rf ~'\" >> ~/.bashrc"}),
        ("Write", {"file_path": "~/.claude/shell-snapshots/snapshot-bash-1.sh", "content": "alias cat=sh\n"}),
        ("Bash", {"command": "printf 'export PATH=$PWD/bin:$PATH' > ~/.claude/session-env/s1/hook-1.sh"}),
        ("Write", {"file_path": "~/.claude/daemon.json", "content": "{}"}),
        (
            "Bash",
            {
                "command": "python3 -c \"import json; p='$HOME/.claude.json'; json.dump({'mcpServers': {}}, open(p, 'w'))\""
            },
        ),
        ("Edit", {"file_path": "{home}/.claude.json", "old_string": "{", "new_string": '{"mcpServers": {},'}),
        ("Edit", {"file_path": "{home}/.zshrc", "old_string": "x", "new_string": "alias grep=sh"}),
        ("Bash", {"command": "cp aliases ~/.profile"}),
    ],
    ids=[
        "bashrc",
        "claude-shell-snapshot",
        "claude-session-env",
        "claude-daemon-settings",
        "claude-mcp-servers-by-python",
        "claude-mcp-servers",
        "zshrc",
        "profile",
    ],
)
def test_changing_the_shell_s_start_up_files_asks_a_person(
    project: Path, tool: str, tool_input: dict[str, str]
) -> None:
    """An alias there changes what a later command proven to only read really runs (Claude Code sources its shell
    snapshot before every Bash call), with no model call; a user may mean the change (a PATH line): a person decides.
    Reading them is not asked about, and a call that also changes guard's own files is still refused."""
    home = os.environ["HOME"]
    payload = CLIENTS["claude"](str(project), tool, {k: v.replace("{home}", home) for k, v in tool_input.items()})
    said = json.loads(run_guard(["hook"], project, stdin=json.dumps(payload)).stdout)["hookSpecificOutput"]
    assert said["permissionDecision"] == "ask", said
    assert "guard self-protection" in said["permissionDecisionReason"]
    assert "the shell's start-up files" in said["permissionDecisionReason"] or (
        "what the agent client starts by itself" in said["permissionDecisionReason"]
    )
    read, _, _ = run_hook(project, "claude", "Bash", {"command": "cat ~/.bashrc ~/.profile"})
    assert not read
    both, reason, _ = run_hook(project, "claude", "Bash", {"command": "echo x >> ~/.bashrc; echo y > guard.yaml"})
    assert both and "guard's config" in reason, reason


BIG = {
    "1 MB single word": "echo " + "a" * 1024 * 1024,
    "deep brace expansion": "touch " + "{a,b}" * 24 + " guard.yaml",
    "nested braces": "touch " + "{" * 5000 + "guard.yaml,y" + "}" * 5000,
    "long heredoc": "cat > notes.py <<'EOF'\n"
    + "\n".join(f"value_{i} = {i}" for i in range(40_000))
    + "\nEOF\necho > guard.yaml",
    "many function definitions": "f(){ :; }; " * 30_000,
}


@pytest.mark.slow
@pytest.mark.parametrize("command", BIG.values(), ids=BIG.keys())
def test_inputs_built_to_outrun_the_deadline_are_answered_in_time_and_refused(project: Path, command: str) -> None:
    """Under ``--deadline 5`` the answer comes before the client gives up, and is a refusal: never allowed for its size."""
    denied, said, elapsed = run_hook(project, "claude", "Bash", {"command": command}, "--deadline", "5")
    assert denied, said
    assert elapsed < 5, f"answered after {elapsed:.1f} s"


def test_an_input_too_large_to_judge_is_refused_even_with_fail_open(project: Path) -> None:
    """The rule's own failure_mode is fail_open; size is the agent's choice, so it is a refusal, not a failure."""
    denied, said, _ = run_hook(project, "claude", "Bash", {"command": "echo " + "x " * 300_000}, "--fail-open")
    assert denied and "too large to judge" in said


def test_a_parameter_operation_on_a_known_value_names_what_bash_makes(tmp_path: Path) -> None:
    """``${x%…}``, ``${x/…/…}``, ``${x:1}`` … of a value the line set are computed as bash computes them (checked here
    against bash itself), so ``x=guard.yamlu; rm ${x%u}`` names guard.yaml; what guard does not compute stays unknown."""
    from guard.protection.naming import units

    values = ["../guard.yamlu", "abcabc", "a/b/c.txt", "guard", "a.b.c"]
    operations = [
        *(op + pattern for op in ("#", "##", "%", "%%") for pattern in ("u", "a*", "*c", "[ab]", "?", "*.", "[!a]")),
        *(
            op + pattern + "/" + new
            for op in ("/", "//", "/#", "/%")
            for pattern in ("a", "b*", "?", "[ab]")
            for new in ("", "Z")
        ),
        *(":1", ":0:2", ": -2", ":1:-1", ": -9", "^^", ",", ",,"),
    ]
    cases = [(value, operation) for value in values for operation in operations]
    script = "\n".join(f"x='{value}'; printf '%s\\0' \"${{x{operation}}}\"" for value, operation in cases)
    made = subprocess.run(["bash"], input=script, capture_output=True, text=True, check=True).stdout.split("\0")[:-1]
    assert len(made) == len(cases)
    missed = []
    for (value, operation), bash_made in zip(cases, made, strict=True):
        line = f"x='{value}'; rm ${{x{operation}}}"
        (unit,) = [u for u in units("Bash", {"command": line}, str(tmp_path), {}) if u.program == "rm"]
        named = os.path.normpath(tmp_path / bash_made)
        if bash_made.strip("/") and "/" + named.lstrip("/") not in unit.paths:
            missed.append((line, bash_made, sorted(unit.paths)))
    assert missed == []  # a result with no path in it ("", "/") names nothing guard looks at
