"""HTTP hooks against real receivers on 127.0.0.1: signing, replies, SSRF, redirects, slowness."""

from __future__ import annotations

import hashlib
import hmac
import json
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures.processes import run_guard
from fixtures.webhook import Received, Receiver, fake_dns, self_signed_cert

from guard.core.errors import HookError, HookRefused, HookTimeout
from guard.core.events.model import parse_event
from guard.core.hook import HookContext
from guard.core.settings import Settings
from guard.core.spec import HookSpec
from guard.hooks.http import HttpHook
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry
from guard.webhooks.client import MAX_REPLY_BYTES, Delivery
from guard.webhooks.signing import verify

LOCAL = Settings(allow_networks=("127.0.0.0/8",), audit_path=None)
SECRET = "s3cret-for-tests"
EVENT = {
    "hook_event_name": "PreToolUse",
    "session_id": "sess-1",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf / ; echo $(whoami) `id` \"'"},
}
DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "no",
    }
}


def spec(url: str, **kw: Any) -> HookSpec:
    """An http hook; its own options (secret, headers, fire_and_forget) among ``kw`` go where the config puts them."""
    options = {"url": url, **{name: kw.pop(name) for name in ("secret", "headers", "fire_and_forget") if name in kw}}
    return HookSpec(id=kw.pop("id", "web"), kind="http", event="pre_tool_use", options=options, **kw)


async def run(url: str, settings: Settings = LOCAL, **kw: Any) -> Any:
    return await HttpHook(spec(url, **kw), HookContext(settings)).run(parse_event(EVENT))


def json_reply(data: Any, status: int = 200) -> tuple[int, bytes, dict[str, str]]:
    return status, json.dumps(data).encode(), {"Content-Type": "application/json"}


async def test_signed_post_carries_the_event_and_the_reply_decides(make_receiver: Callable[..., Receiver]) -> None:
    def check(got: Received) -> tuple[int, bytes, dict[str, str]]:
        verify(got.body, got.headers, SECRET)  # raises (→ 500) when the signature is wrong
        return json_reply(DENY)

    receiver = make_receiver(reply=check)
    result = await run(receiver.url(), secret=SECRET)

    assert (result.decision, result.reason, result.type) == ("deny", "no", "http")
    got = receiver.requests[0]
    assert got.method == "POST" and got.path == "/hook"
    assert json.loads(got.body) == EVENT  # shell metacharacters arrive as data, byte for byte
    expected = "sha256=" + hmac.new(SECRET.encode(), got.body, hashlib.sha256).hexdigest()
    assert got.headers["X-Webhook-Signature"] == expected  # over the raw body, GitHub style
    assert got.headers["Content-Type"] == "application/json"
    assert got.headers["X-Webhook-Event"] == "pre_tool_use"


async def test_a_wrong_secret_is_caught_by_the_receiver(make_receiver: Callable[..., Receiver]) -> None:
    def check(got: Received) -> tuple[int, bytes, dict[str, str]]:
        try:
            verify(got.body, got.headers, SECRET)
        except Exception:
            return 401, b"bad signature", {}
        return json_reply({"decision": "allow"})

    receiver = make_receiver(reply=check)
    with pytest.raises(HookError, match="HTTP 401"):
        await run(receiver.url(), secret="not-the-secret")
    assert (await run(receiver.url(), secret=SECRET)).decision == "allow"


async def test_unsigned_requests_still_carry_timestamp_and_delivery_id(make_receiver: Callable[..., Receiver]) -> None:
    receiver = make_receiver()
    await run(receiver.url())
    await run(receiver.url())
    first, second = (r.headers for r in receiver.requests)
    assert "X-Webhook-Signature" not in first
    assert abs(int(first["X-Webhook-Timestamp"]) - time.time()) < 5
    assert first["X-Webhook-Delivery"] != second["X-Webhook-Delivery"]


async def test_user_headers_are_sent_but_cannot_replace_the_signature(make_receiver: Callable[..., Receiver]) -> None:
    receiver = make_receiver()
    headers = {"Authorization": "Bearer abc", "X-Webhook-Signature": "sha256=forged"}
    await run(receiver.url(), secret=SECRET, headers=headers)
    got = receiver.requests[0]
    assert got.headers["Authorization"] == "Bearer abc"
    verify(got.body, got.headers, SECRET)


@pytest.mark.parametrize(
    ("reply", "decision", "reason"),
    [
        (json_reply({"decision": "ask", "reason": "check with a human"}), "ask", "check with a human"),
        (json_reply({"decision": "block", "reason": "devin style"}), "deny", "devin style"),
        (json_reply({"decision": None}), None, None),
        ((200, b"", {}), None, None),
        ((204, b"", {}), None, None),
        ((200, b"thanks, noted", {}), None, None),
    ],
)
async def test_reply_shapes(
    make_receiver: Callable[..., Receiver], reply: Any, decision: str | None, reason: str | None
) -> None:
    result = await run(make_receiver(reply=reply).url())
    assert (result.decision, result.reason) == (decision, reason)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ((500, b"boom", {}), "HTTP 500"),
        ((404, b"", {}), "HTTP 404"),
        ((200, b'{"decision": "allow"', {}), "not valid JSON"),
        (json_reply({"decision": "maybe"}), "unknown decision"),
        ((200, b"\xff\xfe{", {}), "not UTF-8"),
        ((200, b"{" + b" " * MAX_REPLY_BYTES + b"}", {}), "larger than"),
    ],
)
async def test_unreadable_or_failed_replies_raise(
    make_receiver: Callable[..., Receiver], reply: Any, message: str
) -> None:
    with pytest.raises(HookError, match=message):
        await run(make_receiver(reply=reply).url())


async def test_redirects_are_not_followed(make_receiver: Callable[..., Receiver]) -> None:
    target = make_receiver(reply=json_reply({"decision": "allow"}))
    redirector = make_receiver(reply=(307, b"", {"Location": target.url()}))
    with pytest.raises(HookError, match="307 redirecting to .*not followed"):
        await run(redirector.url())
    assert len(redirector.requests) == 1
    assert target.connections == 0


async def test_without_the_allow_list_a_local_receiver_gets_nothing(make_receiver: Callable[..., Receiver]) -> None:
    receiver = make_receiver(reply=json_reply({"decision": "allow"}))
    for url in (receiver.url(), receiver.url(host="localhost"), receiver.url(host="[::ffff:127.0.0.1]")):
        with pytest.raises(HookRefused, match="loopback"):
            await run(url, settings=Settings(audit_path=None), secret=SECRET)
    assert receiver.connections == 0 and receiver.requests == []


async def test_a_refused_webhook_fails_under_its_failure_mode(make_receiver: Callable[..., Receiver]) -> None:
    receiver = make_receiver(reply=json_reply({"decision": "allow"}))
    registry = Registry(
        [
            spec(receiver.url(), id="closed", failure_mode="fail_closed"),
            spec(receiver.url(), id="open", failure_mode="fail_open"),
        ]
    )
    decision = await Engine(Settings(audit_path=None), registry).decide(EVENT)
    assert decision.decision == "deny"
    closed, opened = decision.hooks
    assert "loopback" in (closed.error or "") and closed.decision == "deny"
    assert "loopback" in (opened.error or "") and opened.decision is None
    assert receiver.connections == 0


@pytest.mark.slow
async def test_a_slow_receiver_times_out_under_the_engine(make_receiver: Callable[..., Receiver]) -> None:
    receiver = make_receiver(reply=json_reply({"decision": "allow"}), delay=10)
    registry = Registry([spec(receiver.url(), timeout=1, failure_mode="fail_closed")])
    started = time.monotonic()
    decision = await Engine(LOCAL, registry).decide(EVENT)
    assert time.monotonic() - started < 3
    # the webhook's own read timeout and the engine's hook timeout race at 1 s: either may say so
    error = decision.hooks[0].error or ""
    assert decision.decision == "deny" and ("timed out" in error or "did not answer within 1s" in error)


@pytest.mark.slow
def test_a_trickling_receiver_is_cut_off_at_the_deadline(make_receiver: Callable[..., Receiver]) -> None:
    receiver = make_receiver(reply=json_reply({"decision": "allow", "reason": "x" * 40}), trickle=0.1)
    delivery = Delivery(
        hook_id="t", url=receiver.url(), body=b"{}", event="pre_tool_use", timeout=1, allow_networks=("127.0.0.0/8",)
    )
    started = time.monotonic()
    with pytest.raises(HookTimeout):
        delivery.send()
    assert time.monotonic() - started < 2


async def test_the_checked_address_is_used_no_second_lookup(
    make_receiver: Callable[..., Receiver], monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver = make_receiver(reply=json_reply({"decision": "allow"}))
    # First answer is the allowed receiver; any later lookup would go to a refused address.
    lookups = fake_dns(monkeypatch, {"hooks.internal.test": ["127.0.0.1", "127.0.0.2"]})
    settings = Settings(allow_networks=("127.0.0.1/32",), audit_path=None)
    result = await run(receiver.url(host="hooks.internal.test"), settings=settings)
    assert result.decision == "allow"
    assert lookups == ["hooks.internal.test"]
    assert receiver.requests[0].headers["Host"] == f"hooks.internal.test:{receiver.port}"


@pytest.fixture
def tls_receiver(tmp_path: Path, make_receiver: Callable[..., Receiver], monkeypatch: pytest.MonkeyPatch) -> Receiver:
    cert, key = self_signed_cert(tmp_path, "hooks.internal.test")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    fake_dns(monkeypatch, {"hooks.internal.test": ["127.0.0.1"], "other.internal.test": ["127.0.0.1"]})
    return make_receiver(reply=json_reply({"decision": "deny", "reason": "over tls"}), ssl_context=context)


async def test_https_connects_to_the_checked_address_and_verifies_the_name(tls_receiver: Receiver) -> None:
    result = await run(tls_receiver.url(host="hooks.internal.test"))
    assert (result.decision, result.reason) == ("deny", "over tls")


async def test_https_with_a_certificate_for_another_name_fails(tls_receiver: Receiver) -> None:
    with pytest.raises(HookError, match="CERTIFICATE_VERIFY_FAILED|certificate"):
        await run(tls_receiver.url(host="other.internal.test"))
    assert tls_receiver.requests == []


@pytest.mark.slow
async def test_slow_webhooks_do_not_starve_other_hooks_of_threads(make_receiver: Callable[..., Receiver]) -> None:
    receiver = make_receiver(reply=json_reply({"decision": "allow"}), delay=1.5)
    registry = Registry([spec(receiver.url(), id=f"slow-{n}") for n in range(10)])
    registry.callable("PreToolUse", id="sync-check")(lambda event: "allow")  # runs in the default executor
    decision = await Engine(LOCAL, registry).decide(EVENT)
    latency = {h.id: h.latency_ms or 0.0 for h in decision.hooks}
    assert latency["sync-check"] < 500
    assert min(v for k, v in latency.items() if k.startswith("slow-")) >= 1400


async def test_errors_never_show_the_secret_part_of_a_url(make_receiver: Callable[..., Receiver]) -> None:
    receiver = make_receiver(reply=(500, b"", {}))
    path = "/services/T0/B0/SeCrEtPaTh?token=tOkEn"
    for url, settings in ((receiver.url(path), LOCAL), (receiver.url(path), Settings(audit_path=None))):
        with pytest.raises(HookError) as info:
            await run(url, settings=settings)
        message = str(info.value)
        assert f"http://127.0.0.1:{receiver.port}/…" in message
        assert "SeCrEtPaTh" not in message and "tOkEn" not in message


async def test_any_text_in_the_event_arrives_intact(make_receiver: Callable[..., Receiver]) -> None:
    receiver = make_receiver()
    event = {**EVENT, "tool_input": {"content": "café ✓ \ud800 \x00 </script>"}}
    await HttpHook(spec(receiver.url()), HookContext(LOCAL)).run(parse_event(event))
    assert json.loads(receiver.requests[0].body) == event


#: an http hook in guard.yaml whose url, secret and header take ${VAR}s: its options, as a real ``guard hook`` reads them
ENV_HOOK = """\
webhooks:
  allow_networks: [127.0.0.0/8]
hooks:
  PreToolUse:
    - id: remote
      url: http://127.0.0.1:${HOOK_PORT}/hook
      secret: ${HOOK_SECRET}
      headers: {Authorization: "Bearer ${HOOK_TOKEN}"}
"""


def test_guard_hook_posts_to_the_configured_url_with_its_secret_and_headers(
    make_receiver: Callable[..., Receiver], write_config: Callable[..., Path], isolated_home: Path
) -> None:
    """The options an http entry gives reach the hook a ``guard hook`` process runs, with ``${VAR}`` substituted at each
    load: from the trusted config, then from its compiled snapshot, which keeps the secret out."""

    def check(got: Received) -> tuple[int, bytes, dict[str, str]]:
        verify(got.body, got.headers, SECRET)  # raises (→ 500, and the hook fails open) when the secret is not used
        return json_reply(DENY if got.headers["Authorization"] == "Bearer t0ken" else {"decision": "allow"})

    receiver = make_receiver(reply=check)
    write_config(ENV_HOOK)
    env = {"HOOK_PORT": str(receiver.port), "HOOK_SECRET": SECRET, "HOOK_TOKEN": "t0ken"}
    call = json.dumps({**EVENT, "tool_input": {"command": "git status"}, "cwd": str(isolated_home)})
    for _ in range(2):  # compiles the snapshot, then reads it
        done = run_guard(["hook"], isolated_home, stdin=call, env=env)
        out = json.loads(done.stdout)["hookSpecificOutput"]
        assert out["permissionDecision"] == "deny" and "http hook remote: no" in out["permissionDecisionReason"], out
    assert len(receiver.requests) == 2 and json.loads(receiver.requests[-1].body)["tool_input"] == {
        "command": "git status"
    }
    snapshots = list((isolated_home.parent / "home/.cache/guard/config").glob("*.json"))
    assert snapshots and all(SECRET not in path.read_text() for path in snapshots)
    rotated = run_guard(["hook"], isolated_home, stdin=call, env={**env, "HOOK_TOKEN": "other"})
    assert "permissionDecision" not in rotated.stdout, rotated.stdout  # the header follows the environment
