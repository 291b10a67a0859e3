"""Crafted lines the prover proved and the shell ran otherwise, each through a real ``guard hook --format claude``.

The config turns both lanes on, protection stays on, and the judge is the loopback stub that counts its requests and
answers *allow*: a line the prover proves is allowed with no model call, so a case that reaches the stub (or is refused
by self-protection) was not proven. Random lines of the differential verifier missed each of these; each was proven and
did what its case says under bash (:func:`test_the_lines_do_what_they_say` runs them in a scratch folder).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from fixtures.guide import hook_decision

from guard.testing.openai_stub import Reply, StubServer

CONFIG = (
    'models:\n  quick: openai/stub-quick\n  thorough: openai/stub-thorough\ncache:\n  url: "off"\nhooks:\n  PreToolUse:\n'
    '    - id: no-destructive-shell\n      matcher: "@shell|@write|@edit"\n'
    "      rule: Deny shell commands that delete or overwrite files outside the project directory.\n"
    "      depth: auto\n      failure_mode: fail_closed\n      skip_read_only: true\n      skip_project_writes: true\n"
)
pytestmark = [
    pytest.mark.stub(default=Reply.verdict("allow", "judged by the stub", confidence=0.95)),
    pytest.mark.project(config=CONFIG, files={".claude/settings.json": '{"hooks": {"PreToolUse": []}}\n'}),
]

#: (case, line): bash runs code the line hides from a reader that does not join a line continuation as bash does.
RUNS_CODE = [
    ("$\\<newline>( in double quotes is a command substitution", 'cat "$\\\n(touch ran.txt)"'),
    ("$\\<newline>( in an unquoted here-document is one too", "cat <<EOF\n$\\\n(touch ran.txt)\nEOF"),
    (
        "a continued line spells the delimiter: bash ends the here-document there",
        "cat <<EOF\nEO\\\nF\ntouch ran.txt\nEOF",
    ),
    ("$\\<newline>' is $'…' to bash: its \\' does not end the quote", "echo $\\\n'\\''; touch ran.txt #'"),
]


def hook(project: Path, stub: StubServer, command: str) -> tuple[str, str]:
    """(decision, reason) of a real ``guard hook --format claude``, started beside guard.yaml, on ``command`` run in ``project``."""
    return hook_decision(project, command, env={"GUARD_API_BASE": stub.url}, started_in=project.parent)


@pytest.fixture
def project(project: Path) -> Path:
    """The agent's folder, ``app/`` below the trusted guard.yaml and the client's settings."""
    app = project / "app"
    app.mkdir()
    (app / "notes.txt").write_text("notes\n")
    return app


@pytest.mark.slow
@pytest.mark.parametrize(("case", "command"), RUNS_CODE, ids=[case for case, _ in RUNS_CODE])
def test_a_line_that_runs_code_reaches_the_judge(project: Path, stub: StubServer, case: str, command: str) -> None:
    decision, _ = hook(project, stub, command)
    assert decision == "allow" and stub.calls >= 1, case  # the stub allows: only a model call shows it was not proven


#: The same forms hiding a write of the client's hook settings (``../.claude/settings.json``, which each line names):
#: self-protection proves a command naming it only when it reads, and proved ``cat`` or ``echo`` here.
WRITES_GUARD_S_FILES = [
    ("$\\<newline>( in double quotes", 'cat "$\\\n(echo {} > ../.claude/settings.json)"'),
    (
        "$\\<newline>' hides a second command from a reader that does not join it",
        "echo $\\\n'\\''; touch ../.claude/settings.json #'",
    ),
    ("$\\<newline>( in an unquoted here-document", "cat <<EOF\n$\\\n(echo {} > ../.claude/settings.json)\nEOF"),
    ("a continued line spells the delimiter", "cat <<EOF\nEO\\\nF\necho {} > ../.claude/settings.json\nEOF"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("case", "command"), WRITES_GUARD_S_FILES, ids=[case for case, _ in WRITES_GUARD_S_FILES])
def test_a_hidden_write_of_guard_s_files_is_refused(project: Path, stub: StubServer, case: str, command: str) -> None:
    before = (project.parent / ".claude" / "settings.json").read_text()
    decision, reason = hook(project, stub, command)
    assert decision == "deny" and "guard self-protection" in reason, (case, reason)
    assert (project.parent / ".claude" / "settings.json").read_text() == before


BASH = shutil.which("bash")


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize(("case", "command"), RUNS_CODE, ids=[case for case, _ in RUNS_CODE])
def test_the_lines_do_what_they_say(tmp_path: Path, case: str, command: str) -> None:
    subprocess.run([str(BASH), "-c", command], cwd=tmp_path, capture_output=True, timeout=30, check=False)
    assert (tmp_path / "ran.txt").exists(), case
