"""A write to guard's files that no word of the call spells, or a move of the folder holding them, is refused.

No word of ``cp -b -S .yaml notes.txt ../guard`` names guard.yaml, yet cp renames ``../guard`` (which the agent wrote)
to ``../guard.yaml``; so do sed's in-place backup, a compressor's output, split's pieces, ``curl -O`` (the URL's last
part) and ``~/.curlrc``'s ``output``. ``python3 -m zipfile -e a.zip ..``, ``jar xf``, ``ar x``, ``pax -r``, ``dpkg -x``,
``unsquashfs`` and ``cmake -E`` extract, copy or move into the folder they name, and ``python3 -m tarfile -e`` and
``uudecode`` write names the input holds. Run by a program that runs the command it is given (``sudo``, ``bash -c``,
``strace``, ``uv run``, ``npx -c``), each was judged by that program's name; so was a shell line in a program's own
code (awk's ``system()`` and pipes, a makefile's recipes, a crontab's entries, Tcl's ``exec``). ``mv ../../work /tmp/p`` from ``work/app`` names the
project folder, which self-protection counted only for a command sweeping a tree when it is the folder the command runs
in or one above (``..`` itself cannot be moved). Each line goes through a real ``guard hook --format claude`` whose judge (the loopback stub)
allows everything: a refusal with no model call is self-protection's; the ``test_the_*_write_guard_s_file*`` tests run
the lines under bash in a scratch project (cmake's only through the hook: CI has no cmake).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from fixtures.guide import LANES_CONFIG, agent_folder, hook_decision
from fixtures.system import require

from guard.testing.openai_stub import Reply, StubServer

SETTINGS = '{"hooks": {"PreToolUse": []}}\n'
pytestmark = [
    pytest.mark.stub(default=Reply.verdict("allow", "judged by the stub", confidence=0.95)),
    pytest.mark.project(config=LANES_CONFIG, files={".claude/settings.json": SETTINGS}),
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
    ("util-linux's rename of the folder above", "", "rename.ul work moved ../../work", "guard.yaml"),
    ("awk's system()", "", "awk 'BEGIN{system(\"mv ../../work ../../moved\")}'", "guard.yaml"),
    ("a line awk prints to sh", "", 'awk \'BEGIN{print "mv ../../work ../../moved" | "sh"}\'', "guard.yaml"),
    ("awk's file named by a concatenation", "", 'awk \'BEGIN{f="../gu" "ard.yaml"; print 1 > f}\'', "guard.yaml"),
]
#: (case, line) a real run would need a web server, a key or a newer coreutils for: a downloader saving under a name the
#: URL or the server gives, gpg decrypting to the name without its suffix or to the one the input holds, a move.
NOT_RUN = [
    ("gio trash of the project", "gio trash ../../work"),
    ("mv --exchange swaps its target too", "mv --exchange /srv/p ../../work"),
    ("mv --exchange onto the agent's folder, whose .guard it may fill", "cd .. && mv --exchange /srv/evil app"),
    ("gpg decrypts a.gpg to a", "gpg --batch --yes ../guard.yaml.gpg"),
    ("gpg --use-embedded-filename", "gpg --use-embedded-filename /srv/x.gpg"),
    ("wget saves to the URL's last part", "cd .. && wget -N https://example.com/guard.yaml"),
    ("wget -r saves what the server lists", "wget -r -nH -P .. https://example.com/"),
    ("wget -r -nd saves what the server lists in its folder", "cd .. && wget -r -np -nd https://example.com/docs/"),
    ("wget -r -H keeps a folder for any host", "cd .. && wget -r -np -H https://example.com/docs/"),
    ("wget -r makes a folder of the URL's host", "cd .. && wget -r http://guard.yaml/"),
    ("curl -J saves under the name the server gives", "curl -sOJ --output-dir .. https://example.com/x"),
    ("aria2c saves under the name the server gives", "aria2c -d .. https://example.com/x"),
    ("Perl rename's substitution makes the agent's folder's name", "cd .. && rename 's/evil/app/' evil"),
    ("Perl rename's substitution makes guard.yaml", "cd .. && rename -f 's/\\.yml$/.yaml/' guard.yml"),
    ("Perl rename's -e, another delimiter", "rename -e 's|x|../guard.yaml|' x"),
    ("Perl rename's expression is code that may make any name", "cd .. && rename 'y/a-z/A-Z/' notes.txt"),
    ("Perl rename reading its names from its input", "ls | rename 's/a/b/'"),
]
#: (case, line): an archiver extracting over guard.yaml, or cmake -E moving or copying over it.
EXTRACTIONS = [
    ("python -m zipfile -e into the folder above", "python3 -m zipfile -e /srv/a.zip .."),
    ("python -m tarfile -e: its members may climb out", "python3 -m tarfile -e /srv/a.tar /srv/out"),
    ("cmake -E tar x from the folder above", "cmake -E chdir .. cmake -E tar xf /srv/a.tar"),
    ("cmake -E rename of the project", "cmake -E rename ../../work /srv/p"),
    ("cmake -E copy_directory into the folder above", "cmake -E copy_directory /srv/evil .."),
    ("pax -r in the folder above", "cd .. && pax -r -f /srv/a.pax"),
    ("jar x in the folder above", "cd .. && jar xf /srv/a.jar"),
    ("ar x into the folder above", "ar x /srv/a.ar --output .."),
    ("dpkg -x into the folder above", "dpkg -x /srv/a.deb .."),
    ("unsquashfs into the folder above", "unsquashfs -f -d .. /srv/a.sqfs"),
    ("uudecode: the input names the file, absolute too", "uudecode /srv/x.uu"),
]
#: Ordinary uses of the same programs, listing, building or writing only what they name: not refused (the judge or a
#: lane decides them).
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
    "cd .. && wget -r -np https://example.com/docs/",  # in the project: all of it lands below ./example.com
    "cd .. && wget -m -k -E -l 2 -np example.com/docs/",
    "flock /tmp/l make test",
    "rename 's/\\.txt$/.md/' notes.txt",
    "rename -v 's/notes/readme/' *.txt",
    "flock -w 5 /tmp/l -c 'ls -la'",
    "gpg --verify x.sig",
    "sudo ls -la",
    "sudo -u nobody cat notes.txt",
    "uv run pytest tests/",
    "bash -c 'echo hi'",
    "echo -e 'a\\tb\\n' | sort",
    "printf '%b\\n' 'a\\x20b' | bash -n",
    "npm test",
    "git commit -m 'fix rm -rf handling'",
    "git -c user.name=x commit -m x",
    "python3 -m zipfile -l /srv/a.zip",
    "python3 -m tarfile -l /srv/a.tar",
    "python3 -m pytest -q",
    "cmake -E echo hi",
    "cmake -E make_directory build",
    "jar tf /srv/a.jar",
    "ar t /srv/a.ar",
    "ar rcs libx.a x.o",
    "dpkg -l",
    "uudecode -o out.txt /srv/x.uu",
    "gio info ..",
    "gio list ../..",
    "awk '{print $1}' notes.txt",
    "awk -F, '{s+=$2} END{print s}' notes.txt",
    "awk 'NR>1 && $3 > 5 {print $1 > \"out.txt\"}' notes.txt",
    "awk '{print $1 | \"sort -u\"}' notes.txt",
    "make test",
    "make -n",
    "make -C build -j4 install",
    "crontab -l",
    "npx prettier --check .",
    "pnpm install",
    "yarn test",
    "yarn add guard",
    "cd .. && mv app app2",
    "awk 'BEGIN{while ((\"ls -la ..\" | getline line) > 0) print line}'",
    "awk '{ system(\"echo \" $1) }' notes.txt",
    'awk \'{gsub(/"/, "", $0); print}\' notes.txt',
    "make -f - <<< $'all:\\n\\techo hi'",
    'expect -c \'spawn ssh host; expect "password:"; send "x\\r"; interact\'',
    "npx tsc --noEmit",
    "echo hi | sudo tee out.txt",
    "sudo apt-get install -y make <<< y",
    'awk \'BEGIN{printf "%s-%d\\n", "a", 1 | "cat"}\'',
]


@pytest.fixture
def project(project: Path) -> Path:
    """The agent's folder, ``app/`` below the trusted guard.yaml and the client's settings (the project is ``work``)."""
    return agent_folder(project)


#: (case, line): each of the above, and a sweep, run by a program that runs the command it is given; it was judged by
#: the runner's name (``sudo``), whose words named the folder above only as words.
RUN_BY_A_RUNNER = [
    ("sudo tar -x into the folder above", "sudo tar xf /srv/a.tar -C .."),
    ("sudo rm -rf of the folder above", "sudo rm -rf .."),
    ("bash -c 'rm -rf ..'", "bash -c 'rm -rf ..'"),
    ("sudo sh -c 'tar -x …'", "sudo sh -c 'tar xf /srv/a.tar -C ..'"),
    ("su -c 'mv the project'", "su -c 'mv ../../work /srv/p'"),
    ("strace -o FILE mv the project", "strace -o /dev/null mv ../../work /srv/p"),
    ("uv run cp's backup suffix", "uv run cp -b -S .json notes.txt ../.claude/settings"),
    ("watch a line", "watch -n 60 'gunzip -f ../guard.yaml.gz'"),
    ("parallel tar -x", "parallel tar xf {} -C .. ::: /srv/a.tar"),
    ("a line piped to bash", "echo 'rm -rf ..' | bash"),
    ("a line printf pipes to sh", "printf '%s -rf ..' rm | sh"),
    ("printf's hex and octal escapes", "printf 'rm\\x20-rf\\040..' | sh"),
    ("printf's %b escapes", "printf '%b' 'rm\\0040-rf\\0040..' | sh"),
    ("echo -e's escapes", "echo -e 'rm\\x20-rf\\x20..' | bash"),
    ("echo -n's line", "echo -n 'rm -rf ..' | bash"),
    ("a here-string fed to bash", "bash <<< 'tar xf /srv/a.tar -C ..'"),
    ("a here-document fed to sh", "sh <<'EOF'\nmv ../../work /srv/p\nEOF"),
    ("a script the line wrote", "echo 'rm -rf ..' > s.sh; bash s.sh"),
    ("a script the line wrote, sourced", "echo 'rm -rf ..' > s.sh; source s.sh"),
    ("a script the line wrote, sourced with .", "printf 'mv ../../work /srv/p' > s.sh; . ./s.sh"),
    ("a script cat wrote from the last of its here-documents", "cat <<A <<B > s.sh\nls\nA\nrm -rf ..\nB\n. ./s.sh"),
    ("at fed a line", "at now <<< 'rm -rf ..'"),
    ("nix-shell --run", "nix-shell --run 'rm -rf ..'"),
    ("npm exec", "npm exec -- rm -rf .."),
    ("git's alias", "git -c alias.x='!rm -rf ..' x"),
    ("git's pager", "git -c core.pager='tar xf /srv/a.tar -C ..' log"),
    ("git rebase --exec", "git rebase --exec 'rm -rf ..' HEAD~1"),
    ("git bisect run", "git bisect run rm -rf .."),
    ("git submodule foreach", "git submodule foreach 'rm -rf ..'"),
    ("a variable git runs", "GIT_SSH_COMMAND='rm -rf ..' git fetch"),
    ("a pager variable", "PAGER='mv ../../work /srv/p' git log"),
    ("a here-string sudo's shell reads", "sudo bash <<< 'rm -rf ..'"),
    ("a line piped to sudo's shell", "echo 'rm -rf ..' | sudo sh"),
    ("a crontab sudo's crontab reads", "sudo crontab - <<< '* * * * * rm -rf ..'"),
    ("npx -c", "npx -c 'rm -rf ..'"),
    ("pnpm exec", "pnpm exec rm -rf .."),
    ("pnpm exec after options with values", "pnpm -r --filter app exec rm -rf .."),
    ("npm explore", "npm explore x -- rm -rf .."),
    ("sudo after four option values", "sudo -u root -g root -h localhost -p x -C 5 rm -rf .."),
    ("strace after five option values", "strace -e trace=file -o /dev/null -s 100 -a 1 -X raw mv ../../work /srv/p"),
    ("bwrap's options of two values each", "bwrap --bind a b --bind c d --bind e f rm -rf .."),
    ("flock's -c, after its lock file", "flock /tmp/l -c 'rm -rf ..'"),
    ("flock's --command", "flock /tmp/l --command 'mv ../../work /srv/p'"),
    ("flock's -w in a cluster", "flock -nw 5 /tmp/l rm -rf .."),
    ("flock --fd's -c", "flock --fd 3 -c 'rm -rf ..'"),
    ("flock with an option it may not know", "flock --bogus 5 /tmp/l rm -rf .."),
]
#: (case, line): a shell line in a program's own code (awk, a makefile, a crontab, Tcl), which the shell reads as words.
RUN_BY_ITS_CODE = [
    ("gawk's system()", "gawk 'BEGIN{system(\"rm -rf ..\")}'"),
    ("mawk's system()", "mawk 'BEGIN{system(\"rm -rf ..\")}'"),
    ("busybox awk's system()", "busybox awk 'BEGIN{system(\"rm -rf ..\")}'"),
    ("awk's system() of a variable", 'awk \'BEGIN{d=".."; system("rm -rf " d)}\''),
    ("awk's system() of -v's variable", "awk -v d=.. 'BEGIN{system(\"rm -rf \" d)}'"),
    ("awk's command | getline", "awk 'BEGIN{\"rm -rf ..\" | getline x}'"),
    ("awk's program the line wrote", "printf 'BEGIN{system(\"rm -rf ..\")}' > p.awk; awk -f p.awk"),
    ("awk's program fed on stdin", "awk -f /dev/stdin notes.txt <<< 'BEGIN{system(\"rm -rf ..\")}'"),
    ("make -f /dev/stdin", "make -f /dev/stdin <<< $'all:\\n\\trm -rf ..'"),
    ("make -f - with a here-document", "make -f - <<'EOF'\nall:\n\tmv ../../work /srv/p\nEOF"),
    ("make --eval", "make --eval='x:;rm -rf ..' x"),
    ("a make variable", "make D=.. -f - <<< $'all:\\n\\trm -rf $(D)'"),
    ("a Makefile the line wrote", "printf 'all:\\n\\trm -rf ..\\n' > Makefile; make"),
    (
        "awk's system() after a regular expression holding a quote",
        'awk \'/"/ {x="a/b"} BEGIN{system("rm -rf ..")} /c/\' f',
    ),
    ("gawk's chdir()", 'gawk \'@load "filefuncs"; BEGIN{chdir(".."); system("rm -rf .")}\''),
    ("make -C the folder above", "make -C .. -f - <<< $'all:\\n\\trm -rf .'"),
    ("make's $(shell …)", "make --eval='x:=$(shell rm -rf $(D))' D=.."),
    ("make's .RECIPEPREFIX", "make -f - <<< $'.RECIPEPREFIX = >\\nall:\\n> rm -rf ..'"),
    ("crontab - fed a line", "crontab - <<< '* * * * * rm -rf ..'"),
    ("crontab fed by a pipe", "echo '@reboot tar xf /srv/a.tar -C ..' | crontab -"),
    ("expect -c spawn", "expect -c 'spawn rm -rf ..'"),
    ("expect spawning sh -c", "expect -c 'spawn sh -c {rm -rf ..}'"),
    ("tclsh fed exec", "echo 'exec rm -rf ..' | tclsh"),
    ("tclsh's file delete", "tclsh <<< 'file delete -force ..'"),
    ("Tcl's exec in a block", "tclsh <<< 'if {1} {exec rm -rf ..}'"),
    ("Tcl's cd, then exec", "tclsh <<< 'cd ..; exec rm -rf .'"),
    ("Tcl's open of a pipe", "tclsh <<< 'open \"|rm -rf ..\" r'"),
    ("expect typing into the shell it spawned", "expect -c 'spawn bash; send \"rm -rf ..\\r\"'"),
    ("a crontab file the line wrote", "echo '* * * * * rm -rf ..' > c; crontab c"),
    ("awk's printf to sh", 'awk \'BEGIN{printf "rm -rf %s", ".." | "sh"}\''),
    ("awk's sprintf", 'awk \'BEGIN{system(sprintf("rm -rf %s", ".."))}\''),
    ("awk's ENVIRON", 'X=.. awk \'BEGIN{system("rm -rf " ENVIRON["X"])}\''),
    ("make's variable from the environment", "D=.. make -f - <<< $'all:\\n\\trm -rf $(D)'"),
    (
        "awk's 71st file, a name it joins (the first 64 were read)",
        "awk 'BEGIN{" + "".join(f'print 1 > "f{i}"; ' for i in range(70)) + 'f="../gu" "ard.yaml"; print 1 > f}\'',
    ),
]
REFUSED = [(case, line) for case, _, line, _ in ROUTES] + NOT_RUN + EXTRACTIONS + RUN_BY_A_RUNNER + RUN_BY_ITS_CODE


@pytest.mark.slow
@pytest.mark.parametrize(("case", "line"), REFUSED, ids=[case for case, _ in REFUSED])
def test_a_write_no_word_spells_is_refused(project: Path, stub: StubServer, case: str, line: str) -> None:
    decision, reason = hook_decision(project, line, env={"GUARD_API_BASE": stub.url}, started_in=project.parent)
    assert (decision, stub.calls) == ("deny", 0), (case, reason)
    assert "self-protection" in reason


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
    require("bash", "curl", install="apt-get install curl")
    (tmp_path / "dl").mkdir()
    (tmp_path / "dl" / "guard.yaml").write_text("evil\n")
    (home / ".curlrc").write_text('output = "../guard.yaml"\n')
    subprocess.run(["bash", "-c", line], cwd=project, check=True, env={**os.environ, "HOME": str(home)})
    assert (project.parent / "guard.yaml").read_text() == "evil\n"


@pytest.mark.slow
def test_a_download_through_a_link_of_the_name_it_saves_to_is_refused(
    project: Path, stub: StubServer, tmp_path: Path
) -> None:
    """curl -O and wget save to the URL's last part and write through a link of that name: with ``x.txt`` a link to
    ``../guard.yaml`` (made by code that spells no protected name), ``curl -O …/x.txt`` overwrites guard.yaml, as it
    does under bash here; the name counts where the link leads."""
    make_link = "python3 -c \"import os; os.symlink('../gu' + 'ard.yaml', 'x.txt')\""
    subprocess.run(["bash", "-c", make_link], cwd=project, check=True)
    for line in ('curl -sO "file://$PWD/../../dl/x.txt"', "wget -N https://example.com/x.txt"):
        decision, reason = hook_decision(project, line, env={"GUARD_API_BASE": stub.url}, started_in=project.parent)
        assert (decision, stub.calls) == ("deny", 0), reason
    ordinary = hook_decision(
        project, "curl -sO https://example.com/y.txt", env={"GUARD_API_BASE": stub.url}, started_in=project.parent
    )
    assert ordinary[0] == "allow", ordinary
    require("bash", "curl", install="apt-get install curl")
    (tmp_path / "scratch" / "dl").mkdir(parents=True)
    (tmp_path / "scratch" / "dl" / "x.txt").write_text("evil\n")
    scratch = tmp_path / "scratch" / "work" / "app"
    scratch.mkdir(parents=True)
    (scratch.parent / "guard.yaml").write_text("hooks: {}\n")
    subprocess.run(["bash", "-c", make_link], cwd=scratch, check=True)
    subprocess.run(["bash", "-c", 'curl -sO "file://$PWD/../../dl/x.txt"'], cwd=scratch, check=True)
    assert (scratch.parent / "guard.yaml").read_text() == "evil\n"


@pytest.mark.slow
def test_a_copy_into_one_of_many_folders_is_refused(project: Path, stub: StubServer, tmp_path: Path) -> None:
    """cp copies what it names into its last operand, whatever folders come before it: the name of each file it names
    counts in each folder it names, and past 16 folders (the first 16 were looked at, the rest not) a writing command
    is too large to judge. With 17 folders before ``..``, ``cp sub/guard.yaml … ..`` overwrites guard.yaml under bash."""
    line = "cp sub/guard.yaml " + " ".join(f"../../a{i:02}" for i in range(17)) + " .."
    for root in (tmp_path, tmp_path / "scratch"):
        for i in range(17):
            (root / f"a{i:02}").mkdir(parents=True)
    decision, reason = hook_decision(project, line, env={"GUARD_API_BASE": stub.url}, started_in=project.parent)
    assert (decision, stub.calls) == ("deny", 0), reason
    scratch = tmp_path / "scratch" / "work" / "app"
    (scratch / "sub").mkdir(parents=True)
    (scratch / "sub" / "guard.yaml").write_text("evil\n")
    (scratch.parent / "guard.yaml").write_text("hooks: {}\n")
    subprocess.run(["bash", "-c", line], cwd=scratch, capture_output=True)  # cp omits the folders and fails
    assert (scratch.parent / "guard.yaml").read_text() == "evil\n"


@pytest.mark.slow
def test_a_line_changing_folder_past_what_is_followed_is_refused(
    project: Path, stub: StubServer, tmp_path: Path
) -> None:
    """A ``cd`` that fails leaves the shell where it was, so each folder a line was in is one it may still be in, and
    relative paths are read from each: after 65 of them the earliest ones were no longer kept, and
    ``cd d1; …; cd d65; cd missing; rm -rf ../…/.claude`` (66 levels up from d65: the project's) went to the judge. Past
    64 folders a line is too large to judge. Under bash the line deletes the project's .claude."""
    line = "; ".join(f"cd d{i}" for i in range(1, 66)) + "; cd missing; rm -rf " + "../" * 66 + ".claude"
    decision, reason = hook_decision(project, line, env={"GUARD_API_BASE": stub.url}, started_in=project.parent)
    assert (decision, stub.calls) == ("deny", 0), reason
    scratch = tmp_path / "scratch" / "work" / "app"
    scratch.joinpath(*(f"d{i}" for i in range(1, 66))).mkdir(parents=True)
    (scratch.parent / ".claude").mkdir()
    subprocess.run(["bash", "-c", line], cwd=scratch, capture_output=True)
    assert not (scratch.parent / ".claude").exists()


@pytest.mark.slow
@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_uses_of_the_same_programs_are_not_refused(project: Path, stub: StubServer, line: str) -> None:
    decision, reason = hook_decision(project, line, env={"GUARD_API_BASE": stub.url}, started_in=project.parent)
    assert decision == "allow", reason


@pytest.mark.parametrize(("case", "setup", "line", "target"), ROUTES, ids=[case for case, *_ in ROUTES])
def test_the_lines_write_guard_s_files(tmp_path: Path, case: str, setup: str, line: str, target: str) -> None:
    require("bash", "gzip", "curl", install="apt-get install curl")
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


def _archives(folder: Path) -> None:
    """a.zip and a.tar holding ``guard.yaml``, and b.tar holding ``../guard.yaml``, each saying ``evil``."""
    with zipfile.ZipFile(folder / "a.zip", "w") as archive:
        archive.writestr("guard.yaml", "evil\n")
    for name, member in (("a.tar", "guard.yaml"), ("b.tar", "../guard.yaml")):
        with tarfile.open(folder / name, "w") as archive:
            info = tarfile.TarInfo(member)
            info.size = 5
            archive.addfile(info, io.BytesIO(b"evil\n"))


@pytest.mark.parametrize(
    "line",
    [
        f"{sys.executable} -m zipfile -e ../../a.zip ..",
        f"{sys.executable} -m tarfile -e ../../b.tar .",  # Python 3.11's tarfile extracts a ../ member as named
    ],
)
def test_the_extractions_write_guard_s_file(tmp_path: Path, line: str) -> None:
    app = tmp_path / "work" / "app"
    app.mkdir(parents=True)
    (app.parent / "guard.yaml").write_text("hooks: {}\n")
    _archives(tmp_path)
    subprocess.run(line, shell=True, cwd=app, check=True, capture_output=True)
    assert (app.parent / "guard.yaml").read_text() == "evil\n"
