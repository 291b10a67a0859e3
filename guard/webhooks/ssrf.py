"""SSRF defence for webhooks: check a URL once and hand back the address to connect to.

A webhook URL comes from config files, settings.json or a third-party SKILL.md, so
it may point at the metadata service (169.254.169.254), a database on localhost
or an intranet admin panel. :func:`check_url` parses the URL strictly, resolves
the host exactly once, refuses every address that is not globally routable
(including IPv4 hidden inside IPv6 forms) unless ``webhooks.allow_networks``
opens it, and returns the checked address. The caller connects to that address
and never resolves the name again, so DNS rebinding cannot swap it afterwards.

Odd spellings that C resolvers (``inet_aton``) read as IPv4 (``2130706433``,
``0177.0.0.1``, ``0x7f.1``, ``127.1``) are refused outright rather than decoded:
a webhook URL never needs them, and refusing them means no two parsers can
disagree about what the host is. Standard library only.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from guard.core.errors import HookRefused

__all__ = ["Resolver", "Target", "check_url", "display_url", "parse_networks", "refusal"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
#: ``(host, port) -> addresses``; the default uses ``socket.getaddrinfo``.
Resolver = Callable[[str, int], list[str]]

_SCHEMES = {"http": 80, "https": 443}
_HOSTNAME = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)(\.(?!-)[a-z0-9_-]{1,63}(?<!-))*$")
#: A label C resolvers read as a number: decimal, octal (leading 0) or hex (0x).
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


@dataclass(frozen=True, slots=True)
class Target:
    """A checked webhook destination: connect to ``address``, name ``host`` in Host and SNI."""

    scheme: str
    host: str  # the name as written (lower case, no trailing dot); IPv6 without brackets
    port: int
    address: str  # the checked IP address to connect to
    path: str  # path and query, never empty


def parse_networks(networks: Iterable[str]) -> tuple[IPNetwork, ...]:
    """``webhooks.allow_networks`` as networks; a bad entry raises ValueError naming it."""
    parsed = []
    for text in networks:
        try:
            parsed.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError as exc:
            raise ValueError(f"webhooks.allow_networks: {text!r} is not a network ({exc})") from exc
    return tuple(parsed)


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """IPv4 addresses an IPv6 address carries (compatible, NAT64, 6to4, Teredo)."""
    found: list[tuple[str, ipaddress.IPv4Address]] = []
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:
        found.append(("IPv4-compatible", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
    if ip in _NAT64:
        found.append(("NAT64", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
    if ip.sixtofour is not None:
        found.append(("6to4", ip.sixtofour))
    if ip.teredo is not None:
        server, client = ip.teredo
        found += [("Teredo server", server), ("Teredo client", client)]
    return found


def _category(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public unicast address, or None when it is one."""
    checks: list[tuple[bool, str]] = [
        (ip.is_unspecified, "unspecified"),
        (ip.is_loopback, "loopback"),
        (ip.is_link_local, "link-local"),
        (ip.is_multicast, "multicast"),
        (ip == ipaddress.IPv4Address("255.255.255.255"), "broadcast"),
        (ip.version == 4 and ip in _CGNAT, "carrier-grade NAT (100.64.0.0/10)"),
        (ip.version == 6 and ip in _NAT64_LOCAL, "local-use NAT64 (64:ff9b:1::/48)"),
        (ip.is_reserved, "reserved"),
        (ip.is_private, "private"),
        (not ip.is_global, "not globally routable"),
    ]
    return next((name for hit, name in checks if hit), None)


def refusal(ip: IPAddress, allowed: Iterable[IPNetwork] = ()) -> str | None:
    """Why a webhook may not connect to ``ip``, or None when it may.

    An address inside ``allowed`` is accepted as is (that is how a user opens an
    intranet range). Otherwise it must be public unicast and so must every IPv4
    address it embeds, so ``::ffff:127.0.0.1`` or ``2002:7f00:1::`` cannot
    smuggle loopback past the check.
    """
    allowed = tuple(allowed)
    if any(ip.version == net.version and ip in net for net in allowed):
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:  # the socket really talks to the IPv4 address
            why = refusal(ip.ipv4_mapped, allowed)
            return f"the IPv4-mapped form of {ip.ipv4_mapped}, which is {why}" if why else None
        for form, inner in _embedded_ipv4(ip):
            why = refusal(inner, allowed)
            if why:
                return f"the {form} form of {inner}, which is {why}"
    return _category(ip)


def _resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def display_url(url: str) -> str:
    """``url`` for messages: scheme, host and port only.

    Paths and queries often ARE the secret (Slack-style hook URLs, ``?token=``),
    and refusal reasons reach the audit log and, for fail_closed hooks, the agent.
    """
    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2]
    except ValueError:
        return "(unparseable URL)"
    rest = "/…" if parts.path.strip("/") or parts.query else ""
    return f"{parts.scheme}://{netloc}{rest}" if parts.scheme and netloc else "(URL without scheme or host)"


def _refuse(url: str, why: str) -> HookRefused:
    return HookRefused(f"webhook {display_url(url)} refused: {why}")


def _literal_ip(host: str) -> IPAddress | None:
    """The IP a host literal stands for; odd numeric spellings are refused, not decoded."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if ":" in host:
        raise ValueError(f"{host!r} is not a valid IPv6 address")
    if _NUMERIC_LABEL.match(host.rsplit(".", 1)[-1]):
        raise ValueError(
            f"host {host!r} is a non-standard spelling of an IP address; write IPv4 as four decimal numbers (a.b.c.d)"
        )
    return None


def _split(url: str) -> tuple[str, str, int, str]:
    """Scheme, host, port and path of ``url``, refusing anything ambiguous."""
    if any(ch.isspace() or ord(ch) < 0x20 or ch == "\\" for ch in url):
        raise ValueError("the URL contains whitespace, control characters or backslashes")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in _SCHEMES:
        raise ValueError(f"scheme {parts.scheme or '(none)'!r} is not allowed (only http and https)")
    if "@" in parts.netloc:
        raise ValueError("credentials (user@host) are not allowed in a webhook URL; use headers or secret")
    host = parts.hostname or ""
    if "%" in host:
        raise ValueError("IPv6 zone identifiers are not allowed")
    if not host.isascii():
        raise ValueError(f"host {host!r} is not ASCII; write internationalised names in punycode (xn--…)")
    try:
        port = parts.port or _SCHEMES[scheme]
    except ValueError as exc:
        raise ValueError(f"bad port: {exc}") from exc
    host = host[:-1] if host.endswith(".") and not parts.netloc.startswith("[") else host
    if not host:
        raise ValueError("the URL has no host")
    return scheme, host, port, (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def check_url(url: str, *, allow_networks: Iterable[str] = (), resolve: Resolver | None = None) -> Target:
    """Check ``url`` for a webhook and return where to connect.

    Resolves a host name once (with ``resolve``, default ``getaddrinfo``); if ANY
    address it resolves to is refused the URL is refused, since the attacker may
    control which one a later lookup returns. Raises :class:`HookRefused` naming
    the URL and the reason; nothing has been sent when it does.
    """
    try:
        allowed = parse_networks(allow_networks)
        scheme, host, port, path = _split(url)
        literal = _literal_ip(host)
    except ValueError as exc:
        raise _refuse(url, str(exc)) from exc
    if literal is not None:
        addresses = [literal]
    else:
        if not _HOSTNAME.match(host):
            raise _refuse(url, f"host {host!r} is not a valid host name")
        try:
            addresses = [ipaddress.ip_address(a.split("%", 1)[0]) for a in (resolve or _resolve)(host, port)]
        except (OSError, UnicodeError) as exc:
            raise _refuse(url, f"cannot resolve {host!r}: {exc}") from exc
        if not addresses:
            raise _refuse(url, f"{host!r} resolves to no address")
    for ip in addresses:
        why = refusal(ip, allowed)
        if why:
            shown = f"{host} resolves to {ip}, which" if literal is None else str(ip)
            raise _refuse(url, f"{shown} is {why}; add its network to webhooks.allow_networks to allow it")
    address = addresses[0]
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return Target(scheme=scheme, host=host, port=port, address=str(mapped or address), path=path)
