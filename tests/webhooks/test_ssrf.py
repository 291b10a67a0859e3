"""SSRF defence: every way of spelling an internal address is refused, public ones pass."""

from __future__ import annotations

import pytest

from guard.core.errors import HookRefused
from guard.webhooks.ssrf import check_url

#: Name → addresses for the names used below (no real DNS in tests).
DNS = {
    "localhost": ["127.0.0.1"],
    "metadata.test": ["169.254.169.254"],
    "mixed.test": ["93.184.216.34", "10.0.0.5"],
    "v6local.test": ["::1"],
    "hooks.test": ["93.184.216.34"],
}


def resolve(host: str, port: int) -> list[str]:
    return DNS[host]


BYPASSES = [
    # plain internal addresses
    ("http://127.0.0.1/", "loopback"),
    ("http://127.255.255.254:8080/x", "loopback"),
    ("http://[::1]/", "loopback"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://[::]/", "unspecified"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[fe80::1]/", "link-local"),
    ("http://10.0.0.1/", "private"),
    ("http://172.16.5.4/", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://[fc00::1]/", "private"),
    ("http://100.64.0.1/", "carrier-grade NAT"),
    ("http://100.127.255.254/", "carrier-grade NAT"),
    ("http://224.0.0.1/", "multicast"),
    ("http://[ff02::1]/", "multicast"),
    ("http://255.255.255.255/", "broadcast"),
    ("http://240.0.0.1/", "reserved"),
    ("http://192.0.2.1/", "private"),  # documentation range
    # odd IPv4 spellings that inet_aton would read as 127.0.0.1
    ("http://2130706433/", "non-standard spelling"),
    ("http://0177.0.0.1/", "non-standard spelling"),
    ("http://0x7f.1/", "non-standard spelling"),
    ("http://0x7f000001/", "non-standard spelling"),
    ("http://0x7f.0x0.0x0.0x1/", "non-standard spelling"),
    ("http://017700000001/", "non-standard spelling"),
    ("http://127.1/", "non-standard spelling"),
    ("http://127.000.000.001/", "non-standard spelling"),
    ("http://0/", "non-standard spelling"),
    ("http://127.0.0.1./", "loopback"),  # trailing dot
    ("http://localhost/", "loopback"),
    ("http://LOCALHOST./", "loopback"),
    # IPv4 inside IPv6
    ("http://[::ffff:127.0.0.1]/", "IPv4-mapped form of 127.0.0.1"),
    ("http://[::ffff:7f00:1]/", "IPv4-mapped form of 127.0.0.1"),
    ("http://[0:0:0:0:0:ffff:169.254.169.254]/", "IPv4-mapped form of 169.254.169.254"),
    ("http://[::127.0.0.1]/", "IPv4-compatible form of 127.0.0.1"),
    ("http://[64:ff9b::7f00:1]/", "NAT64 form of 127.0.0.1"),
    ("http://[64:ff9b::a9fe:a9fe]/", "NAT64 form of 169.254.169.254"),
    ("http://[64:ff9b:1::a00:1]/", "local-use NAT64"),
    ("http://[2002:7f00:1::1]/", "6to4 form of 127.0.0.1"),
    ("http://[2002:a9fe:a9fe::]/", "6to4 form of 169.254.169.254"),
    ("http://[2001:0:a00:1::]/", "Teredo server form of 10.0.0.1"),
    # parser tricks
    ("http://[fe80::1%25eth0]/", "zone identifiers"),
    ("http://[::ffff:127.0.0.1%25lo]/", "zone identifiers"),
    ("http://[127.0.0.1]/", "cannot be in brackets"),
    ("http://good.example@127.0.0.1/", "credentials"),
    ("http://127.0.0.1:80@good.example/", "credentials"),
    ("http://127.0.0.1\\@good.example/", "backslashes"),
    ("http://127.0.0.1\t/", "whitespace"),
    ("http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/", "not ASCII"),  # fullwidth digits
    ("http:///only-a-path", "no host"),
    ("http://host.test:99999/", "bad port"),
    # schemes
    ("file:///etc/passwd", "scheme 'file'"),
    ("gopher://127.0.0.1:6379/_INFO", "scheme 'gopher'"),
    ("ftp://93.184.216.34/", "scheme 'ftp'"),
    ("127.0.0.1:8080/hook", "scheme"),
    # names that resolve inside
    ("http://metadata.test/", "metadata.test resolves to 169.254.169.254, which is link-local"),
    ("http://mixed.test/", "resolves to 10.0.0.5, which is private"),
    ("http://v6local.test/", "loopback"),
]


@pytest.mark.parametrize(("url", "why"), BYPASSES)
def test_bypass_attempt_is_refused_with_a_reason(url: str, why: str) -> None:
    with pytest.raises(HookRefused) as info:
        check_url(url, resolve=resolve)
    assert why in str(info.value)


def test_the_table_is_big_enough() -> None:
    assert len(BYPASSES) >= 30


@pytest.mark.parametrize(
    ("url", "address", "host", "port", "path"),
    [
        ("http://93.184.216.34/hook", "93.184.216.34", "93.184.216.34", 80, "/hook"),
        ("https://hooks.test/a?b=1", "93.184.216.34", "hooks.test", 443, "/a?b=1"),
        ("HTTPS://Hooks.Test.:8443", "93.184.216.34", "hooks.test", 8443, "/"),
        ("https://[2606:4700::1111]/", "2606:4700::1111", "2606:4700::1111", 443, "/"),
        ("http://[::ffff:93.184.216.34]/", "93.184.216.34", "::ffff:93.184.216.34", 80, "/"),  # connect over IPv4
        ("http://[2002:5db8:d822::1]/", "2002:5db8:d822::1", "2002:5db8:d822::1", 80, "/"),  # 6to4 of a public address
    ],
)
def test_public_addresses_pass_and_name_where_to_connect(
    url: str, address: str, host: str, port: int, path: str
) -> None:
    target = check_url(url, resolve=resolve)
    assert (target.address, target.host, target.port, target.path) == (address, host, port, path)


def test_allow_networks_opens_a_private_range_and_nothing_else() -> None:
    allow = ["10.20.0.0/16"]
    assert check_url("http://10.20.3.4/", allow_networks=allow).address == "10.20.3.4"
    assert check_url("http://[::ffff:10.20.3.4]/", allow_networks=allow).address == "10.20.3.4"
    for url in ("http://10.21.0.1/", "http://127.0.0.1/", "http://169.254.169.254/", "http://[64:ff9b::a14:304]/"):
        with pytest.raises(HookRefused):
            check_url(url, allow_networks=allow)


def test_allow_networks_does_not_excuse_odd_spellings() -> None:
    with pytest.raises(HookRefused, match="non-standard"):
        check_url("http://127.1/", allow_networks=["127.0.0.0/8"])


def test_a_bad_allow_networks_entry_is_named() -> None:
    with pytest.raises(HookRefused, match="allow_networks: 'intranet'"):
        check_url("http://93.184.216.34/", allow_networks=["intranet"])


def test_the_host_is_resolved_exactly_once() -> None:
    lookups: list[str] = []

    def rebinding(host: str, port: int) -> list[str]:
        lookups.append(host)
        return ["93.184.216.34"] if len(lookups) == 1 else ["127.0.0.1"]

    target = check_url("http://rebind.test/", resolve=rebinding)
    assert lookups == ["rebind.test"]
    assert target.address == "93.184.216.34"


def test_an_unresolvable_name_is_refused() -> None:
    def fail(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    with pytest.raises(HookRefused, match="cannot resolve 'nowhere.test'"):
        check_url("http://nowhere.test/", resolve=fail)
