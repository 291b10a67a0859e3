"""Write now, run later, closed at the lane (#35 item 5): a project write a later command runs unnamed is not plain.

Through real ``guard hook --format claude`` processes with the README guide's rule
(``skip_project_writes: true``) and the stub judge counting its requests: a module named
like one Python would import from the project's environment (``pytest.py``, a package the
project's ``.venv`` holds), a file build, test and docs tools run by convention
(``conftest.py``, ``jest.config.js``, ``build.gradle`` …) and a file the project's own
configs name (a ``package.json`` script, an MkDocs hook) each reach the judge; ordinary
writes, and the project's own editable package, stay in the lane.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fixtures.guide import guide_config, hook_decision

from guard.protection.run_unnamed import RUN_UNNAMED
from guard.testing.openai_stub import Reply, StubServer

pytestmark = [
    pytest.mark.stub(default=Reply.verdict("deny", "judged by the stub", confidence=0.95)),
    pytest.mark.project(config=guide_config),
]


def _write(name: str) -> str:
    return f"cat <<'EOF' > {name}\nprint('written now, run later')\nEOF"


def _judged(project: Path, stub: StubServer, command: str, env: dict[str, str] | None = None) -> bool:
    """Whether the call reached the judge (else the lane decided it, with no model call)."""
    before = stub.calls
    decision, reason = hook_decision(project, command, env=env)
    assert "self-protection" not in reason, reason
    assert (decision == "deny") == (stub.calls > before), (decision, reason)
    return stub.calls > before


def _venv(project: Path, *packages: str) -> Path:
    """A project .venv (as ``python -m venv .venv`` lays it out) whose site-packages holds ``packages``."""
    site = project / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (project / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\ninclude-system-site-packages = false\n")
    for package in packages:
        (site / package).mkdir()
        (site / package / "__init__.py").write_text("")
    return site


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pytest.py", "pytest/__init__.py", "json.py"])
def test_a_module_python_would_import_instead_of_the_tool_reaches_the_judge(
    project: Path, stub: StubServer, name: str
) -> None:
    """``python3 -m pytest`` in the project imports ./pytest.py: pytest is installed where the hook's python3 finds it."""
    (project / "pytest").mkdir()
    assert _judged(project, stub, _write(name))


@pytest.mark.slow
def test_the_project_s_own_venv_is_where_installed_names_come_from(project: Path, stub: StubServer) -> None:
    site = _venv(project, "zq_tool_from_venv")
    assert _judged(project, stub, _write("zq_tool_from_venv.py"))
    assert not _judged(project, stub, _write("zq_not_installed.py"))
    (site / "zq_installed_later").mkdir()  # pip install: the site folder changes, the cached names are built again
    (site / "zq_installed_later" / "__init__.py").write_text("")
    assert _judged(project, stub, _write("zq_installed_later.py"))


@pytest.mark.slow
def test_an_activated_environment_outside_the_project_counts(project: Path, stub: StubServer, tmp_path: Path) -> None:
    venv = tmp_path / "elsewhere-venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "zq_activated_tool.py").write_text("")
    assert _judged(project, stub, _write("zq_activated_tool.py"), env={"VIRTUAL_ENV": str(venv)})


@pytest.mark.slow
def test_a_forged_cache_of_installed_names_is_not_believed(project: Path, stub: StubServer) -> None:
    """The agent can write guard's cache folder by a path it computes: a cache without guard's seal is built again."""
    _venv(project, "zq_sealed_tool")
    assert _judged(project, stub, _write("zq_sealed_tool.py"))
    [cache] = (Path(os.environ["XDG_CACHE_HOME"]) / "guard" / "python-modules").glob("*.json")
    seal, _, payload = cache.read_text().partition("\n")
    names = json.loads(payload)
    names["names"].remove("zq_sealed_tool")
    cache.write_text("0" * len(seal) + "\n" + json.dumps(names, sort_keys=True, separators=(",", ":")))
    assert _judged(project, stub, _write("zq_sealed_tool.py"))


@pytest.mark.slow
def test_the_project_s_own_editable_package_stays_in_the_lane(project: Path, stub: StubServer) -> None:
    """``pip install -e .``: the finder maps the name into the project; writing inside it is the project's code, a copy
    of it elsewhere in the project stands in for it."""
    site = _venv(project)
    (project / "src" / "zq_mine").mkdir(parents=True)
    (project / "src" / "zq_mine" / "__init__.py").write_text("")
    (site / "__editable___zq_mine_0_1_finder.py").write_text(
        f"MAPPING: dict[str, str] = {{'zq_mine': '{project}/src/zq_mine'}}\n"
    )
    assert not _judged(project, stub, _write("src/zq_mine/core.py"))
    assert _judged(project, stub, _write("zq_mine.py"))


#: Files tools run without naming them, one or two per ecosystem (each through a guard hook process; the whole list in-process).
RUN_LATER = [
    "conftest.py",
    "jest.config.js",
    "vitest.config.mts",
    "build.gradle.kts",
    "gradle/wrapper/gradle-wrapper.properties",
    "docs/conf.py",
    "meson.build",
    "flake.nix",
    "Directory.Build.props",
    "composer.json",
]
EVERY_ECOSYSTEM = [
    *RUN_LATER,
    "playwright.config.ts",
    "webpack.config.cjs",
    "settings.gradle",
    "mkdocs.yml",
    "Taskfile.yml",
    "shell.nix",
    "pom.xml",
    "app.csproj",
    "Pipfile",
    "build.rs",
    "CMakeLists.txt",
    "Rakefile",
    "justfile",
    "noxfile.py",
    "hatch_build.py",
    "BUILD",
    "package.json",
    "setup.py",
    "tox.ini",
    "pytest.ini",
    "pyproject.toml",
    "sitecustomize.py",
    "x.pth",
    "Makefile",
]


@pytest.mark.slow
@pytest.mark.parametrize("name", RUN_LATER)
def test_a_file_a_tool_runs_without_naming_it_reaches_the_judge(project: Path, stub: StubServer, name: str) -> None:
    (project / "docs").mkdir()
    (project / "gradle" / "wrapper").mkdir(parents=True)
    assert _judged(project, stub, _write(name))


def test_no_file_of_the_list_is_decided_in_the_lane(project: Path) -> None:
    from guard.config.loading import load_config
    from guard.judge.read_only_lane import lane_result

    [spec] = [s for s in load_config().specs if s.id == "no-destructive-shell"]
    assert lane_result(spec, _event(project, _write("notes.txt"))) is not None  # the lane is open here
    in_lane = [name for name in EVERY_ECOSYSTEM if lane_result(spec, _event(project, _write(name))) is not None]
    assert in_lane == []


def _event(project: Path, command: str) -> dict[str, object]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "cwd": str(project),
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }


def test_every_entry_of_the_list_says_where_it_comes_from() -> None:
    assert len(RUN_UNNAMED) > 100
    assert all(tool and source.startswith("https://") for _, tool, source in RUN_UNNAMED)


@pytest.mark.slow
def test_a_file_the_project_s_configs_name_reaches_the_judge(project: Path, stub: StubServer) -> None:
    (project / "package.json").write_text('{"scripts": {"test": "node scripts/check-links.js"}}\n')
    (project / "mkdocs.yml").write_text("site_name: x\nhooks:\n  - docs/hooks/zq_links.py\n")
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p zq_local_plugin\n")
    (project / "scripts").mkdir()
    (project / "docs" / "hooks").mkdir(parents=True)
    for name in ("scripts/check-links.js", "docs/hooks/zq_links.py", "zq_local_plugin.py"):
        assert _judged(project, stub, _write(name)), name


@pytest.mark.slow
def test_ordinary_writes_stay_in_the_lane(project: Path, stub: StubServer) -> None:
    _venv(project, "zq_tool_from_venv")
    (project / "build").mkdir()
    for name in ("reproduce_issue.py", "notes.txt", "build/out.txt", "test/helpers.py", "src/models.py"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        assert not _judged(project, stub, _write(name)), name
    assert stub.calls == 0


def test_a_fifo_or_a_flooded_folder_does_not_stall_or_blind_the_check(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fifo in the place of a config the lane reads would hang the hook; a site folder filled past the bound would hide the
    real site-packages listed after it."""
    import threading

    from guard.protection import installed_modules
    from guard.protection.installed_modules import stands_in

    os.mkfifo(project / "package.json")
    site = _venv(project)
    for i in range(60):
        (site / f"zq_filler_{i}.py").write_text("")
    monkeypatch.setattr(installed_modules, "_MAX_ENTRIES", 50)
    answers: list[str | None] = []
    worker = threading.Thread(
        target=lambda: answers.append(stands_in(["anything.py"], str(project), os.environ)), daemon=True
    )
    worker.start()
    worker.join(timeout=30)
    assert answers == ["the modules of the project's environments could not all be listed"]
    from guard.config.loading import load_config
    from guard.judge.read_only_lane import lane_result

    [spec] = [s for s in load_config().specs if s.id == "no-destructive-shell"]
    done: list[object] = []
    worker = threading.Thread(
        target=lambda: done.append(lane_result(spec, _event(project, _write("notes.txt")))), daemon=True
    )
    worker.start()
    worker.join(timeout=30)
    assert len(done) == 1  # answered, fifo and all
