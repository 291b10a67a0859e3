"""What the agent wrote reaches the judge when code can run it, once: through real ``guard hook`` processes.

The README guide's rule with ``skip_project_writes`` lets the agent write plain project files with no model call.
Each test writes through a route the client reports (PreToolUse, the write itself, PostToolUse), then runs code, and
reads the stub model's request log: what the judge was shown, and how many times it was asked.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from fixtures.agent_session import Agent, judge_view, provenance_config
from fixtures.processes import run_guard

from guard.testing.openai_stub import Reply, StubServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.stub(default=Reply.verdict("allow", "stays in the project", confidence=0.95)),
]


def _last_hook(home: Path, rule: str = "no-destructive-shell") -> dict[str, Any]:
    row = json.loads(run_guard(["log", "--json", "-n", "1"], home).stdout.splitlines()[0])
    return next(h for h in row["hooks"] if h["id"] == rule)


@pytest.fixture
def project(project: Path) -> Path:
    """The agent's folder, below the trusted guard.yaml (which keeps its cache beside it)."""
    provenance_config(project)
    folder = project / "project"
    folder.mkdir()
    return folder


def test_a_test_file_written_in_the_lane_reaches_the_judge_when_the_test_runner_runs(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    agent = Agent(isolated_home, stub, project)
    test = "import os\n\ndef test_cleanup():\n    os.remove(os.path.expanduser('~/important.txt'))\n"
    assert agent.bash("mkdir -p tests") == "allow"
    asked = stub.calls
    assert agent.bash(f"cat <<'EOF' > tests/test_smoke.py\n{test}EOF") == "allow"
    assert stub.calls == asked  # written in the lane: no judge saw it

    agent.bash("python3 -m pytest -q tests", post=False)
    assert stub.calls == asked + 1
    deferred = judge_view(stub)["deferred"]
    [file] = deferred["files"]
    assert (file["path"], file["change"], file["content"]) == ("tests/test_smoke.py", "new file", test)
    assert "lane" in file["written_by"] and "no judge" in file["written_by"]
    hook = _last_hook(isolated_home)
    assert (
        hook["details"]["deferred"]["files"] == ["tests/test_smoke.py"]
        and hook["details"]["deferred"]["complete"] is True
    )


def test_files_a_lane_proven_sed_i_cp_or_mv_changed_reach_the_judge_when_the_test_runner_runs(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    """The file utilities the project-writes lane proves are recorded as its redirections are: what they change is shown
    to the judge, with how it was written, when code can run it."""
    (project / "tests").mkdir()
    (project / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    agent = Agent(isolated_home, stub, project)
    agent.bash("python3 -m pytest -q tests")  # the project as the user left it: judged, nothing the agent wrote
    asked = stub.calls
    assert (
        agent.bash("sed -i 's/    pass/    import os; os.remove(\"\/nonexistent-guard-test\")/' tests/test_a.py")
        == "allow"
    )
    assert agent.bash("cp tests/test_a.py tests/test_b.py") == "allow"
    assert agent.bash("mv tests/test_b.py tests/test_c.py") == "allow"
    assert stub.calls == asked  # decided in the lane: no judge saw them

    agent.bash("python3 -m pytest -q tests", post=False)
    assert stub.calls == asked + 1
    files = {file["path"]: file for file in judge_view(stub)["deferred"]["files"]}
    assert set(files) == {"tests/test_a.py", "tests/test_c.py"}
    assert "os.remove" in json.dumps(files["tests/test_a.py"]) and "os.remove" in json.dumps(files["tests/test_c.py"])
    for path, how in (("tests/test_a.py", "shell: sed -i"), ("tests/test_c.py", "shell: mv")):
        assert files[path]["written_by"].startswith(how) and "project write lane, no judge" in files[path]["written_by"]


def test_an_edit_to_an_imported_module_reaches_the_judge_when_code_importing_it_runs(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    provenance_config(isolated_home, matcher="@shell")  # the edit itself is no call this rule judges
    (project / "helper.py").write_text("def tidy():\n    return 'nothing to do'\n")
    (project / "main.py").write_text("import helper\nprint(helper.tidy())\n")
    agent = Agent(isolated_home, stub, project)
    agent.bash("python3 main.py")
    assert stub.calls == 1 and "deferred" not in judge_view(stub)  # the user's own code: nothing the agent wrote

    agent.edit(
        "helper.py",
        "    return 'nothing to do'\n",
        "    import shutil\n    shutil.rmtree('/nonexistent-guard-test/backups')\n",
    )
    assert stub.calls == 1
    agent.bash("python3 main.py")
    assert stub.calls == 2
    [file] = judge_view(stub)["deferred"]["files"]
    assert file["path"] == "helper.py" and file["written_by"].startswith("Edit") and file["change"] == "changed"
    assert (
        "+    shutil.rmtree('/nonexistent-guard-test/backups')" in file["diff"]
        and "-    return 'nothing to do'" in file["diff"]
    )

    agent.bash("python3 main.py")
    assert stub.calls == 2  # judged once: the module is unchanged since that judge saw it run


def test_a_judged_script_run_again_unchanged_makes_no_model_call_in_another_spelling_too(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    agent = Agent(isolated_home, stub, project)
    agent.bash("cat <<'EOF' > reproduce.py\n#!/usr/bin/env python3\nprint('reproduced')\nEOF")
    agent.bash("chmod +x reproduce.py")
    asked = stub.calls
    agent.bash("python3 reproduce.py")
    assert stub.calls == asked + 1 and "print('reproduced')" in judge_view(stub)["effect"]["runs"][0]["content"]

    for spelling in (
        "python reproduce.py",
        "./reproduce.py",
        f"python3 {project}/reproduce.py",
        f"cd {project} && python3 reproduce.py 2>&1 | tail -n 5",
    ):
        assert agent.bash(spelling) == "allow", spelling
        assert stub.calls == asked + 1, spelling
    hook = _last_hook(isolated_home)
    assert hook["cached"] is True and "earlier judgement of the same code" in hook["details"]["reused"]

    Agent(isolated_home, stub, project, session="s2").bash("python reproduce.py")  # another session of the same project
    assert stub.calls == asked + 1
    agent.bash("python3 reproduce.py --all")
    assert stub.calls == asked + 2  # other arguments: other code paths may run


def test_a_module_the_size_of_a_reproduction_script_is_shown_whole_and_judged_once(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    """A changed file is "seen" only when its judge was shown all of it: one of some 4,500 characters, as agents' reproduction
    scripts often are, fits the view whole, so a later run of the same code is answered from that judgement."""
    (project / "main.py").write_text("import cases\nprint(len(dir(cases)))\n")
    cases = "".join(
        f"CASE_{i:03} = 'expected value {i:03}'  # what the reproduction compares against\n" for i in range(60)
    )
    assert 4000 < len(cases) < 5000
    agent = Agent(isolated_home, stub, project)
    agent.bash(f"cat <<'EOF' > cases.py\n{cases}EOF")
    asked = stub.calls
    agent.bash("python3 main.py")
    judged = stub.calls
    assert judged > asked  # in overlapping windows of the quick tier's budget: every character judged
    assert all("characters not shown" not in json.dumps(request["messages"]) for request in stub.requests[asked:])
    deferred = _last_hook(isolated_home)["details"]["deferred"]
    assert (
        deferred["files"] == ["cases.py"]
        and deferred["complete"] is True
        and str(project / "cases.py") in [p for p, _ in deferred["seen"]]
    )
    agent.bash("python3 main.py")
    assert stub.calls == judged  # judged once: the whole module was seen


def test_a_script_changed_behind_guards_back_is_judged_again(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    agent = Agent(isolated_home, stub, project)
    agent.bash("cat <<'EOF' > check.py\nimport helper\nprint(helper.VALUE)\nEOF")
    agent.bash("cat <<'EOF' > helper.py\nVALUE = 1\nEOF")
    asked = stub.calls
    agent.bash("python3 check.py")
    assert stub.calls == asked + 1 and [f["path"] for f in judge_view(stub)["deferred"]["files"]] == ["helper.py"]
    agent.bash("python3 check.py")
    assert stub.calls == asked + 1

    (project / "check.py").write_text(
        "import shutil\nshutil.rmtree('/nonexistent-guard-test/backups')\n"
    )  # no call guard saw
    agent.bash("python check.py")
    assert stub.calls == asked + 2 and "rmtree" in judge_view(stub)["effect"]["runs"][0]["content"]

    (project / "helper.py").write_text(
        "import os\nos.remove('/nonexistent-guard-test/hosts')\n"
    )  # a module, changed behind guard's back
    agent.bash("python check.py")
    assert stub.calls == asked + 3
    [file] = judge_view(stub)["deferred"]["files"]
    assert file["path"] == "helper.py" and "no call guard saw" in file["written_by"] and "os.remove" in file["content"]


def test_a_file_a_program_wrote_without_naming_it_is_shown_before_code_runs(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    (project / "main.py").write_text("import generated\n")
    agent = Agent(isolated_home, stub, project)
    agent.bash("python3 main.py 2>/dev/null")
    agent.bash(
        "cat <<'EOF' > gen.py\nopen('generated.py', 'w').write('import shutil\\nshutil.rmtree(\"/nonexistent-guard-test\")\\n')\nEOF"
    )
    agent.bash("python3 gen.py")  # judged: gen.py is shown; what it writes is not named anywhere
    asked = stub.calls
    agent.bash("python3 main.py")
    assert stub.calls == asked + 1
    shown = {f["path"]: f for f in judge_view(stub)["deferred"]["files"]}
    assert (
        "shutil.rmtree" in shown["generated.py"]["content"]
        and "no call guard saw" in shown["generated.py"]["written_by"]
    )


@pytest.mark.parametrize(
    "runs",
    [
        'rm -f old.log > "$(python3 cleanup.py)"',  # a redirection's target is made by running the script
        "X=$(python3 cleanup.py)",  # so is an assignment's value
        "rm -f old.log <<EOF\n$(python3 cleanup.py)\nEOF",  # and a here-document's text
    ],
)
def test_a_script_run_to_make_a_redirection_assignment_or_here_document_is_shown(
    isolated_home: Path, stub: StubServer, project: Path, runs: str
) -> None:
    agent = Agent(isolated_home, stub, project)
    script = "import shutil\nshutil.rmtree('/nonexistent-guard-test/backups')\n"
    asked = stub.calls
    assert agent.bash(f"cat <<'EOF' > cleanup.py\n{script}EOF") == "allow"
    assert stub.calls == asked  # written in the lane
    agent.bash(runs)
    assert stub.calls == asked + 1
    [file] = judge_view(stub)["deferred"]["files"]
    assert (file["path"], file["content"]) == ("cleanup.py", script)


def test_a_file_utility_naming_files_through_the_home_folder_or_a_pattern_is_not_shown_what_the_agent_wrote(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    """``rm -rf ~/old-project`` runs no project code: its judge is asked about the deletion alone, not shown the
    files the agent wrote (which would make the guide's first judged call a larger one, and run on every such call)."""
    agent = Agent(isolated_home, stub, project)
    assert agent.bash("cat <<'EOF' > task.py\nprint('task')\nEOF") == "allow"
    for line in ("rm -rf ~/old-project", "rm -f /nonexistent-guard-test/*.log"):
        asked = stub.calls
        agent.bash(line)
        assert stub.calls == asked + 1, line  # outside the project: judged
        assert not judge_view(stub).get("deferred"), line


def test_a_write_the_client_never_confirmed_is_shown_as_recorded_when_allowed(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    """A client that sends no PostToolUse (Copilot CLI): guard records the write when it allows it, and says so."""
    agent = Agent(isolated_home, stub, project)
    agent.bash("cat <<'EOF' > task.py\nprint('task')\nEOF", post=False)
    agent.bash("python3 -m task")
    [file] = judge_view(stub)["deferred"]["files"]
    assert file["path"] == "task.py" and "no PostToolUse" in file["recorded"]


def test_the_record_is_sealed_in_guards_state(isolated_home: Path, stub: StubServer, project: Path) -> None:
    """A "seen" row written by anyone without guard's secret is not believed: the module is shown to the judge again."""
    import sqlite3

    from guard.session.written import content_digest

    agent = Agent(isolated_home, stub, project)
    agent.bash("cat <<'EOF' > main.py\nimport mod\nEOF")
    agent.bash("cat <<'EOF' > mod.py\nprint('one')\nEOF")
    agent.bash("python3 main.py")
    new = "import shutil\nshutil.rmtree('/nonexistent-guard-test')\n"
    agent.bash(f"cat <<'EOF' > mod.py\n{new}EOF")
    asked = stub.calls
    database = Path(os.environ["XDG_STATE_HOME"]) / "guard" / "written.db"
    assert database.is_file() and not str(database).startswith(str(project))
    with sqlite3.connect(database) as db:
        rule, at, mac = db.execute("SELECT rule, at, mac FROM written_seen LIMIT 1").fetchone()
        db.execute(
            "INSERT INTO written_seen VALUES (?, ?, ?, ?, ?)",
            (rule, str(project / "mod.py"), content_digest(new.encode()), at, mac),
        )
    agent.bash("python3 main.py")
    assert stub.calls == asked + 1 and [f["path"] for f in judge_view(stub)["deferred"]["files"]] == ["mod.py"]


def test_a_run_answered_without_the_model_loads_nothing_heavy(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    """The record is read and the project walked on the guard hook fast path: a hit, or an earlier judgement of the same
    code, still loads none of the model stack (tests/fixtures/processes.py HEAVY)."""
    from fixtures.processes import modules

    (project / "job.py").write_text("print('job')\n")
    agent = Agent(isolated_home, stub, project)
    agent.bash("cat <<'EOF' > lib.py\nVALUE = 1\nEOF")
    agent.bash("python3 job.py")
    asked = stub.calls
    for command in ("python3 job.py", "python job.py 2>&1"):  # a cache hit, then the same code in another spelling
        event = {
            "session_id": "s1",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "cwd": str(project),
        }
        proc = run_guard(["hook"], isolated_home, stdin=json.dumps(event), env={"GUARD_API_BASE": stub.url}, probe=True)
        assert proc.returncode == 0 and not proc.stdout.strip(), proc.stderr
        assert modules(proc) == [], command
    assert stub.calls == asked


def test_a_new_git_folder_below_the_project_does_not_hide_what_was_written(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    """The record is by file: ``cd`` into a folder the agent made a repository of (a project of its own) still shows what
    it wrote there, and the new project's first walk starts where the walks of the folder above it left off."""
    agent = Agent(isolated_home, stub, project)
    agent.bash("python3 -c 'print(1)'")  # guard now walks the project
    agent.bash("mkdir -p sub/.git sub/tests")
    agent.bash(
        "cat <<'EOF' > sub/tests/test_cleanup.py\nimport shutil\n\ndef test_it():\n    shutil.rmtree('/nonexistent-guard-test/backups')\nEOF"
    )
    (project / "sub" / "tests" / "conftest.py").write_text(
        "import os\nos.remove('/nonexistent-guard-test/hosts')\n"
    )  # no call guard saw
    asked = stub.calls
    inside = Agent(isolated_home, stub, project / "sub", session="s1")
    inside.bash("python3 -m pytest -q tests", post=False)
    assert stub.calls == asked + 1
    assert sorted(f["path"] for f in judge_view(stub)["deferred"]["files"]) == [
        "tests/conftest.py",
        "tests/test_cleanup.py",
    ]


def test_a_folder_moved_into_place_after_a_walk_still_shows_its_files(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    """Attack: write a conftest in a staging folder, move the folder where the walk does not look (``.cache``) so the
    record forgets the staging path, let a walk pass, then move it back as ``tests``: a renamed folder keeps its files'
    change times, so the walk alone would never find them, and pytest would run code no judge saw."""
    evil = "import shutil\nshutil.rmtree('/nonexistent-guard-test/backups', ignore_errors=True)\n"
    (project / "README.md").write_text("the user's own\n")  # there before guard looked: the user's
    agent = Agent(isolated_home, stub, project)
    agent.bash("mkdir -p stage .cache")
    agent.bash(f"cat <<'EOF' > stage/conftest.py\n{evil}EOF")
    agent.bash("mv stage .cache/stage")
    agent.bash("python3 -c 'print(1)'")  # a walk: the staged file is in a folder guard does not walk
    agent.bash("mv .cache/stage tests")
    agent.bash("cp missing.txt nowhere/")  # fails: the folder holding the project is not put in place
    asked = stub.calls
    agent.bash("python3 -m pytest -q tests", post=False)
    assert stub.calls == asked + 1
    shown = {f["path"]: f for f in judge_view(stub).get("deferred", {}).get("files", [])}
    assert "rmtree" in shown["tests/conftest.py"]["content"] and "recorded" not in shown["tests/conftest.py"]
    assert sorted(shown) == ["tests/conftest.py"]


def test_a_conftest_the_agent_put_in_a_folder_above_the_project_is_shown_when_pytest_runs(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    """Attack: stage code in a project file (a lane write), copy it to ``../conftest.py`` beside a ``../pytest.ini`` (a
    ``cp`` runs nothing, so its judge is shown no content), delete the staged file: pytest in the project then loads the
    conftest above it, and a record that only looked below the project showed it to no judge."""
    evil = "import shutil\nshutil.rmtree('/nonexistent-guard-test/backups', ignore_errors=True)\n"
    agent = Agent(isolated_home, stub, project)
    agent.bash(f"cat <<'EOF' > notes.txt\n{evil}EOF")
    agent.bash("printf '[pytest]\\n' > settings.txt")
    agent.bash("cp notes.txt ../conftest.py && cp settings.txt ../pytest.ini")
    agent.bash("rm notes.txt settings.txt")
    asked = stub.calls
    agent.bash("python3 -m pytest -q", post=False)
    assert stub.calls == asked + 1
    shown = {f["path"]: f for f in judge_view(stub).get("deferred", {}).get("files", [])}
    assert "rmtree" in shown["../conftest.py"]["content"]


def test_a_pth_file_the_agent_put_in_the_user_site_folder_is_shown_when_python_runs(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    """Attack: the same staging, copied to a ``.pth`` file in the user's site-packages (outside the project, below the
    test's home): every Python process then runs its ``import`` line, and no judge of a run was shown it. The hook runs
    as guard install writes it (python -I), whose interpreter does not read that folder, so the folder is the agent's
    to write (a hook whose interpreter reads it refuses the write: tests/protection/test_protect_naming.py)."""
    import sys

    site = (
        Path(os.environ["HOME"])
        / ".local"
        / "lib"
        / f"python{sys.version_info[0]}.{sys.version_info[1]}"
        / "site-packages"
    )
    site.mkdir(parents=True)
    evil = "import shutil; shutil.rmtree('/nonexistent-guard-test/backups', ignore_errors=True)\n"
    agent = Agent(isolated_home, stub, project, isolated=True)
    agent.bash(f"cat <<'EOF' > notes.txt\n{evil}EOF")
    agent.bash(f"cp notes.txt {site}/zz_tidy.pth && rm notes.txt")
    asked = stub.calls
    agent.bash("python3 -c 'print(1)'", post=False)
    assert stub.calls == asked + 1
    shown = {f["path"]: f for f in judge_view(stub).get("deferred", {}).get("files", [])}
    assert any(
        path.endswith("site-packages/zz_tidy.pth") and "rmtree" in file["content"] for path, file in shown.items()
    ), shown


def test_a_module_the_agent_put_outside_the_project_is_shown_when_code_importing_it_runs(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    """Attack: a script the judge allowed imports a module from a folder outside the project (``sys.path.insert``); the
    agent then puts code there through a ``cp`` (no content shown) from a staging file it deletes, and runs the script
    again: the module is something this session wrote, so the judge is shown it."""
    library = isolated_home.parent / "lib"
    library.mkdir()
    (library / "tidy.py").write_text("def run():\n    return 'nothing to do'\n")
    agent = Agent(isolated_home, stub, project)
    agent.bash(f"cat <<'EOF' > main.py\nimport sys\nsys.path.insert(0, {str(library)!r})\nimport tidy\ntidy.run()\nEOF")
    agent.bash("python3 main.py")
    evil = "import shutil\n\ndef run():\n    shutil.rmtree('/nonexistent-guard-test/backups', ignore_errors=True)\n"
    agent.bash(f"cat <<'EOF' > notes.txt\n{evil}EOF")
    agent.bash(f"cp notes.txt {library}/tidy.py && rm notes.txt")
    asked = stub.calls
    agent.bash("python3 main.py", post=False)
    assert stub.calls == asked + 1  # not answered from the judgement of the same script before the module changed
    shown = {f["path"]: f for f in judge_view(stub).get("deferred", {}).get("files", [])}
    assert any(path.endswith("lib/tidy.py") and "+    shutil.rmtree" in file["diff"] for path, file in shown.items()), (
        shown
    )


def test_a_link_to_a_folder_guard_does_not_walk_shows_the_files_it_makes_importable(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    """Attack: code lands in ``.cache/pkg`` (a folder the walk skips; here written as a program extracting an archive
    there would), then ``ln -s .cache/pkg pkg`` makes it importable: the link is shown, and so is what it links to."""
    evil = "import shutil\nshutil.rmtree('/nonexistent-guard-test/backups', ignore_errors=True)\n"
    agent = Agent(isolated_home, stub, project)
    agent.bash("python3 -c 'print(1)'")  # guard now walks the project
    (project / ".cache" / "pkg").mkdir(parents=True)
    (project / ".cache" / "pkg" / "__init__.py").write_text(evil)  # as `tar xf x.tar -C .cache` would
    for spelling, link in (("ln -s .cache/pkg pkg", "pkg"), (None, "other")):
        if spelling is None:  # a link no call names (os.symlink in a script): found by the walk
            os.symlink(project / ".cache" / "pkg", project / link)
        else:
            agent.bash(spelling)
        asked = stub.calls
        agent.bash(f"python3 -c 'import {link}'", post=False)
        assert stub.calls == asked + 1
        shown = {f["path"]: f for f in judge_view(stub).get("deferred", {}).get("files", [])}
        assert any(
            path.endswith("__init__.py") and "rmtree" in file.get("content", "") for path, file in shown.items()
        ), (link, shown)


def test_a_conftest_the_agent_put_in_the_home_folder_is_shown_when_pytest_runs_in_a_project_below_it(
    isolated_home: Path, stub: StubServer, project: Path
) -> None:
    """Attack: the staging of the folder-above case, aimed at the home folder (``~/pytest.ini`` and ``~/conftest.py``),
    where guard never walks and did not record writes: pytest in ``~/code/project`` loads that conftest."""
    home = Path(os.environ["HOME"])
    inside = home / "code" / "project"
    inside.mkdir(parents=True)
    evil = "import shutil\nshutil.rmtree('/nonexistent-guard-test/backups', ignore_errors=True)\n"
    agent = Agent(isolated_home, stub, inside)
    agent.bash(f"cat <<'EOF' > notes.txt\n{evil}EOF")
    agent.bash("printf '[pytest]\\n' > settings.txt")
    agent.bash(f"cp notes.txt {home}/conftest.py && cp settings.txt {home}/pytest.ini && rm notes.txt settings.txt")
    asked = stub.calls
    agent.bash("python3 -m pytest -q", post=False)
    assert stub.calls == asked + 1
    shown = {f["path"]: f for f in judge_view(stub).get("deferred", {}).get("files", [])}
    assert "rmtree" in shown.get("../../conftest.py", {}).get("content", ""), shown
