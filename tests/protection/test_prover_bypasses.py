"""The bypasses of issue 35, each through a real ``guard hook --format claude`` with the README guide's rule: none is
decided in the lane any more, and the ones that touch guard's own files are refused by self-protection.

The config is the guide's (``skip_project_writes: true``, protection on), the judge the loopback stub that
counts its requests and answers deny. Before the prover was exact, every command below was allowed in the
lane with no model call (or, for guard's own files, let through by self-protection), and did what its case
says: :func:`test_the_bypasses_do_what_they_say` runs the cheap ones with bash in a scratch folder to show it.

Classes (the issue's numbering): 1 an expansion the prover read before bash performed it (braces made one
harmless-looking word into an option and its value); 2 an option spelling the prover did not read as the
program does (a sed script attached to ``-e``, given as ``--expression=``, inside a cluster; an abbreviation;
tree's letters that take the next word); 3 names, patterns or code read from a file or the environment; 4 a
builtin that changes the shell's state before a "reading program"; 6 the same spellings on guard's own files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fixtures.processes import run_guard

from guard.testing.openai_stub import Reply, StubServer

GUIDE = (
    'models:\n  quick: openai/stub-quick\n  thorough: openai/stub-thorough\ncache:\n  url: "off"\nhooks:\n  PreToolUse:\n'
    '    - id: no-destructive-shell\n      matcher: "@shell|@write|@edit"\n'
    "      rule: Deny shell commands that delete or overwrite files outside the project directory.\n"
    "      depth: auto\n      failure_mode: fail_closed\n      skip_project_writes: true\n"
)
pytestmark = [
    pytest.mark.stub(default=Reply.verdict("deny", "judged by the stub", confidence=0.95)),
    pytest.mark.project(config=GUIDE, files={".claude/settings.json": '{"hooks": {"PreToolUse": []}}\n'}),
]
PLANTED = "#!/bin/sh\necho planted > planted-ran.txt\n"  # runs in the project folder

#: (class, command) the lane may not decide: each reaches the judge (or self-protection, for a find or tree that walks the
#: project holding guard.yaml).
TO_THE_JUDGE = [
    ("1 braces: an output option", "sort p {-o,../outside.txt}"),
    ("1 braces: an output operand", "uniq {p,../uniq-out.txt}"),
    ("1 braces: --output= anywhere, with the agent's text", "sort {--output=../chosen.txt,p}"),
    ("1 braces: -delete", "find victim.txt {-delete,-print}"),
    ("1 braces: --compress-program=sh", "sort -u {--compress-program=sh,p}"),
    ("1 braces: a file outside the project, in a word that looked inside it", "cat {../outside-notes.txt,notes.txt}"),
    ("2 sed script attached to -e in a cluster", "sed -ne'w ../sed-out.txt' p"),
    ("2 sed script as --expression=", "sed --expression='1w ../sed-out.txt' p"),
    ("2 sed e inside a cluster", "sed -ne'1e touch ../sed-ran.txt' p"),
    (
        "2 sed e as a second -e",
        "sed -n -e p -e '1e id' p",
    ),  # this one and the next three were refused before too: kept so
    ("2 a getopt abbreviation: --comp is --compress-program", "sort --comp=sh p"),  # they stay refused (an unknown long
    (
        "2 a getopt abbreviation: --out is --output",
        "sort --out=../abbrev.txt p",
    ),  # option was refused; now it is resolved)
    ("2 tree's letters take the next words: -Po is -P WORD -o WORD", "tree -Po x conftest.py ."),
    ("3 names read from a file", "wc --files0-from=names.txt"),
    ("3 names read from a file", "file -f names.txt"),
    ("3 patterns read from a file", "grep -f p notes.txt"),
    ("3 magic read from a file", "file -m p notes.txt"),
    ("3 jq's env prints the environment", "jq -n 'env|tostring'"),
    ("3 decompressors run on the file", "file -z notes.txt"),
    ("4 printf -v PATH, then a reading program", "printf -v PATH %s bin; cat notes.txt"),
    ("4 read PATH, then a reading program", "read PATH <<< bin; cat notes.txt"),  # read was never on the list
    ("4 a {name}> redirection assigns PATH", "echo {PATH}>/dev/null; cat notes.txt"),
    ("4 cd, then a reading program", "cd bin && cat notes.txt"),
]


def event(project: Path, command: str) -> str:
    return json.dumps(
        {
            "session_id": "s1",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "cwd": str(project),
            "transcript_path": str(project.parent / "t.jsonl"),
        }
    )


def hook(project: Path, stub: StubServer, command: str) -> tuple[str, str]:
    """(decision, reason) of a real ``guard hook --format claude`` (started beside the guide's guard.yaml) on ``command`` run in
    ``project``, a folder below it: the config is not in the tree the commands walk, as with a config kept elsewhere."""
    proc = run_guard(
        ["hook", "--format", "claude"], project.parent, stdin=event(project, command), env={"GUARD_API_BASE": stub.url}
    )
    assert proc.returncode == 0, proc.stderr
    if not proc.stdout.strip():
        return "allow", ""
    output = json.loads(proc.stdout)["hookSpecificOutput"]
    return str(output["permissionDecision"]), str(output.get("permissionDecisionReason", ""))


@pytest.fixture
def project(project: Path) -> Path:
    """The agent's folder, ``app/`` below the trusted guard.yaml; the client's settings beside guard.yaml, out of the
    tree the commands walk (``@pytest.mark.project`` on this module)."""
    app = project / "app"
    app.mkdir()
    (app / "notes.txt").write_text("notes\n")
    (app / "src").mkdir()
    (app / "src" / "a.txt").write_text("notes\n")
    (app / "p").write_text("")  # a file named like a sed script, as the bypasses used
    (app / "victim.txt").write_text("keep me\n")
    (app / "names.txt").write_text(f"{app / 'notes.txt'}\0")
    planted = app / "bin" / "cat"
    planted.parent.mkdir()
    planted.write_text(PLANTED)
    planted.chmod(0o755)
    return app


@pytest.mark.slow
@pytest.mark.parametrize(("case", "command"), TO_THE_JUDGE, ids=[case for case, _ in TO_THE_JUDGE])
def test_each_bypass_reaches_the_judge(project: Path, stub: StubServer, case: str, command: str) -> None:
    decision, reason = hook(project, stub, command)
    judged = "rule no-destructive-shell" in reason and "judged by the stub" in reason and stub.calls >= 1
    assert decision == "deny" and (judged or "guard self-protection" in reason), (
        case,
        reason,
    )  # the lane did not decide it


def _protected(project: Path) -> dict[str, Path]:
    """The client's hook settings, a trusted-config record and the audit log, as the config in ``project`` protects them."""
    state = Path(os.environ["XDG_STATE_HOME"]) / "guard"
    records = sorted(p for p in (state / "trusted").rglob("*") if p.is_file())
    audits = sorted(state.rglob("audit.db"))
    assert records and audits
    return {"settings": project.parent / ".claude" / "settings.json", "record": records[0], "audit": audits[0]}


@pytest.mark.slow
def test_the_same_spellings_on_guard_s_own_files_are_refused_by_self_protection(
    project: Path, stub: StubServer
) -> None:
    hook(project, stub, "cat notes.txt")  # writes the first audit rows
    paths = _protected(project)
    attacks = {
        "settings": [
            "echo {} | sort {-o,../.claude/settings.json}",
            "sort {--output=../.claude/settings.json,p}",
            "sed -ne'w ../.claude/settings.json' p",
            "sed --expression='w ../.claude/settings.json' p",
            # the project's bin/cat, a planted program, becomes the "reading program" that opens the settings
            "printf -v PATH %s bin; cat ../.claude/settings.json",
            "printf {-v,PATH} %s bin; cat ../.claude/settings.json",
            "echo {PATH}>/dev/null; cat ../.claude/settings.json",
            "echo {} | sort -o ../.claude/settings.jso{n..n..1}",
        ],  # a sequence with a step: bash's braces, exactly
        "record": [
            f"sort p {{-o,{paths['record']}}}",
            f"sed -ne'w {paths['record']}' p",
            f"tree -Po x {paths['record']} .",
        ],
        "audit": [
            f"sed -ne'w {paths['audit']}' p",
            f"sed --expression='w {paths['audit']}' p",
            f"uniq {{p,{paths['audit']}}}",
        ],
    }
    before = {name: path.read_bytes() for name, path in paths.items()}
    for name, commands in attacks.items():
        for command in commands:
            decision, reason = hook(project, stub, command)
            assert decision == "deny" and "guard self-protection" in reason, (name, command, reason)
    assert paths["settings"].read_bytes() == before["settings"] and paths["record"].read_bytes() == before["record"]


@pytest.mark.slow
def test_plain_reads_and_project_writes_stay_in_the_lane(project: Path, stub: StubServer) -> None:
    for command in (
        "sed -n '1,20p' notes.txt",
        "grep -n notes --include=*.txt notes.txt",
        "head -5 notes.txt | nl -ba",
        "cat <<'EOF' > repro.py\nprint(1)\nEOF",
        "sort -u notes.txt -k1,1",
        "cat notes.txt | sort | uniq -c",
    ):
        assert hook(project, stub, command)[0] == "allow", command
    assert stub.calls == 0


BASH = shutil.which("bash")


@pytest.mark.skipif(BASH is None or shutil.which("tree") is None, reason="needs bash and tree (apt-get install tree)")
def test_the_bypasses_do_what_they_say(tmp_path: Path) -> None:
    """Run with bash, without guard, in a scratch folder: each spelling writes, deletes, runs or leaks as the issue says."""
    work = tmp_path / "project"
    work.mkdir()
    (work / "p").write_text("")
    (work / "victim.txt").write_text("x\n")
    (work / "notes.txt").write_text("notes\n")
    planted = work / "bin" / "cat"
    planted.parent.mkdir()
    planted.write_text(PLANTED)
    planted.chmod(0o755)
    (work / "10").mkdir()
    (work / "10" / "cat").write_text(PLANTED)
    (work / "10" / "cat").chmod(0o755)

    def run(command: str, **env: str) -> str:
        proc = subprocess.run(
            [str(BASH), "-c", command],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=30,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env},
            check=False,
        )
        return proc.stdout

    run("sort p {-o,../outside.txt}")
    assert (tmp_path / "outside.txt").exists()
    run("sort {--output=../chosen.txt,notes.txt}")
    assert (tmp_path / "chosen.txt").read_text() == "notes\n"
    run("find victim.txt {-delete,-print}")
    assert not (work / "victim.txt").exists()
    run("sed -ne'w ../sed-out.txt' notes.txt")
    assert (tmp_path / "sed-out.txt").read_text() == "notes\n"
    run("sed -ne'1e touch ../sed-ran.txt' notes.txt")
    assert (tmp_path / "sed-ran.txt").exists()
    run("tree -Po x conftest.py .")
    assert (work / "conftest.py").exists()
    run("printf -v PATH %s bin; cat notes.txt")
    assert (work / "planted-ran.txt").exists()
    (work / "planted-ran.txt").unlink()
    run("echo {PATH}>/dev/null; cat notes.txt")  # the new descriptor's number (10) is now PATH: ./10/cat runs
    assert (work / "planted-ran.txt").exists()
    (work / "names.txt").write_text(f"{work / 'notes.txt'}\0")
    assert "notes.txt" in run("wc --files0-from=names.txt")  # the file it read is named nowhere on the command line
    if shutil.which("jq"):
        assert "sk-not-a-real-key" in run("jq -n 'env|tostring'", OPENAI_API_KEY="sk-not-a-real-key")


@pytest.mark.slow
def test_a_search_of_a_tree_is_one_however_it_is_spelled(project: Path, stub: StubServer) -> None:
    """``--dereferen`` is grep's ``-R`` and ``git diff A B`` with a folder outside the repository compares folders: each reads
    every file below, guard's secret too (found by the differential verifier); the lane keeps such a search out of a
    folder holding a credential file."""
    hook(project, stub, "cat notes.txt")  # guard's secret exists once guard has sealed something
    secret = Path(os.environ["XDG_CONFIG_HOME"]) / "guard" / "secret"
    assert secret.exists()
    above = os.path.relpath(
        Path(os.environ["HOME"]).parent, project
    )  # a folder above the project that holds the home folder
    for command in (f"grep x {above} --dereferen", f"grep -d rec x {above}", f"git diff notes.txt {above}"):
        decision, reason = hook(project, stub, command)
        assert decision == "deny" and "guard self-protection" in reason and "(guard's secret)" in reason, (
            command,
            reason,
        )
    (project / "src" / ".env").write_text("API_KEY=sk-not-real\n")
    calls = stub.calls
    assert (
        hook(project, stub, "grep KEY src -d rec")[0] == "deny" and stub.calls == calls + 1
    )  # the judge, not the lane
    decision, reason = hook(project, stub, "grep KEY src --dereferen")  # -R follows links below src: refused first
    assert decision == "deny" and "symbolic links" in reason and stub.calls == calls + 1
