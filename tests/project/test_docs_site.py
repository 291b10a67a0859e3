"""The README stays a short start and the docs site builds: every page reachable, every link landing.

``mkdocs build --strict`` (run by .ci/run, and here) fails on a broken link, anchor or snippet
inside docs/. The README is not part of the site, so its links into docs/ are checked here, and
so is the one thing the site cannot see: a page added under docs/ but left out of the nav.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
#: The issue's bar for the README: what guard is, the install, the two commands, the guide and links.
README_MAX_LINES = 200


class _MkdocsLoader(yaml.SafeLoader):
    """mkdocs.yml with its ``!relative`` tags read as plain strings."""


_MkdocsLoader.add_constructor("!relative", lambda loader, node: loader.construct_scalar(node))  # type: ignore[arg-type]


def _nav_pages(entries: Any) -> list[str]:
    if isinstance(entries, str):
        return [entries]
    if isinstance(entries, list):
        return [page for entry in entries for page in _nav_pages(entry)]
    if isinstance(entries, dict):
        return [page for value in entries.values() for page in _nav_pages(value)]
    return []


def test_every_docs_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_MkdocsLoader)
    nav = _nav_pages(config["nav"])
    pages = sorted(path.relative_to(ROOT / "docs").as_posix() for path in (ROOT / "docs").rglob("*.md"))
    assert sorted(set(pages) - set(nav)) == [], "add these docs/ pages to the nav: in mkdocs.yml"
    assert sorted(set(nav) - set(pages)) == [], "mkdocs.yml's nav names pages that do not exist"
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


def _heading_anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_readme_is_short_and_its_links_land() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES, "the reference belongs in docs/: keep the README a short start"
    anchors = {_heading_anchor(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        if path and not (ROOT / path).exists():
            broken.append(target)
        elif not path and anchor not in anchors:
            broken.append(target)
    assert broken == []
    assert "docs/index.md" in text and text.count("](docs/") >= 20  # a pointer to every topic page


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None,
    reason="mkdocs is not installed: pip install -e '.[docs]' (the dev extra has it)",
)
def test_the_site_builds_strict_with_the_readme_guide_on_its_home_page(tmp_path: Path) -> None:
    site = tmp_path / "site"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(site),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ | {"NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stdout + built.stderr
    guide = README.read_text(encoding="utf-8").split("[start:guide]")[1].split("[end:guide]")[0]
    command = next(line for line in guide.splitlines() if line.startswith("guard check "))
    home = html.unescape(
        re.sub(r"<[^>]+>", "", (site / "index.html").read_text(encoding="utf-8"))
    )  # text, without the highlighter's spans
    assert command.split("  #")[0].strip() in home  # the guide has one source, the README
    assert (site / "threat-model.html").exists() and (site / "screenshots" / "decisions.png").exists()
