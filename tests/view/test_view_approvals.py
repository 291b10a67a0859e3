"""The approvals pages of a real ``guard view``: a waiting call answered with the link's proof or after signing in, never by a
request that proves neither; and ``guard view --audit URL`` showing every machine's rows from a real Postgres."""

from __future__ import annotations

import http.client
import json
import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from fixtures.browser import start_view
from fixtures.processes import SOURCE_ROOT, run_guard, serve_argv
from fixtures.team import RULE, Home, final_answer, wait_for_rows, waiting_hook

pytestmark = pytest.mark.slow  # real guard processes by the dozen, waiting calls, a Postgres

ASKS = """hooks:
  PreToolUse:
    - id: needs-a-person
      matcher: Bash
      on_ask: approval
      command: "echo '{\\"decision\\": \\"ask\\", \\"reason\\": \\"deploys need a person\\"}'"
"""


def _request(
    base: str, method: str, path: str, *, form: dict[str, str] | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], str]:
    """One request, redirects not followed: (status, headers, body)."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    body = urlencode(form).encode() if form is not None else None
    sent = (
        {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})}
        if body is not None
        else dict(headers or {})
    )
    conn.request(method, path, body=body, headers=sent)
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, text


def _approval(cwd: Path) -> dict[str, Any]:
    return dict(json.loads(run_guard(["log", "--json", "-n", "1"], cwd).stdout.splitlines()[0])["details"]["approval"])


def _pending_id(cwd: Path, count: int = 1) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        listed = run_guard(["approvals", "--json"], cwd).stdout.splitlines()
        if len(listed) >= count:
            return str(json.loads(listed[0])["id"])
        time.sleep(0.2)
    raise AssertionError("no request was opened")


def test_the_views_buttons_answer_only_with_the_links_proof_or_a_sign_in(
    write_config, make_receiver, isolated_home: Path
) -> None:
    from guard.approvals.request import proof, view_token

    receiver = make_receiver()
    write_config(
        f"webhooks:\n  allow_networks: [127.0.0.0/8]\napprovals:\n  webhook: {receiver.url('/a')}\n  timeout: 90\n{ASKS}"
    )
    view, base = start_view(cwd=isolated_home, env={**os.environ, "PYTHONPATH": SOURCE_ROOT})
    try:
        hook = waiting_hook(isolated_home)
        request_id = _pending_id(isolated_home)
        status, _, page = _request(base, "GET", "/approvals")
        assert status == 200 and request_id in page and "make deploy" in page and ">Approve<" not in page, (
            "reading is open, answering is not"
        )
        assert _request(base, "POST", f"/approvals/{request_id}", form={"answer": "approve"})[0] == 403
        assert _request(base, "POST", f"/approvals/{request_id}", form={"answer": "approve", "t": "0" * 32})[0] == 403
        status, _, page = _request(base, "GET", f"/approvals/{request_id}?t={proof(request_id)}")
        assert status == 200 and ">Approve<" in page
        status, headers, _ = _request(
            base, "POST", f"/approvals/{request_id}", form={"answer": "approve", "t": proof(request_id), "by": "dana"}
        )
        assert status == 303, "answered"
        assert final_answer(hook)[0] == "allow"
        assert _approval(isolated_home) == {
            **_approval(isolated_home),
            "status": "approved",
            "by": "dana",
            "via": "guard view",
        }

        hook = waiting_hook(isolated_home)
        second = _pending_id(isolated_home)
        status, headers, _ = _request(base, "GET", f"/approvals?token={view_token()}")
        assert (
            status == 303
            and "httponly" in headers["set-cookie"].lower()
            and "samesite=strict" in headers["set-cookie"].lower()
        )
        cookie = headers["set-cookie"].split(";")[0]
        forged = _request(
            base,
            "POST",
            f"/approvals/{second}",
            form={"answer": "approve"},
            headers={"Cookie": cookie, "Origin": "http://evil.example"},
        )
        assert forged[0] == 403, "a POST from another origin is refused even with the cookie"
        status, _, _ = _request(
            base, "POST", f"/approvals/{second}", form={"answer": "deny", "by": "eve"}, headers={"Cookie": cookie}
        )
        assert status == 303
        assert final_answer(hook)[0] == "deny"
        assert _approval(isolated_home)["by"] == "eve"
    finally:
        view.kill()


def test_guard_view_audit_url_shows_every_machines_rows(postgres_url: str, tmp_path: Path) -> None:
    config = f"audit:\n  url: {postgres_url}\n{RULE}"
    alice, bob = Home(tmp_path, "alice", config), Home(tmp_path, "bob", config)
    alice.hook("rm -rf build")
    bob.hook("rm -rf dist")
    wait_for_rows(postgres_url, 2)
    view, base = start_view("--audit", postgres_url, cwd=tmp_path, env={**os.environ, "PYTHONPATH": SOURCE_ROOT})
    try:
        status, _, page = _request(base, "GET", "/decisions")
        assert (
            status == 200 and "alice@" in page and "bob@" in page and "rm -rf build" in page and "rm -rf dist" in page
        )
        assert "not whole" not in page
        alice.hook("rm -rf more")
        wait_for_rows(postgres_url, 3)
        time.sleep(2.1)  # the copy refreshes at most every two seconds
        assert "rm -rf more" in _request(base, "GET", "/decisions")[2]
    finally:
        view.kill()


def test_a_token_you_set_for_guard_serve_does_not_answer_approvals(
    write_config, make_receiver, isolated_home: Path
) -> None:
    """docs/team.md's `guard serve --host 0.0.0.0 --token …`: the agent may read that token (its environment, the service's
    command line), so it signs the agent in to /ui but answers nothing; the link's proof still does."""

    from fixtures.cache import start_listening

    from guard.approvals.request import proof

    receiver = make_receiver()
    config = write_config(
        f"webhooks:\n  allow_networks: [127.0.0.0/8]\napprovals:\n  webhook: {receiver.url('/a')}\n  timeout: 90\n{ASKS}"
    )
    serve, port = start_listening(
        lambda port: serve_argv("--port", str(port), "--config", str(config), "--token", "known-to-the-agent"),
        cwd=isolated_home,
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
    )
    base, bearer = f"http://127.0.0.1:{port}", {"Authorization": "Bearer known-to-the-agent"}
    try:
        hook = waiting_hook(isolated_home)
        request_id = _pending_id(isolated_home)
        status, _, page = _request(base, "GET", "/ui/approvals", headers=bearer)
        assert status == 200 and request_id in page, "the token still opens the view"
        assert (
            _request(base, "POST", f"/ui/approvals/{request_id}", form={"answer": "approve"}, headers=bearer)[0] == 403
        )
        status, _, _ = _request(
            base,
            "POST",
            f"/ui/approvals/{request_id}",
            form={"answer": "approve", "t": proof(request_id), "by": "dana"},
            headers=bearer,
        )
        assert status == 303 and final_answer(hook)[0] == "allow"
        assert _approval(isolated_home)["by"] == "dana"
    finally:
        serve.kill()
        serve.communicate(timeout=10)
    from guard.server.identity import service_key

    serve, port = start_listening(
        lambda port: serve_argv("--port", str(port), "--config", str(config)),
        cwd=isolated_home,
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
    )
    try:  # behind the per-user token, derived from the secret the agent cannot read, whoever got in may answer
        hook = waiting_hook(isolated_home)
        request_id = _pending_id(isolated_home)
        status, _, _ = _request(
            f"http://127.0.0.1:{port}",
            "POST",
            f"/ui/approvals/{request_id}",
            form={"answer": "deny", "by": "erin"},
            headers={"Authorization": f"Bearer {service_key()}"},
        )
        assert status == 303 and final_answer(hook)[0] == "deny"
    finally:
        serve.kill()
        serve.communicate(timeout=10)
