"""Which HTTP proxy, if any, a judge call goes through: the proxy variables, read as httpx read them.

The ``openai/…`` route went over httpx whenever a proxy variable was set; guard's own
wire (:mod:`guard.judge.http11`) now speaks to the proxy itself, and this module keeps
httpx's reading of the environment (httpx's ``_utils.get_environment_proxies``, built on
``urllib.request.getproxies_environment``), so a setup that worked keeps working:

- ``http_proxy`` / ``https_proxy`` for targets of that scheme, else ``all_proxy``; the
  lower-case name wins over the upper-case one, an empty lower-case one unsets it, and
  ``HTTP_PROXY`` is ignored when ``REQUEST_METHOD`` is set (a CGI script: httpoxy,
  CVE-2016-1000110). A value without a scheme is an ``http://`` proxy.
- ``no_proxy``, comma-separated: ``*`` (as any entry) turns proxies off; ``example.com``
  matches it and its subdomains, ``.example.com`` its subdomains only; an IP address or
  ``localhost`` matches itself; ``scheme://host[:port]`` matches that origin; ``host:port``
  matches that host on that port only.

Where guard differs from httpx: a port in ``no_proxy`` is compared with the target's
effective port (httpx compares it with the URL's explicit port, so ``example.com:443``
never matched ``https://example.com``), and an entry such as ``10.0.0.0/8`` matches the
addresses in that network (httpx matched only the address before the slash). urllib's
``proxy_bypass_environment`` differs from both: it drops leading dots (``.example.com``
matches ``example.com``) and knows ``*`` only as the whole value.

``http://`` and ``https://`` proxies are spoken to (the latter over TLS, verified as an
endpoint is); a ``socks5://`` one never worked (httpx needs the ``socksio`` package for
it, which guard does not install) and is refused naming the variable.
"""

from __future__ import annotations

import base64
import ipaddress
import os
from dataclasses import dataclass
from urllib.parse import SplitResult, unquote, urlsplit

__all__ = ["Proxy", "ProxyUnsupported", "for_url"]


class ProxyUnsupported(ValueError):
    """A proxy variable names a proxy guard's wire cannot speak to (SOCKS), or no URL at all."""


@dataclass(frozen=True)
class Proxy:
    """An HTTP proxy: where it listens, its credentials as a header, and the variable that named it."""

    host: str
    port: int
    authorization: str | None  # the Proxy-Authorization header's value, from the URL's user:password
    variable: str
    tls: bool = False  # an https:// proxy: spoken to over TLS

    @property
    def shown(self) -> str:
        """The proxy as an error names it: address and variable, never the credentials."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port} ({self.variable})"


def _variables() -> dict[str, tuple[str, str]]:
    """``scheme -> (value, variable name)`` as ``urllib.request.getproxies_environment`` reads them (lower case wins)."""
    found: dict[str, tuple[str, str]] = {}
    for name, value in os.environ.items():
        if value and name.lower().endswith("_proxy") and name != name.lower():
            found[name.lower()[:-6]] = (value, name)
    if "REQUEST_METHOD" in os.environ:  # a CGI script: HTTP_PROXY may come from the client's Proxy header
        found.pop("http", None)
    for name, value in os.environ.items():
        if name.endswith("_proxy") and name == name.lower():
            if value:
                found[name[:-6]] = (value, name)
            else:
                found.pop(name[:-6], None)
    return found


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _bypassed_by(entry: str, target: SplitResult) -> bool:
    """Whether one ``no_proxy`` entry covers ``target``."""
    host, port = (target.hostname or "").lower(), target.port or _default_port(target.scheme)
    entry = entry.lower()
    if "://" in entry:
        origin = urlsplit(entry)
        if origin.scheme not in ("all", target.scheme):
            return False
        entry = origin.netloc
    try:
        network = ipaddress.ip_network(entry.strip("[]"), strict=False)
    except ValueError:
        network = None
    if network is not None:
        address = _address(host)
        return address is not None and address in network
    named = urlsplit(f"//{entry}")
    try:
        if named.port is not None and named.port != port:
            return False
    except ValueError:  # not a port: an entry nothing matches, as in httpx
        return False
    name = (named.hostname or "").rstrip(".")
    if name.startswith("."):
        return host.endswith(name)
    if _address(name) is not None or name == "localhost":
        return host == name
    return host == name or host.endswith(f".{name}")


def _bypassed(no_proxy: str, target: SplitResult) -> bool:
    entries = [entry.strip() for entry in no_proxy.split(",") if entry.strip()]
    return "*" in entries or any(_bypassed_by(entry, target) for entry in entries)


def _parse(value: str, variable: str) -> Proxy:
    parts = urlsplit(value if "://" in value else f"http://{value}")
    try:
        port = parts.port or _default_port(parts.scheme)
    except ValueError:  # never the value: in ``user:password`` (no host) the password is what reads as the port
        raise ProxyUnsupported(f"{variable}: not a proxy URL (its port is not a number up to 65535)") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ProxyUnsupported(
            f"{variable}={parts.scheme}://{parts.hostname or ''}…: guard's judge speaks to http:// and https:// "
            "proxies only (set one, or add the endpoint's host to NO_PROXY)"
        )
    authorization = None
    if parts.username is not None:
        credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        authorization = "Basic " + base64.b64encode(credentials).decode("ascii")
    return Proxy(parts.hostname, port, authorization, variable, tls=parts.scheme == "https")


def for_url(url: str) -> Proxy | None:
    """The proxy the environment names for ``url`` (read on each call: the variables may change), or None."""
    found = _variables()
    if not found:
        return None
    target = urlsplit(url)
    named = found.get(target.scheme) or found.get("all")
    if named is None:
        return None
    no_proxy = found.get("no")
    if no_proxy is not None and _bypassed(no_proxy[0], target):
        return None
    return _parse(*named)
