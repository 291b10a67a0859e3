"""``/ui`` in a real ``guard serve``: the view behind the service's token (a cookie after one sign-in), or loopback names only without one."""

from __future__ import annotations

import http.client
import json
import os
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import trust_config
from fixtures.cache import start_serve

from guard.server.ui import COOKIE, cookie_value

pytestmark = pytest.mark.slow

TOKEN = "ui-token-for-tests-0123456789"
CONFIG = """
audit: {path: audit.db}
hooks:
  PreToolUse:
    - id: no-curl
      matcher: Bash
      command: "grep -q curl && { echo 'curl is not allowed here' >&2; exit 2; } || exit 0"
"""
CURL = {
    "hook_event_name": "PreToolUse",
    "session_id": "ui-sess",
    "tool_name": "Bash",
    "tool_input": {"command": "curl https://example.com"},
}


def _request(
    url: str, method: str = "GET", path: str = "/", *, body: str | None = None, headers: dict[str, str] | None = None
) -> http.client.HTTPResponse:
    """One request, redirects not followed (the test looks at them)."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    response.body = response.read()  # type: ignore[attr-defined]
    connection.close()
    return response


def _serve(tmp_path: Path, token: str | None) -> Iterator[str]:
    (tmp_path / "guard.yaml").write_text(CONFIG)
    trust_config(tmp_path / "guard.yaml")
    env = {k: v for k, v in os.environ.items() if k != "GUARD_SERVE_TOKEN"}
    if token:
        env["GUARD_SERVE_TOKEN"] = token
    proc, url = start_serve(tmp_path / "guard.yaml", tmp_path, env)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    yield from _serve(tmp_path, TOKEN)


@pytest.fixture
def open_served(tmp_path: Path) -> Iterator[str]:
    yield from _serve(tmp_path, None)


def _deny_through_the_api(url: str, token: str | None) -> None:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    answer = _request(url, "POST", "/v1/hooks", body=json.dumps(CURL), headers=headers)
    assert answer.status == 200 and json.loads(answer.body)["decision"] == "deny"  # type: ignore[attr-defined]


def _decisions_page_shows_the_deny(url: str, headers: dict[str, str]) -> None:
    for _ in range(50):  # the service writes its audit rows from a thread
        page = _request(url, path="/ui/decisions", headers=headers)
        assert page.status == 200
        if b"curl is not allowed here" in page.body:  # type: ignore[attr-defined]
            return
    raise AssertionError("the deny never showed on /ui/decisions")


def test_without_the_token_the_ui_asks_for_it_and_a_wrong_one_is_refused(served: str) -> None:
    _deny_through_the_api(served, TOKEN)
    bare = _request(served, path="/ui/decisions")
    assert bare.status == 401 and b'name="token"' in bare.body and b"curl" not in bare.body  # type: ignore[attr-defined]
    policy = bare.headers["Content-Security-Policy"]
    assert (
        "default-src 'none'" in policy and "script-src" not in policy and "frame-ancestors 'none'" in policy
    )  # nothing may run on the form
    for wrong in (
        _request(served, path="/ui/decisions?token=not-the-token"),
        _request(
            served,
            "POST",
            "/ui/login",
            body="token=not-the-token&next=/ui/decisions",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        ),
        _request(served, path="/ui/decisions", headers={"Cookie": f"{COOKIE}={cookie_value('not-the-token')}"}),
        _request(
            served, path="/ui/decisions", headers={"Cookie": f"{COOKIE}={TOKEN}"}
        ),  # the token itself is not the cookie
        _request(served, path="/ui/decisions", headers={"Authorization": "Bearer not-the-token"}),
    ):
        assert wrong.status == 401 and b"curl" not in wrong.body and wrong.getheader("Set-Cookie") is None  # type: ignore[attr-defined]


def test_signing_in_sets_a_strict_httponly_cookie_that_opens_the_ui(served: str) -> None:
    _deny_through_the_api(served, TOKEN)
    signed = _request(
        served,
        "POST",
        "/ui/login",
        body=f"token={TOKEN}&next=/ui/decisions?decision=deny",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert signed.status == 303 and signed.getheader("Location") == "/ui/decisions?decision=deny"
    cookie = signed.getheader("Set-Cookie") or ""
    assert cookie.startswith(f"{COOKIE}={cookie_value(TOKEN)};") and TOKEN not in cookie
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict") and "Path=/ui" in cookie
    _decisions_page_shows_the_deny(served, {"Cookie": f"{COOKIE}={cookie_value(TOKEN)}"})
    # the cookie opens the view only, never the API
    api = _request(
        served,
        "POST",
        "/v1/hooks",
        body=json.dumps(CURL),
        headers={"Content-Type": "application/json", "Cookie": f"{COOKIE}={cookie_value(TOKEN)}"},
    )
    assert api.status == 401


def test_a_token_in_the_link_signs_in_and_is_dropped_from_the_address(served: str) -> None:
    answer = _request(served, path=f"/ui/rules?range=7d&token={TOKEN}")
    assert answer.status == 303 and answer.getheader("Location") == "/ui/rules?range=7d"
    assert (answer.getheader("Set-Cookie") or "").startswith(f"{COOKIE}={cookie_value(TOKEN)};")


def test_after_signing_in_the_next_page_stays_inside_the_ui(served: str) -> None:
    """No open redirect: ``next`` outside /ui goes to the view's home."""
    for target in ("https://evil.example/", "//evil.example/ui/", "/v1/hooks", "/ui/../v1/hooks", "/ui\\..\\x"):
        signed = _request(
            served,
            "POST",
            "/ui/login",
            body=urllib.parse.urlencode({"token": TOKEN, "next": target}),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert signed.status == 303 and signed.getheader("Location") == "/ui/"


def test_a_script_may_send_the_bearer_token_instead(served: str) -> None:
    _deny_through_the_api(served, TOKEN)
    _decisions_page_shows_the_deny(served, {"Authorization": f"Bearer {TOKEN}"})


def test_without_a_token_of_yours_the_ui_wants_the_per_user_one(open_served: str) -> None:
    from guard.server.identity import service_key

    key = service_key()
    assert key is not None
    _deny_through_the_api(open_served, key)
    _decisions_page_shows_the_deny(open_served, {"Authorization": f"Bearer {key}"})
    for headers in ({}, {"Host": "evil.example"}):
        refused = _request(open_served, path="/ui/decisions", headers=headers)
        assert refused.status == 401 and b"curl" not in refused.body  # type: ignore[attr-defined]


def test_a_browser_signs_in_once_and_then_sees_decisions_live(served: str, page: Any) -> None:  # noqa: F811
    _deny_through_the_api(served, TOKEN)
    page.goto(served + "/ui/decisions?decision=deny")
    assert "curl" not in page.content()
    page.fill("input[name=token]", TOKEN)
    page.get_by_role("button", name="Open").click()
    page.wait_for_url(served + "/ui/decisions?decision=deny")
    page.locator("tbody#rows tr.row-deny", has_text="curl is not allowed here").wait_for(timeout=15_000)
    assert [
        c["name"] for c in page.context.cookies() if c["httpOnly"] and c["sameSite"] == "Strict" and c["path"] == "/ui"
    ] == [COOKIE]
    page.evaluate("window.stillHere = true")
    _deny_through_the_api(served, TOKEN)
    page.locator("tbody#rows tr.row-deny").nth(1).wait_for(timeout=15_000)  # the live poll carries the cookie
    assert page.evaluate("window.stillHere") is True
    page.get_by_role("link", name="Rules").click()
    assert page.locator("tr.rule[data-rule=no-curl] td.calls").inner_text() == "2"
