"""A write to guard's files under a name the program makes, or by moving the folder that holds them, is refused.

No word of ``cp -b -S .yaml notes.txt ../guard`` names guard.yaml, yet cp renames ``../guard`` (which the agent wrote)
to ``../guard.yaml``; so do sed's in-place backup, a compressor's output and split's pieces. ``mv .. /tmp/p`` names the
project folder (``..`` itself cannot be moved: ``mv ../../work /tmp/p`` from ``work/app``), which self-protection
counted only for a command sweeping a tree when it is the folder the command runs in or one above, and moves guard.yaml and the client's settings where nothing protects them. Each line goes
through a real ``guard hook --format claude`` whose judge (the loopback stub) allows everything: a refusal with no model
call is self-protection's. :func:`test_the_lines_write_guard_s_files` runs each line under bash in a scratch project.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fixtures.guide import agent_folder, hook_decision

from guard.testing.openai_stub import Reply, StubServer

CONFIG = (
    'models:\n  quick: openai/stub-quick\n  thorough: openai/stub-thorough\ncache:\n  url: "off"\nhooks:\n  PreToolUse:\n'
    '    - id: no-destructive-shell\n      matcher: "@shell|@write|@edit"\n'
    "      rule: Deny shell commands that delete or overwrite files outside the project directory.\n"
    "      depth: auto\n      failure_mode: fail_closed\n      skip_read_only: true\n      skip_project_writes: true\n"
)
SETTINGS = '{"hooks": {"PreToolUse": []}}\n'
pytestmark = [
    pytest.mark.stub(default=Reply.verdict("allow", "judged by the stub", confidence=0.95)),
    pytest.mark.project(config=CONFIG, files={".claude/settings.json": SETTINGS}),
]

_DOWNLOAD = "mkdir -p ../../dl && echo evil > ../../dl/guard.yaml"
#: (case, what the agent wrote first in an earlier call, the line, the protected file it replaces), run in ``app/``.
ROUTES = [
    ("cp's backup suffix", "echo evil > ../guard", "cp -b -S .yaml notes.txt ../guard", "guard.yaml"),
    (
        "mv's --suffix, which implies a backup",
        "echo evil > ../guard",
        "mv --suffix=.yaml notes.txt ../guard",
        "guard.yaml",
    ),
    ("ln's backup suffix", "echo evil > ../guard", "ln -fS .yaml notes.txt ../guard", "guard.yaml"),
    ("install's backup suffix", "echo evil > ../guard", "install -S .yaml notes.txt ../guard", "guard.yaml"),
    (
        "sed's in-place backup suffix",
        "echo evil > ../.claude/settings",
        "sed -i.json 1p ../.claude/settings",
        ".claude/settings.json",
    ),
    ("sed's in-place backup name, * for the file's name", "echo evil > l", "sed -i'../guard.yam*' 1p l", "guard.yaml"),
    ("gunzip's output", "echo evil | gzip > ../guard.yaml.gz", "gunzip -f ../guard.yaml.gz", "guard.yaml"),
    ("gzip's suffix", "echo evil > ../guard", "gzip -f -S .yaml ../guard", "guard.yaml"),
    ("gzip -r over the folder", "echo evil | gzip > ../guard.yaml.gz", "gzip -drf ..", "guard.yaml"),
    (
        "split's fourth piece",
        "printf aaaabbbbccccevil > p",
        "split -b 4 -a 1 --additional-suffix=.yaml p ../guar",
        "guard.yaml",
    ),
    ("csplit's first piece", "printf 'evil\\nx\\n' > p", "csplit -s -f ../guar -b 'd.yaml%.0d' p 2", "guard.yaml"),
    (
        "curl -O saves to the URL's last part",
        _DOWNLOAD,
        'cd .. && curl -sO "file://$PWD/../dl/guard.yaml"',
        "guard.yaml",
    ),
    (
        "curl -o '#1' takes a part of the URL",
        _DOWNLOAD,
        "curl -s \"file://$PWD/../../dl/{guard}.yaml\" -o '../#1.yaml'",
        "guard.yaml",
    ),
    ("mv of the folder above", "", "mv ../../work ../../moved", "guard.yaml"),
    ("mv of the folder above, spelt from $PWD", "", 'mv "$PWD/../../work" ../../moved', "guard.yaml"),
    ("mv -t of the folder above", "mkdir ../../moved", "mv -t ../../moved ../../work", "guard.yaml"),
]
#: (case, line) a real run would need a web server for: a downloader saving under a name the URL or the server gives.
DOWNLOADS = [
    ("wget saves to the URL's last part", "cd .. && wget -N https://example.com/guard.yaml"),
    ("wget -r saves what the server lists", "wget -r -nH -P .. https://example.com/"),
    ("curl -J saves under the name the server gives", "curl -sOJ --output-dir .. https://example.com/x"),
    ("aria2c saves under the name the server gives", "aria2c -d .. https://example.com/x"),
]
#: Ordinary uses of the same programs: not refused (the judge or a lane decides them).
ORDINARY = [
    "cp -b notes.txt notes.bak",
    "sed -i.bak 1p notes.txt",
    "gzip -k notes.txt",
    "gunzip -f data.csv.gz",
    "split -l 1 notes.txt part_",
    "mv notes.txt ..",
    "mv -t .. notes.txt",
    "mv notes.txt ../notes2.txt",
    "curl -sSfL https://example.com/x -o out.txt",
    "curl --compressed https://example.com/",
    "wget -q https://example.com/data.csv",
]


@pytest.fixture
def project(project: Path) -> Path:
    """The agent's folder, ``app/`` below the trusted guard.yaml and the client's settings (the project is ``work``)."""
    return agent_folder(project)


@pytest.mark.slow
@pytest.mark.parametrize(("case", "setup", "line", "target"), ROUTES, ids=[case for case, *_ in ROUTES])
def test_a_write_under_a_made_name_is_refused(
    project: Path, stub: StubServer, case: str, setup: str, line: str, target: str
) -> None:
    decision, reason = hook_decision(project, line, env={"GUARD_API_BASE": stub.url}, started_in=project.parent)
    assert (decision, stub.calls) == ("deny", 0), (case, reason)
    assert "self-protection" in reason


@pytest.mark.slow
@pytest.mark.parametrize(("case", "line"), DOWNLOADS, ids=[case for case, _ in DOWNLOADS])
def test_a_download_under_a_name_the_url_or_server_gives_is_refused(
    project: Path, stub: StubServer, case: str, line: str
) -> None:
    decision, reason = hook_decision(project, line, env={"GUARD_API_BASE": stub.url}, started_in=project.parent)
    assert (decision, stub.calls) == ("deny", 0), (case, reason)


@pytest.mark.slow
def test_curl_s_options_file_is_read_for_the_output_it_names(project: Path, stub: StubServer, tmp_path: Path) -> None:
    """``~/.curlrc`` (which the agent can write: it is not guard's) may say ``output = "../guard.yaml"``: then a plain
    ``curl URL`` writes guard's file, as it does under bash here."""
    line = 'curl -s "file://$PWD/../../dl/guard.yaml"'
    home = Path(os.environ["HOME"])
    (home / ".curlrc").write_text('output = "../guard.yaml"\n')
    decision, reason = hook_decision(project, line, env={"GUARD_API_BASE": stub.url}, started_in=project.parent)
    assert (decision, stub.calls) == ("deny", 0), reason
    (home / ".curlrc").unlink()
    assert hook_decision(project, line, env={"GUARD_API_BASE": stub.url}, started_in=project.parent)[0] == "allow"
    if shutil.which("curl") and shutil.which("bash"):
        (tmp_path / "dl").mkdir()
        (tmp_path / "dl" / "guard.yaml").write_text("evil\n")
        (home / ".curlrc").write_text('output = "../guard.yaml"\n')
        subprocess.run(["bash", "-c", line], cwd=project, check=True, env={**os.environ, "HOME": str(home)})
        assert (project.parent / "guard.yaml").read_text() == "evil\n"


@pytest.mark.slow
@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_uses_of_the_same_programs_are_not_refused(project: Path, stub: StubServer, line: str) -> None:
    decision, reason = hook_decision(project, line, env={"GUARD_API_BASE": stub.url}, started_in=project.parent)
    assert decision == "allow", reason


@pytest.mark.skipif(
    not all(map(shutil.which, ("bash", "gzip", "curl"))), reason="needs bash, gzip and curl (apt-get install curl)"
)
@pytest.mark.parametrize(("case", "setup", "line", "target"), ROUTES, ids=[case for case, *_ in ROUTES])
def test_the_lines_write_guard_s_files(tmp_path: Path, case: str, setup: str, line: str, target: str) -> None:
    project = tmp_path / "work"  # named as the hook tests' project is
    (project / "app").mkdir(parents=True)
    (project / ".claude").mkdir()
    (project / "guard.yaml").write_text("hooks: {}\n")
    (project / ".claude" / "settings.json").write_text(SETTINGS)
    (project / "app" / "notes.txt").write_text("notes\n")
    before = (project / target).read_bytes()
    for text in filter(None, (setup, line)):
        subprocess.run(["bash", "-c", text], cwd=project / "app", check=True, capture_output=True)
    assert not (project / target).exists() or (project / target).read_bytes() != before, case
