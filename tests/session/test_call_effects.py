"""What a call does with the project's files: what it writes, whether it may run code it does not name, which code it runs.

These answers decide what the judge is shown before code runs and when an earlier judgement may answer a call: a
call wrongly read as running no code would hide what the agent wrote from the judge, and two calls wrongly read as
the same code would let one judgement answer for code no judge saw.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from guard.session.call_effects import outlives, run_identity, runs_code, writes_unnamed, written_paths

ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent-home"}


@pytest.mark.parametrize(
    "command",
    [
        "python3 repro.py",
        "pytest -q",
        "python -m pytest tests",
        "make test",
        "npm test",
        "pnpm run lint",
        "yarn test",
        "cargo test",
        "go test ./...",
        "tox -e py311",
        "nox",
        "bash run.sh",
        "./tool --fix",
        "sed -i 's/a/b/' src.py",
        "PATH=. ls",
        "LD_PRELOAD=./x.so rm a",
        "$(echo rm) a",
        "rm a && ./build.sh",
        "find . -name '*.pyc' -exec rm {} +",
        "xargs rm < list",
        "some-unknown-runner --all",
        'rm a > "$(python3 evil.py)"',
        "rm a 2>`./x`",
        "> $(./x)",
        "X=$(./x)",
        "rm a <<EOF\n$(./x)\nEOF",
        "rm a < <(./x)",
        "echo a > $((x))",  # arithmetic on a variable runs the substitutions its value holds
        "rm $((x))",
        "rm ${!x}",
        "rm ${x@P}",
    ],
)
def test_any_program_not_known_to_run_nothing_may_run_project_code(tmp_path: Path, command: str) -> None:
    assert runs_code("Bash", {"command": command}, str(tmp_path), ENV)


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat a.py | grep def",
        "rm -rf build dist",
        "mkdir -p out && cp a.txt out/",
        "mv old.py new.py",
        "touch x && chmod 644 x",
        "echo done > notes.txt",
        "git status",
        "git log --oneline -5",
        "rm -rf ~/old-project",
        "rm -f build/*.pyc",
        "cat <<'EOF' > notes.txt\n$(not run: the document is quoted)\nEOF",
    ],
)
def test_reads_and_file_utilities_run_no_project_code(tmp_path: Path, command: str) -> None:
    assert not runs_code("Bash", {"command": command}, str(tmp_path), ENV)


def test_git_runs_code_when_its_repository_names_a_program(tmp_path: Path) -> None:
    (tmp_path / ".git" / "objects").mkdir(parents=True)
    (tmp_path / ".git" / "refs").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / ".git" / "config").write_text("[core]\n\tfsmonitor = ./watch.sh\n")
    assert runs_code("Bash", {"command": "git status"}, str(tmp_path), ENV)


def test_a_program_found_outside_the_system_folders_may_be_the_agents(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    planted = tmp_path / "bin" / "rm"
    planted.write_text("#!/bin/sh\npython3 evil.py\n")
    planted.chmod(0o755)
    assert runs_code("Bash", {"command": "rm a"}, str(tmp_path), {**ENV, "PATH": f"{tmp_path / 'bin'}:/usr/bin"})


def test_tools_other_than_the_shell(tmp_path: Path) -> None:
    assert runs_code("mcp__ci__run_tests", {"suite": "all"}, str(tmp_path), ENV)
    assert not runs_code("Write", {"file_path": "a.py", "content": ""}, str(tmp_path), ENV)
    assert not runs_code("Read", {"file_path": "a.py"}, str(tmp_path), ENV)


def test_the_files_a_call_names_as_written(tmp_path: Path) -> None:
    (tmp_path / "dst").mkdir()
    cwd = str(tmp_path)

    def named(tool: str, tool_input: dict[str, object]) -> dict[str, str]:
        return {os.path.relpath(path, cwd): how for path, how in written_paths(tool, tool_input, cwd)}

    assert named("Write", {"file_path": "a.py", "content": "x"}) == {"a.py": "Write"}
    assert named("MultiEdit", {"file_path": str(tmp_path / "b.py"), "edits": []}) == {"b.py": "MultiEdit"}
    assert named("NotebookEdit", {"notebook_path": "n.ipynb", "new_source": ""}) == {"n.ipynb": "NotebookEdit"}
    patch = "*** Begin Patch\n*** Update File: c.py\n*** Add File: d.py\n+x\n*** End Patch"
    assert named("apply_patch", {"command": ["apply_patch", patch]}) == {"c.py": "apply_patch", "d.py": "apply_patch"}
    assert named("mcp__filesystem__write_file", {"path": "e.txt", "content": ""}) == {
        "e.txt": "MCP tool mcp__filesystem__write_file"
    }
    assert named("mcp__github__get_issue", {"path": "f.txt"}) == {}
    line = (
        "echo x > a.txt && sed -i 's/a/b/' b.py c.py && cp src.py dst && tee -a log.txt < in.txt && rm old.py "
        "&& dd if=/dev/zero of=blob bs=1 count=1 && cd sub && touch new.py"
    )
    assert named("Bash", {"command": line}) == {
        "a.txt": "shell: > redirection",
        "b.py": "shell: sed -i",
        "c.py": "shell: sed -i",
        "dst/src.py": "shell: cp",
        "log.txt": "shell: tee",
        "old.py": "shell: rm",
        "blob": "shell: dd",
        "sub/new.py": "shell: touch",
    }
    assert named("Bash", {"command": "sed -n '1,5p' b.py > /dev/null"}) == {}  # no -i, and /dev/null is no file


def test_a_write_through_a_link_to_a_file_names_the_file_it_lands_in(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper.py").write_text("")
    (tmp_path / "h.py").symlink_to(tmp_path / "lib" / "helper.py")
    cwd = str(tmp_path)
    assert {os.path.relpath(p, cwd) for p, _ in written_paths("Bash", {"command": "cat x > h.py"}, cwd)} == {
        "h.py",
        "lib/helper.py",
    }
    assert [os.path.relpath(p, cwd) for p, _ in written_paths("Bash", {"command": "rm h.py"}, cwd)] == ["h.py"]


@pytest.mark.parametrize(
    ("command", "unnamed"),
    [
        ('tee /dev/null < p.txt > "$PWD/.venv/x.py"', True),
        ("cat p.txt > lib/h*.py", True),
        ("cp -S .orig p.txt lib/x.py", True),
        ("ln -s lib sp && cat p.txt > sp/x.py && rm sp", True),
        ("cat <<'EOF' > repro.py\nprint(1)\nEOF", False),
        ("cp p.txt lib/x.py", False),
        ("rm -rf build && mkdir -p build", False),  # nothing put in place
        ("python3 repro.py > out.txt", False),
        ("ls lib", False),
    ],
)
def test_a_line_whose_writes_the_record_may_not_name(tmp_path: Path, command: str, unnamed: bool) -> None:
    """Such a line makes the next walk look below other people's code too: a write the record misnamed may land there."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "p.txt").write_text("x\n")
    assert writes_unnamed("Bash", {"command": command}, str(tmp_path), ENV) is unnamed


def test_one_identity_for_the_spellings_of_one_run(tmp_path: Path) -> None:
    script = tmp_path / "repro.py"
    script.write_text("#!/usr/bin/env python3\nprint(1)\n")
    cwd = str(tmp_path)

    def identity(command: str) -> tuple[dict[str, object], list[str]] | None:
        return run_identity("Bash", {"command": command}, cwd, ENV)

    first = identity("python3 repro.py")
    assert first is not None and first[1] == [str(script)]
    for spelling in (
        "python repro.py",
        "python3.11 repro.py",
        "./repro.py",
        f"{script}",
        f"python3 {script}",
        f"cd {tmp_path} && python3 repro.py",
        "python3 repro.py 2>&1",
        "python3 repro.py 2>&1 | tail -n 20",
        "python repro.py | grep -i error",
        "python3 repro.py >/dev/null",
    ):
        assert identity(spelling) == first, spelling
    for other in (
        "python3 repro.py --all",
        "python3 -u repro.py",
        "PYTHONPATH=src python3 repro.py",
        "python3 repro.py > out.txt",
        "python3 repro.py | tee out.txt",
        "python3 repro.py && rm -rf build",
    ):
        assert identity(other) not in (None, first), other
    for unreadable in (
        "python3 repro.py; rm -rf /",
        "python3 repro.py || true",
        "python3 $SCRIPT",
        "python3 repro.py &",
        "(python3 repro.py)",
        "python3 - <<'EOF'\nprint(1)\nEOF",
        "cd $HOME && python3 repro.py",
        "for f in *.py; do python3 $f; done",
    ):
        assert identity(unreadable) is None, unreadable


@pytest.mark.parametrize(
    ("command", "lasting"),
    [
        ('make > "$LOG" 2>&1', False),
        ("a && b || c |& d &>out", False),
        ("echo 'x & y' \"&\" \\&", False),
        ("(sleep 9; cp a b) &", True),
        ('serve > "$PWD/log" 2>&1 & echo started', True),
        ("nohup sh -c 'cp a b'", True),
        ("echo 'cp a b' | at now", True),
        ('coproc { sleep 9; cp a "$D/b"; }', True),  # bash keeps a coprocess running past the line
        ('true > >(sleep 9; cp a "$D/b")', True),  # nor does it wait for a process substitution
        ("echo 'x\\'; (sleep 9; cp a \"$D/b\") &", True),  # a backslash in single quotes hides no &
        ("echo $'\\'' & '", True),
        ('env setsid -f cp a "$D/b"', True),  # behind a wrapper
        ("flock /tmp/l -c 'cp a b'", False),  # a shell the wrapper starts, whose word is not the line's
        ("env -S 'sh -c ls'", False),
        ("nohup flock /tmp/l -c 'cp a b'", True),
        ("echo $'&' '<(x)' at", False),
    ],
)
def test_a_line_that_leaves_a_job_running_is_told_from_one_that_ends(command: str, lasting: bool) -> None:
    """Its unnamed writes may come after any walk (guard.session.provenance keeps looking below other people's code)."""
    assert outlives("Bash", {"command": command}) is lasting
    assert outlives("Bash", {"command": "ls", "run_in_background": True})
