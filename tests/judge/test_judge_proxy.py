"""The judge behind an HTTP proxy, over guard's own wire: a real forward proxy and real sockets on loopback.

``http://`` endpoints are asked in absolute form through the proxy, ``https://`` ones through a CONNECT tunnel
with TLS to the endpoint verified inside it; ``NO_PROXY`` keeps a call away from the proxy; a proxy that refuses
is a failure naming it, which the hook's failure_mode decides on.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import trustme
from fixtures.judge import FAST_RETRY, bash_event, settings_for, smart_spec
from fixtures.processes import modules, run_guard

from guard.judge import proxy
from guard.runtime.engine import Engine
from guard.runtime.registry import Registry
from guard.testing.forward_proxy import ForwardProxy
from guard.testing.openai_stub import Reply, StubServer

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUEST_METHOD")
DENY = Reply.verdict("deny", "deletes a home folder", confidence=0.9)


@pytest.fixture(autouse=True)
def no_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only what a test sets: none of the machine's proxy variables."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture
def forward_proxy() -> Iterator[ForwardProxy]:
    with ForwardProxy() as running:
        yield running


@pytest.fixture
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def tls_stub(ca: trustme.CA, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StubServer]:
    """An OpenAI-compatible stub over https (a certificate for 127.0.0.1 from ``ca``), trusted through SSL_CERT_FILE."""
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(served)
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    with StubServer(tls=served, default=DENY) as server:
        yield server


async def judged(stub: StubServer, **spec: object) -> tuple[str | None, str | None]:
    """The decision and the hook's error when a smart hook judges ``rm -rf ~/`` against ``stub`` in the engine."""
    engine = Engine(settings_for(stub), Registry([smart_spec(**spec)]), audit=False)  # type: ignore[arg-type]
    engine.ctx.resources["judge_retry"] = FAST_RETRY
    decision = await engine.decide(bash_event())
    [hook] = decision.hooks
    return decision.decision, hook.error


def authority(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}"


async def test_an_http_endpoint_is_asked_through_the_proxy_in_absolute_form(
    stub: StubServer, forward_proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub.default = DENY
    monkeypatch.setenv("HTTP_PROXY", forward_proxy.url)
    assert await judged(stub) == ("deny", None)
    [seen] = forward_proxy.seen
    assert (seen.method, seen.target) == ("POST", f"{stub.url}/chat/completions")
    assert seen.headers["host"] == authority(stub.url) and stub.calls == 1


async def test_an_https_endpoint_is_reached_through_a_connect_tunnel_with_credentials(
    tls_stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ForwardProxy(credentials=("team", "s3cr:t")) as guarded:
        monkeypatch.setenv("https_proxy", guarded.url.replace("s3cr:t", "s3cr%3At"))  # userinfo is percent-decoded
        assert await judged(tls_stub) == ("deny", None)
        for _ in range(2):  # the tunnel is a kept-alive connection: later calls reuse it
            assert await judged(tls_stub) == ("deny", None)
    [seen] = guarded.seen
    assert (seen.method, seen.target) == ("CONNECT", authority(tls_stub.url)) and tls_stub.calls == 3
    assert tls_stub.connections == 1


async def test_no_proxy_keeps_the_call_away_from_the_proxy(
    stub: StubServer, forward_proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub.default = DENY
    monkeypatch.setenv("ALL_PROXY", forward_proxy.url)
    monkeypatch.setenv("NO_PROXY", f"example.com, 127.0.0.1:{stub.port}")
    assert await judged(stub) == ("deny", None)
    assert forward_proxy.seen == [] and stub.calls == 1


async def test_an_https_proxy_is_spoken_to_over_tls_for_either_kind_of_endpoint(
    tls_stub: StubServer, stub: StubServer, ca: trustme.CA, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TLS to the proxy, verified; for an https endpoint TLS to it inside that (TLS in TLS)."""
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(served)
    stub.default = DENY
    with ForwardProxy(tls=served) as over_tls:
        assert over_tls.url.startswith("https://")
        monkeypatch.setenv("ALL_PROXY", over_tls.url)
        assert await judged(tls_stub) == ("deny", None)
        assert await judged(stub) == ("deny", None)
    assert [(seen.method, seen.target) for seen in over_tls.seen] == [
        ("CONNECT", authority(tls_stub.url)),
        ("POST", f"{stub.url}/chat/completions"),
    ]


@pytest.mark.parametrize(("mode", "decision"), [("fail_closed", "deny"), ("fail_open", "allow")])
async def test_a_proxy_refusing_the_tunnel_is_a_failure_naming_it(
    tls_stub: StubServer, monkeypatch: pytest.MonkeyPatch, mode: str, decision: str | None
) -> None:
    with ForwardProxy(credentials=("team", "secret")) as guarded:
        address = guarded.url.split("@")[1]
        monkeypatch.setenv("HTTPS_PROXY", f"http://{address}")  # no credentials: 407
        outcome, error = await judged(tls_stub, failure_mode=mode)
    assert outcome == decision and error is not None
    assert f"the proxy http://{address} (HTTPS_PROXY) answered CONNECT {authority(tls_stub.url)} with 407" in error
    assert tls_stub.calls == 0


async def test_a_wrong_certificate_behind_the_tunnel_fails_verification(
    tls_stub: StubServer, forward_proxy: ForwardProxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trustme.CA().cert_pem.write_to_path(str(tmp_path / "other.pem"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "other.pem"))  # the stub's certificate is not from this CA
    monkeypatch.setenv("HTTPS_PROXY", forward_proxy.url)
    outcome, error = await judged(tls_stub, failure_mode="fail_closed")
    assert outcome == "deny" and error is not None and "CERTIFICATE_VERIFY_FAILED" in error
    assert [seen.method for seen in forward_proxy.seen][:1] == ["CONNECT"] and tls_stub.calls == 0


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (
            "socks5://127.0.0.1:1080",
            "ALL_PROXY=socks5://127.0.0.1…: guard's judge speaks to http:// and https:// proxies only",
        ),
        ("http://user:pw@proxy.internal:31a8", "ALL_PROXY: not a proxy URL"),
        ("http://user:pw", "ALL_PROXY: not a proxy URL"),  # no host: the password is where a port would be
    ],
)
async def test_a_proxy_guard_cannot_speak_to_is_refused_naming_the_variable(
    stub: StubServer, monkeypatch: pytest.MonkeyPatch, value: str, says: str
) -> None:
    monkeypatch.setenv("ALL_PROXY", value)
    outcome, error = await judged(stub, failure_mode="fail_closed")
    assert outcome == "deny" and error is not None and says in error and "pw" not in error
    assert stub.calls == 0


@pytest.mark.parametrize(
    ("no_proxy", "url", "bypassed"),
    [
        ("*", "https://api.openai.com", True),
        ("example.com, *", "https://api.openai.com", True),
        ("openai.com", "https://api.openai.com/v1", True),
        ("openai.com", "https://openai.com/v1", True),
        ("openai.com", "https://notopenai.com/v1", False),
        (".openai.com", "https://api.openai.com/v1", True),
        (".openai.com", "https://openai.com/v1", False),
        ("OpenAI.com", "https://API.openai.com", True),
        ("openai.com:443", "https://api.openai.com", True),
        ("openai.com:8443", "https://api.openai.com", False),
        ("10.0.0.0/8", "http://10.1.2.3:8000/v1", True),
        ("10.0.0.0/8", "http://11.1.2.3:8000/v1", False),
        ("::1", "http://[::1]:8000/v1", True),
        ("localhost", "http://localhost:11434/v1", True),
        ("localhost", "http://sub.localhost:11434/v1", False),
        ("https://api.openai.com", "https://api.openai.com/v1", True),
        ("http://api.openai.com", "https://api.openai.com/v1", False),
        ("openai.com:https", "https://api.openai.com/v1", False),  # not a port: matches nothing
    ],
)
def test_no_proxy_entries(monkeypatch: pytest.MonkeyPatch, no_proxy: str, url: str, bypassed: bool) -> None:
    monkeypatch.setenv("ALL_PROXY", "proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", no_proxy)
    expected = None if bypassed else proxy.Proxy("proxy.internal", 3128, None, "ALL_PROXY")
    assert proxy.for_url(url) == expected


def test_which_variable_names_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scheme's own variable before ALL_PROXY; lower case before upper; HTTP_PROXY ignored in a CGI script."""
    monkeypatch.setenv("ALL_PROXY", "http://all:1")
    monkeypatch.setenv("HTTPS_PROXY", "http://upper:2")
    monkeypatch.setenv("https_proxy", "http://lower:3")
    monkeypatch.setenv("HTTP_PROXY", "http://plain:4")
    assert proxy.for_url("https://api.openai.com") == proxy.Proxy("lower", 3, None, "https_proxy")
    assert proxy.for_url("http://localhost:8000") == proxy.Proxy("plain", 4, None, "HTTP_PROXY")
    monkeypatch.setenv("REQUEST_METHOD", "GET")
    assert proxy.for_url("http://localhost:8000") == proxy.Proxy("all", 1, None, "ALL_PROXY")
    monkeypatch.setenv("https_proxy", "")  # an empty lower-case variable unsets the upper-case one
    assert proxy.for_url("https://api.openai.com") == proxy.Proxy("all", 1, None, "ALL_PROXY")


@pytest.mark.slow
def test_guard_check_goes_through_the_proxy_without_httpx(
    tls_stub: StubServer, forward_proxy: ForwardProxy, isolated_home: Path
) -> None:
    """The production entry point: a ``guard check`` process with HTTPS_PROXY set reaches an https endpoint through
    the proxy's tunnel, and its miss loads no HTTP library."""
    env = {
        "GUARD_MODEL_QUICK": "openai/stub-quick",
        "GUARD_API_BASE": tls_stub.url,
        "HTTPS_PROXY": forward_proxy.url,
    }
    args = ["check", "--rule", "Deny deleting files outside the project", "--tool", "Bash", "--depth", "quick"]
    proc = run_guard([*args, "--input", json.dumps({"command": "rm -rf ~/"})], isolated_home, env=env, probe=True)
    assert proc.returncode == 1 and "deny" in proc.stdout.lower(), proc.stdout + proc.stderr[-2000:]
    assert [(seen.method, seen.target) for seen in forward_proxy.seen] == [("CONNECT", authority(tls_stub.url))]
    assert tls_stub.calls == 1 and "httpx" not in modules(proc)


def test_the_proxy_variables_are_read_on_each_call(
    stub: StubServer, forward_proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kept-alive direct connection is not reused once a proxy is set: pools are keyed by the proxy too."""

    async def two_calls() -> None:
        assert await judged(stub) == ("deny", None)
        monkeypatch.setenv("HTTP_PROXY", forward_proxy.url)
        assert await judged(stub) == ("deny", None)

    stub.default = DENY
    asyncio.run(two_calls())
    assert len(forward_proxy.seen) == 1 and stub.calls == 2
