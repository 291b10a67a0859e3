"""guard's own HTTP/1.1 wire to OpenAI-compatible servers: the answers real servers and proxies give, read right."""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from guard.judge import chat, http11, openai_transport
from guard.judge.chat import ChatReply, ChatRequest
from guard.judge.reply_limit import MAX_REPLY_BYTES, ReplyTooLarge

VERDICT = b'{"choices": [{"message": {"content": "{\\"decision\\": \\"deny\\"}"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}'
Answerer = Callable[[int], list[bytes]]


def fixed(body: bytes, *head: str) -> list[bytes]:
    return [
        (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + "".join(f"{h}\r\n" for h in head)
            + f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        + body
    ]


def chunked(body: bytes, size: int = 7) -> list[bytes]:
    parts = [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"]
    parts += [b"%x;ext=1\r\n%s\r\n" % (len(body[i : i + size]), body[i : i + size]) for i in range(0, len(body), size)]
    return [*parts, b"0\r\nX-Trailer: t\r\n\r\n"]


@asynccontextmanager
async def server(answer: Answerer, *, close_after: int | None = None) -> AsyncIterator[dict[str, int]]:
    """A loopback HTTP/1.1 server answering request n with ``answer(n)``; counts connections; closes each after ``close_after`` answers."""
    seen = {"connections": 0, "requests": 0, "port": 0}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen["connections"] += 1
        answered = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                seen["requests"] += 1
                for part in answer(seen["requests"]):
                    writer.write(part)
                    await writer.drain()
                answered += 1
                if close_after is not None and answered >= close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    listening = await asyncio.start_server(handle, "127.0.0.1", 0)
    seen["port"] = listening.sockets[0].getsockname()[1]
    async with listening:
        yield seen


async def ask(port: int) -> ChatReply:
    return await openai_transport.complete(
        ChatRequest(
            model="openai/stub",
            messages=[{"role": "user", "content": "ls"}],
            max_tokens=10,
            temperature=0,
            timeout=10,
            api_base=f"http://127.0.0.1:{port}/v1",
            api_key="k",
        )
    )


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


async def test_a_chunked_answer_is_read_whole_and_the_connection_kept() -> None:
    async with server(lambda n: chunked(VERDICT)) as seen:
        answers = [await ask(seen["port"]) for _ in range(3)]
    assert [a.content for a in answers] == ['{"decision": "deny"}'] * 3
    assert seen["connections"] == 1


async def test_a_connection_the_server_closed_while_idle_is_replaced_and_the_call_judged() -> None:
    async with server(lambda n: fixed(VERDICT), close_after=1) as seen:
        for _ in range(3):
            assert (await ask(seen["port"])).content == '{"decision": "deny"}'
            await asyncio.sleep(0.05)  # the server's close arrives while the connection is idle
    assert seen["requests"] == 3 and seen["connections"] == 3


async def test_connection_close_is_honoured() -> None:
    async with server(lambda n: fixed(VERDICT, "Connection: close"), close_after=1) as seen:
        for _ in range(2):
            await ask(seen["port"])
    assert seen["requests"] == 2 and seen["connections"] == 2


@pytest.mark.slow
@pytest.mark.parametrize("shape", [fixed, chunked], ids=["content-length", "chunked"])
async def test_an_answer_over_the_limit_is_refused_unread(shape: Callable[[bytes], list[bytes]]) -> None:
    huge = b"x" * (MAX_REPLY_BYTES + 10)
    async with server(lambda n: shape(huge)) as seen:
        with pytest.raises(ReplyTooLarge):
            await ask(seen["port"])


async def test_an_error_answer_keeps_its_status_and_retry_after() -> None:
    body = b'{"error": {"message": "slow down", "type": "rate_limit"}}'
    async with server(
        lambda n: [
            f"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
        ]
    ) as seen:
        with pytest.raises(chat.RateLimitError) as caught:
            await ask(seen["port"])
    assert caught.value.status_code == 429 and "slow down" in str(caught.value)
    assert caught.value.headers.get("Retry-After") == "3"


async def test_an_answer_that_is_not_http_is_a_connection_error_not_a_verdict() -> None:
    async with server(lambda n: [b"SSH-2.0-OpenSSH_9.6\r\n\r\n"]) as seen:
        with pytest.raises(chat.APIConnectionError, match="not an HTTP/1.1 answer"):
            await ask(seen["port"])


async def test_nothing_listening_is_unreachable() -> None:
    async with server(lambda n: []) as seen:
        port = seen["port"]
    with pytest.raises(chat.EndpointUnreachable):
        await ask(port)


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (the certificate is its own CA)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


async def test_tls_is_verified_against_the_ca_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An https endpoint is spoken to over TLS with the hostname checked: trusted (``SSL_CERT_FILE``, as httpx reads
    it), it answers; untrusted by certifi's bundle, it is unreachable."""
    cert, key = _self_signed(tmp_path)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            length = next(
                int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
            )
            await reader.readexactly(length)
            writer.write(fixed(VERDICT)[0])
        writer.close()

    listening = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=served)
    url = f"https://127.0.0.1:{listening.sockets[0].getsockname()[1]}/v1/chat/completions"
    async with listening:
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        trusted = http11.Connections(http11.tls_context(), 60)
        answer, body = await trusted.post(url, b"{}", {}, 10)
        await trusted.aclose()
        monkeypatch.delenv("SSL_CERT_FILE")
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        with pytest.raises(http11.Unreachable, match="CERTIFICATE_VERIFY_FAILED"):
            await http11.Connections(http11.tls_context(), 60).post(url, b"{}", {}, 10)
    assert answer.status_code == 200 and body == VERDICT
