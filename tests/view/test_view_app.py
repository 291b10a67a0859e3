"""The view's shell: a real ``guard view`` process in a real Chromium, with its security headers."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest
from fixtures.browser import start_view


@pytest.fixture
def view(tmp_path: Path) -> str:
    proc, url = start_view("--audit", str(tmp_path / "audit.db"), cwd=tmp_path)
    yield url
    proc.kill()
    proc.wait()


def test_every_page_loads_its_packaged_assets_under_the_csp(view: str, page) -> None:  # noqa: F811
    for section in ("Decisions", "Rules", "Evals"):
        page.goto(view)
        with page.expect_navigation():
            page.get_by_role("link", name=section).click()
        assert page.locator("h1").first.inner_text().startswith(section)
        assert (
            page.evaluate("getComputedStyle(document.body).backgroundColor") != "rgba(0, 0, 0, 0)"
        )  # view.css applied


def test_answers_carry_a_content_security_policy(view: str) -> None:
    with urllib.request.urlopen(view + "/decisions") as response:
        csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
    with urllib.request.urlopen(view + "/static/view.css") as response:
        assert response.headers["Content-Security-Policy"] == csp


@pytest.mark.slow
def test_a_request_for_another_host_name_is_refused(view: str) -> None:
    """DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends Host: evil.example."""
    request = urllib.request.Request(view + "/decisions", headers={"Host": "evil.example"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request)
    assert refused.value.code == 400
