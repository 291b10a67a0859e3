"""The READMEs and the docs pages are tested: every shell block a user is meant to run is run, so an example cannot rot.

Each ```bash / sh / shell / console block of README.md, evals/README.md, datasets/README.md and every
docs/*.md page runs in a scratch directory holding a copy of ``datasets/`` and ``evals/``, with ``guard`` from this
tree on PATH, no provider key, and a controlling terminal (output still piped), as a reader's shell has. Every command of a block (one per line; ``\\`` continues a line)
must exit 0, unless its line ends in ``# exit N``; ``# exit N: deny`` (allow | deny | ask) also
checks the decision it prints. An HTML comment on the line before a block changes what happens:

    <!-- readme-test: stub -->          run against the OpenAI-compatible stub model (keyword policy; a model
                                        named …stub-allow / …stub-deny allows / denies everything) through the
                                        documented override: GUARD_API_BASE, GUARD_MODEL_*
    <!-- readme-test: stub needs bwrap socat: apt-get install bubblewrap socat -->
                                        the same, where those programs are on PATH; else skipped with the line
                                        after the colon (a failure with GUARD_E2E_REQUIRE=1, as in CI)
    <!-- readme-test: skip REASON -->   do not run it; REASON is the test's skip reason
    <!-- readme-test: file PATH -->     not a command: write the block to PATH for the blocks after it
                                        (in the same document: each page is read on its own)

Other blocks (yaml, json, python) are documentation and are not run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fixtures.system import require
from fixtures.terminal import behind_a_terminal

from guard.testing.openai_stub import StubServer, by_model_policy

ROOT = Path(__file__).resolve().parents[2]
#: The READMEs, then every page of the docs site; each is read on its own, as its reader reads it (its own ``file`` blocks only).
DOCUMENTS = (
    "README.md",
    "evals/README.md",
    "datasets/README.md",
    *sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "docs").rglob("*.md")),
)
#: What the scratch directory copies from the repository (commands run from its root, as the READMEs say).
COPIED = ("datasets", "evals", "bench")
SHELLS = frozenset({"bash", "sh", "shell", "console"})
BLOCK_TIMEOUT = 300

_FENCE = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")
_MARKER = re.compile(r"^<!--\s*readme-test:\s*(?P<verb>\S+)\s*(?P<arg>.*?)\s*-->$")
_EXPECT = re.compile(r"#\s*exit\s+(?P<code>\d+)(?::\s*(?P<decision>allow|deny|ask)\b)?")


@dataclass(frozen=True)
class Block:
    """One fenced block of a markdown file and the marker before it."""

    document: str
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    verb: str | None = None  # stub | skip | file
    arg: str = ""

    @property
    def name(self) -> str:
        return f"{self.document}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.lang in SHELLS and self.verb in (None, "stub")


@dataclass(frozen=True)
class Command:
    text: str
    line: int
    exit_code: int = 0
    decision: str | None = None


def parse_blocks(document: str, markdown: str) -> list[Block]:
    """Every fenced block, with the ``readme-test`` marker on the nearest non-blank line before it."""
    blocks: list[Block] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i].strip())
        if not opening:
            i += 1
            continue
        fence, start = opening.group("fence"), i
        i += 1
        body: list[str] = []
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        i += 1
        previous = next((line.strip() for line in reversed(lines[:start]) if line.strip()), "")
        marker = _MARKER.match(previous)
        verb, arg = (marker.group("verb"), marker.group("arg")) if marker else (None, "")
        if verb not in (None, "stub", "skip", "file"):
            raise ValueError(f"{document}:{start}: unknown readme-test marker {verb!r} (stub, skip REASON, file PATH)")
        if verb in ("skip", "file") and not arg:
            raise ValueError(
                f"{document}:{start}: readme-test: {verb} needs {'a reason' if verb == 'skip' else 'a path'}"
            )
        if verb == "stub" and arg and not re.match(r"^needs [\w -]+: .+", arg):
            raise ValueError(f"{document}:{start}: readme-test: stub takes nothing, or `needs PROGRAM…: INSTALL LINE`")
        blocks.append(Block(document, start + 1, opening.group("lang").lower(), "\n".join(body) + "\n", verb, arg))
    return blocks


def commands(block: Block) -> list[Command]:
    """The block's commands: one a line, ``\\`` continuing it, comment-only lines skipped (console: ``$ `` lines)."""
    found: list[Command] = []
    pending: list[str] = []
    for offset, raw in enumerate(block.text.splitlines(), start=1):
        if block.lang == "console" and not pending and not raw.startswith("$ "):
            continue  # a console block's output lines
        line = raw[2:] if block.lang == "console" and not pending else raw
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        pending.append(line)
        if line.rstrip().endswith("\\"):
            continue
        text = "\n".join(pending)
        expect = _EXPECT.search(pending[-1])
        start = block.line + offset - len(pending) + 1
        found.append(
            Command(text, start, int(expect.group("code")), expect.group("decision"))
            if expect
            else Command(text, start)
        )
        pending = []
    return found


def decision_in(output: str) -> str | None:
    """The decision ``guard check`` printed, human (``decision: deny``) or JSON (``"decision": "deny"``)."""
    found = re.search(r'^\s*"?decision"?:\s*"?(allow|deny|ask)\b', output, re.MULTILINE)
    return found.group(1) if found else None


def scratch_copy(target: Path) -> Path:
    for name in COPIED:
        shutil.copytree(ROOT / name, target / name, ignore=shutil.ignore_patterns(".eval-out", "__pycache__"))
    return target


def guard_on_path(bin_dir: Path) -> Path:
    """A ``guard`` that runs this source tree, whatever else is installed."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "guard"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m guard.cli.main "$@"\n')
    shim.chmod(0o755)
    return bin_dir


def block_env(bin_dir: Path, stub_url: str | None) -> dict[str, str]:
    keep = {
        k: v for k, v in os.environ.items() if not (k.startswith("GUARD_") or k.endswith(("_API_KEY", "_AUTH_TOKEN")))
    }
    env = keep | {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "PYTHON": sys.executable,
    }
    if stub_url:  # the override the README documents for trying guard without a key
        env |= {"GUARD_API_BASE": stub_url, "GUARD_MODEL_QUICK": "stub", "GUARD_MODEL_THOROUGH": "stub"}
    return env


def run_block(block: Block, earlier: list[Block], workdir: Path, stub_url: str | None) -> list[str]:
    """Run ``block`` in ``workdir`` after writing the ``file`` blocks before it; one problem per failed expectation."""
    for written in earlier:
        path = workdir / written.arg
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(written.text)
    steps = commands(block)
    logs = workdir / ".readme-test"
    logs.mkdir()
    script = [f'cd "{workdir}"']
    for n, step in enumerate(steps):  # one shell, so export and cd carry over as they would for a reader
        script.append(f'{{\n{step.text}\n}} >"{logs}/{n}.out" 2>"{logs}/{n}.err" </dev/null\necho $? >"{logs}/{n}.rc"')
    with (
        behind_a_terminal() as terminal
    ):  # a reader types these at a terminal (guard install trusts the config only there)
        done = subprocess.run(
            ["bash", "-c", "\n".join(script)],
            env=block_env(guard_on_path(workdir / ".readme-bin"), stub_url),
            capture_output=True,
            text=True,
            timeout=BLOCK_TIMEOUT,
            **terminal,
        )
    problems = []
    for n, step in enumerate(steps):
        rc_file = logs / f"{n}.rc"
        if not rc_file.exists():
            problems.append(f"{block.document}:{step.line}: never ran ({done.stderr.strip()[-500:]})")
            continue
        code = int(rc_file.read_text())
        out, err = (logs / f"{n}.out").read_text(), (logs / f"{n}.err").read_text()
        said = decision_in(out)
        if code != step.exit_code or (step.decision and said != step.decision):
            want = f"exit {step.exit_code}" + (f" ({step.decision})" if step.decision else "")
            got = f"exit {code}" + (f" ({said})" if said else "")
            problems.append(
                f"{block.document}:{step.line}: `{step.text.strip()}`: expected {want}, got {got}\n{out[-1500:]}{err[-1500:]}"
            )
    return problems


def all_blocks() -> list[Block]:
    return [
        block
        for document in DOCUMENTS
        for block in parse_blocks(document, (ROOT / document).read_text(encoding="utf-8"))
    ]


def shell_blocks() -> list[Block]:
    return [b for b in all_blocks() if b.lang in SHELLS]


@pytest.fixture(scope="module")
def stub_url() -> Iterator[str]:
    with StubServer() as stub:
        stub.responder = by_model_policy  # the keyword policy, or for --model …stub-allow / …stub-deny a judge that allows / denies everything
        yield stub.url


@pytest.mark.slow
@pytest.mark.parametrize("block", shell_blocks(), ids=lambda block: block.name)
def test_readme_block(block: Block, stub_url: str, tmp_path: Path) -> None:
    if block.verb == "skip":
        pytest.skip(f"{block.name}: {block.arg}")
    if block.verb == "file":
        pytest.skip(f"{block.name}: written to {block.arg} for the blocks after it")
    if block.arg.startswith("needs "):
        programs, _, install = block.arg[len("needs ") :].partition(": ")
        require(*programs.split(), install=install)
    earlier = [b for b in all_blocks() if b.document == block.document and b.line < block.line and b.verb == "file"]
    problems = run_block(block, earlier, scratch_copy(tmp_path / "repo"), stub_url if block.verb == "stub" else None)
    assert not problems, "\n\n".join(problems)


def test_every_document_has_run_blocks_and_markers_parse() -> None:
    blocks = all_blocks()  # raises on an unknown marker or a skip without a reason
    assert any(b.runs and b.verb == "stub" for b in blocks if b.document == "README.md")
    assert any(b.runs and b.verb is None for b in blocks if b.document == "README.md")
    pages = [b for b in blocks if b.document.startswith("docs/")]  # the reference moved out of the README runs too
    assert any(b.runs and b.verb == "stub" for b in pages) and any(b.runs and b.verb is None for b in pages)


# -- the harness can fail: a changed decision or exit code is caught --------------------------------------------

SYNTHETIC = """
<!-- readme-test: file guard.yaml -->
```yaml
hooks:
  PreToolUse:
    - id: no-destructive-shell
      matcher: Bash
      rule: Deny shell commands that delete files outside the project.
      depth: quick
```

<!-- readme-test: stub -->
```bash
guard check --tool Bash --input '{"command": "rm -rf ~/old"}'       # exit 1: deny
guard check --tool Bash --input '{"command": "rm -rf ./build"}' \\
  --json                                                             # exit 0: allow
guard check --tool Bash --input '{"command": "rm -rf ~/old"}'       # exit 0: allow
guard check --tool Bash --input '{"command": "ls"}'                 # exit 0: deny
```
"""


@pytest.mark.slow
def test_the_harness_catches_a_changed_exit_code_or_decision(stub_url: str, tmp_path: Path) -> None:
    file_block, block = parse_blocks("SYNTHETIC.md", SYNTHETIC)
    assert (file_block.verb, file_block.arg, block.verb) == ("file", "guard.yaml", "stub")
    steps = commands(block)
    assert [(s.exit_code, s.decision) for s in steps] == [(1, "deny"), (0, "allow"), (0, "allow"), (0, "deny")]
    assert "--json" in steps[1].text and steps[1].line == block.line + 2
    workdir = tmp_path / "synthetic"
    workdir.mkdir()
    problems = run_block(block, [file_block], workdir, stub_url)
    assert [p.split(":")[1] for p in problems] == [str(steps[2].line), str(steps[3].line)]
    assert "expected exit 0 (allow), got exit 1 (deny)" in problems[0]
    assert "expected exit 0 (deny), got exit 0 (allow)" in problems[1]


def test_console_blocks_run_their_prompt_lines_only() -> None:
    (block,) = parse_blocks("x.md", "```console\n$ guard log \\\n  --json   # exit 0\n[]\n$ ls\nREADME.md\n```\n")
    assert [(c.text, c.line) for c in commands(block)] == [("guard log \\\n  --json   # exit 0", 2), ("ls", 5)]


def test_a_marker_without_a_reason_or_an_unknown_verb_is_an_error() -> None:
    with pytest.raises(ValueError, match="needs a reason"):
        parse_blocks("x.md", "<!-- readme-test: skip -->\n```bash\nls\n```\n")
    with pytest.raises(ValueError, match="unknown readme-test marker 'stubb'"):
        parse_blocks("x.md", "<!-- readme-test: stubb -->\n```bash\nls\n```\n")
