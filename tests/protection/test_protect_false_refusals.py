"""No false refusals (#35 item 6): what real agents were refused, through real ``guard hook --format claude`` processes.

The README guide's rule and self-protection on, the project holding guard.yaml and
``.claude/settings.json`` as ``guard install claude`` leaves it, the home folder elsewhere
(as in a container: /testbed, /workspace). A quoted ``~`` is text; a patch is judged by the
files its diff names, ``unzip -l``/``-t`` and ``tar -t`` by their listing modes; a sweep of
the tree counts only guard's files that are there (and that it touches: ``git clean`` leaves
tracked files alone); a refusal names a path that exists and says how the command reaches it.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from fixtures.guide import guide_config, hook_decision

from guard.testing.openai_stub import Reply

pytestmark = [
    pytest.mark.stub(default=Reply.verdict("allow", "inside the project", confidence=0.95)),
    pytest.mark.slow,
    pytest.mark.project(config=guide_config, files={".claude/settings.json": '{"hooks": {}}\n', "src/app.py": "old\n"}),
]

PATCH_OF = "--- {0}\n+++ {0}\n@@ -1 +1 @@\n-old\n+new\n"


def refused(project: Path, command: str) -> str | None:
    decision, reason = hook_decision(project, command)
    assert decision == "allow" or "guard self-protection" in reason, reason
    return reason if decision == "deny" else None


@pytest.mark.parametrize(
    "command",
    [
        "echo '~' > x.txt",
        "cat <<'EOF' > physics.py\nmass = 1.0  # mass ~ 1E6 kg, see ~/notes\nEOF",
        "grep -n '~' src/app.py",
        "printf '%s\\n' \"~/.config\" > paths.txt",
    ],
)
def test_a_quoted_tilde_is_text(project: Path, command: str) -> None:
    assert refused(project, command) is None


@pytest.mark.parametrize(
    "command",
    [
        "tar czf /tmp/home.tgz ~",  # an unquoted ~ is the home folder
        "cat <<'EOF' | sh\ncat ~/.config/guard/secret\nEOF",  # data passed on to a program that runs it is that program's code
        "echo 'tar czf /tmp/h.tgz ~' | bash",
        "cat <<'EOF' > steal.sh\ncat ~/.config/guard/secret\nEOF\nsh steal.sh",  # written, then run in the same call
        "printf -v SECRET '%s' ~/.config/guard/secret; cat \"$SECRET\"",  # printf -v assigns: its words are not mere data
    ],
)
def test_what_reaches_the_secret_is_still_refused(project: Path, command: str) -> None:
    assert "guard's secret" in (refused(project, command) or ""), command


def test_a_patch_is_judged_by_the_files_its_diff_names(project: Path) -> None:
    (project / "fix.patch").write_text(PATCH_OF.format("src/app.py"))
    (project / "evil.patch").write_text(PATCH_OF.format(".claude/settings.json"))
    assert refused(project, "patch -p0 < fix.patch") is None
    assert refused(project, "patch -p1 -i fix.patch --dry-run") is None
    assert (
        refused(project, f"cat > two.patch <<'EOF'\n{PATCH_OF.format('a/src/app.py')}EOF\npatch -p1 < two.patch")
        is None
    )
    for command in (
        "patch -p0 < evil.patch",
        f"patch -p0 <<'EOF'\n{PATCH_OF.format('.claude/settings.json')}EOF",
        f"git apply <<'EOF'\n{PATCH_OF.format('a/guard.yaml')}EOF",
    ):
        reason = refused(project, command) or ""
        assert "names" in reason and ("settings.json" in reason or "guard.yaml" in reason), (command, reason)


def test_a_patch_whose_diff_cannot_be_read_is_still_a_sweep(project: Path) -> None:
    """From a pipe, or written by a program in the same line, the diff is not known: the tree it may patch holds guard.yaml."""
    (project / "fix.patch").write_text(PATCH_OF.format("src/app.py"))
    os.mkfifo(project / "stall.patch")  # a fifo would hang a plain read: it is not read, and the patch stays a sweep
    for command in (
        "cat fix.patch | patch -p0",
        "python3 make_patch.py > fix.patch; patch -p0 < fix.patch",
        "patch -p0 < stall.patch",
    ):
        assert "guard.yaml" in (refused(project, command) or ""), command


def test_archive_listings_only_read(project: Path) -> None:
    with zipfile.ZipFile(project / "a.zip", "w") as archive:
        archive.writestr(".claude/settings.json", "{}")
    with tarfile.open(project / "a.tar", "w") as archive:
        archive.add(project / "src" / "app.py", arcname="guard.yaml")
    for command in (
        "unzip -l a.zip",
        "unzip -t a.zip",
        "unzip -qql a.zip",
        "unzip -Z a.zip",
        "tar -tf a.tar",
        "tar tvf a.tar",
        "tar --list --file=a.tar",
    ):
        assert refused(project, command) is None, command
    for command in (
        "unzip a.zip",
        "unzip -l --l a.zip",
        "tar -xf a.tar",
        "tar -tf a.tar --to-command=sh",
        "TAR_OPTIONS=-x tar -tf a.tar",
    ):
        assert refused(project, command) is not None, command


def test_a_sweep_counts_only_guard_s_files_that_are_there(project: Path) -> None:
    (project / ".claude" / "settings.json").unlink()
    (project / ".claude").rmdir()
    assert refused(project, "rm -rf .claude") is None  # nothing of guard's is there to delete
    reason = refused(project, "git clean -fdx") or ""
    assert (
        "guard.yaml" in reason and "/.guard " not in reason and "acts on all of" in reason
    )  # the config that is there, not .guard


def test_git_clean_leaves_guard_s_tracked_files_alone(project: Path) -> None:
    for args in (
        ["init", "-q"],
        ["add", "guard.yaml", ".claude/settings.json"],
        ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "guard"],
    ):
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)
    assert refused(project, "git clean -fdx") is None
    (project / ".claude" / "settings.local.json").write_text("{}\n")  # untracked: git clean would remove it
    assert "settings.local.json" in (refused(project, "git clean -fdx") or "")
