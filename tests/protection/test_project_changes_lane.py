"""The project-writes lane proves the plain file changes agents make: ``rm``, ``mkdir``, ``touch``, ``cp``, ``mv``, ``sed -i``.

Through real ``guard hook --format claude`` processes with the README guide's rule (``skip_project_writes: true``)
and the stub judge, which denies, counting its requests: each proven form is allowed with no model call; each near
miss — a path outside the project or through a link out of it, an option that writes elsewhere or keeps a backup, a
tree, guard's own files and the client's settings, a credential, a sed script that writes or runs, a file a tool
runs unnamed — reaches the judge. Self-protection is off here (``protect: false``), so a call naming guard's files is
the lane's to keep out, and a test fails if the lane proves too much.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.guide import guide_config, hook_decision

from guard.testing.openai_stub import Reply, StubServer


def _unprotected(stub: StubServer) -> str:
    return "protect: false\n" + guide_config(stub)


pytestmark = [
    pytest.mark.slow,
    pytest.mark.stub(default=Reply.verdict("deny", "judged by the stub", confidence=0.95)),
    pytest.mark.project(
        config=_unprotected,
        files={
            "a.py": "x = 1\n",
            "b.txt": "beta\n",
            "src/util.py": "y = 2\n",
            ".env": "API_KEY=sk-not-a-real-key\n",
            ".claude/settings.json": "{}\n",
        },
    ),
]


def _judged(project: Path, stub: StubServer, command: str) -> bool:
    """Whether the call reached the judge (else the lane allowed it, with no model call)."""
    before = stub.calls
    decision, reason = hook_decision(project, command)
    assert (decision == "deny") == (stub.calls > before), (command, decision, reason)
    return stub.calls > before


@pytest.fixture
def outside(project: Path) -> Path:
    """A file and a folder beside the project, and links to them from inside it."""
    (project.parent / "outside.txt").write_text("not the project's\n")
    (project.parent / "outside").mkdir()
    (project / "link.txt").symlink_to(project.parent / "outside.txt")
    (project / "linkdir").symlink_to(project.parent / "outside")
    (project / "run.sh").write_text("echo hi\n")
    (project / "run.sh").chmod(0o755)
    return project.parent


PROVEN = [
    "rm b.txt",
    "rm -f a.py src/util.py",
    "mkdir -p pkg/sub",
    "mkdir notes",
    "touch new.txt",
    "cp a.py a_copy.py",
    "cp a.py src",
    "mv a.py moved.py",
    "mv b.txt src",
    "sed -i 's/x = 1/x = 2/' a.py",
    "sed -i -e 's/y/z/' -e 2d src/util.py",
    "sed -i '1a\\\nimport os' a.py",
    "sed -i '1i # header' a.py && rm b.txt",
]


@pytest.mark.parametrize("command", PROVEN)
def test_a_plain_change_of_project_files_makes_no_model_call(
    project: Path, stub: StubServer, outside: Path, command: str
) -> None:
    assert not _judged(project, stub, command)
    assert stub.calls == 0


NEAR_MISSES = [
    # outside the project
    "rm ../outside.txt",
    "cp a.py ../copy.py",
    "mv a.py ../moved.py",
    "touch ../new.txt",
    "mkdir ../made",
    "sed -i s/x/y/ ../outside.txt",
    # through a link out of the project
    "rm link.txt",
    "cp a.py link.txt",
    "sed -i s/x/y/ link.txt",
    "touch link.txt",
    "mkdir -p linkdir/made",
    "cp a.py linkdir",
    "mv a.py linkdir",
    # an option that writes elsewhere, keeps a copy, acts on a tree or takes a file's name
    "cp -t .. a.py",
    "cp --backup a.py b.txt",
    "mv -S .orig a.py b.txt",
    "sed -i.bak s/x/y/ a.py",
    "sed -in s/x/y/ a.py",
    "sed --follow-symlinks -i s/x/y/ a.py",
    "rm -r src",
    "cp -r src copied",
    "mkdir -m 777 made",
    "touch -r ../outside.txt a.py",
    # guard's files, the client's settings, the credentials
    "rm guard.yaml",
    "mv a.py guard.yaml",
    "cp a.py guard.yaml",
    "rm .claude/settings.json",
    "sed -i s/x/y/ .claude/settings.json",
    "cp .env leaked.txt",
    "mv .env env.txt",
    # a sed script that writes a file or runs a command
    "sed -i '1e touch pwned' a.py",
    "sed -i 's/x/y/w pwned.txt' a.py",
    "sed -i '1w pwned.txt' a.py",
    "sed -i '1a text\nw pwned.txt' a.py",
    "sed -i '1r ../outside.txt' a.py",
    # a glob, a file a tool runs unnamed, an executable
    "rm *.py",
    "touch conftest.py",
    "cp a.py Makefile",
    "cp run.sh again.sh",
    "rm run.sh",
    "mkdir .hidden",
]


@pytest.mark.parametrize("command", NEAR_MISSES)
def test_a_near_miss_reaches_the_judge(project: Path, stub: StubServer, outside: Path, command: str) -> None:
    assert _judged(project, stub, command)


def test_the_protected_files_stay_refused_with_self_protection_on(
    project: Path, stub: StubServer, outside: Path
) -> None:
    """With the guide's config as written (self-protection on), a change of guard's config is refused outright."""
    (project / "guard.yaml").write_text(guide_config(stub))
    from conftest import trust_config

    trust_config(project / "guard.yaml")
    for command in ("rm guard.yaml", "mv a.py guard.yaml", "sed -i s/hooks/x/ guard.yaml"):
        decision, reason = hook_decision(project, command)
        assert decision == "deny" and "self-protection" in reason, (command, reason)
    assert stub.calls == 0
