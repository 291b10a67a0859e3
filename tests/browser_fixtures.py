"""A real headless Chromium (Debian's ``chromium``, driven by Playwright) and a real ``guard view`` process.

Chromium is skipped when absent unless ``GUARD_E2E_REQUIRE=1`` (CI) makes that a
failure. Every page a test opens records its console errors and failed requests:
a Content-Security-Policy violation or a missing asset fails the test at teardown.
Screenshots go to ``$GUARD_SCREENSHOTS`` (default ``.screenshots/``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cache_fixtures import start_listening

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def _missing(reason: str) -> None:
    if os.environ.get("GUARD_E2E_REQUIRE") == "1":
        pytest.fail(f"{reason} (GUARD_E2E_REQUIRE=1)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One headless Chromium per test module.

    Not per session: Playwright's sync API keeps an event loop running in the
    main thread while it is open, and every async test after it would fail.
    """
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        _missing("chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install playwright)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=binary, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    """A fresh page; the test fails if the page logged an error (a CSP violation is one) or an asset failed to load."""
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    tab = context.new_page()
    problems: list[str] = []
    tab.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    tab.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    tab.on("requestfailed", lambda req: problems.append(f"request failed: {req.url} {req.failure}"))
    yield tab
    context.close()
    assert not problems, "\n".join(problems)


def screenshot(tab: Any, name: str) -> Path:
    """Save a full-page screenshot for people to look at (the closing note and CI artifacts)."""
    folder = Path(os.environ.get("GUARD_SCREENSHOTS", ".screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    tab.screenshot(path=str(path), full_page=True)
    return path


def start_view(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """A real ``guard view`` on a free loopback port, listening: the process and its base URL (the caller kills it)."""

    def command(port: int) -> list[str]:
        return [sys.executable, "-m", "guard.cli.main", "view", "--port", str(port), *args]

    proc, port = start_listening(command, cwd=cwd, env=env)
    return proc, f"http://127.0.0.1:{port}"
