"""Which capture targets are allowed: in production, never private, loopback or link-local.

Checked before the first request and again for every redirect hop; the fetch then connects
to the checked address itself (``checked_addresses`` + shared/fetching/pinning.py), never
resolving the name a second time (no DNS rebinding). Tests and local demos set
ALLOW_PRIVATE_TARGETS=true explicitly.

Names are resolved through ``resolver`` (``socket.getaddrinfo`` unless replaced with
``use_resolver``: tests map names to private addresses this way without touching system
files). A lookup that fails temporarily (``EAI_AGAIN``: no answer from the DNS server for
now) raises TargetUnresolved, which callers retry later; a name that does not exist, or
resolves to a non-public address, raises TargetRefused.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

from shared.errors import TargetRefused, TargetUnresolved

ALLOWED_SCHEMES = frozenset({"http", "https"})

Resolver = Callable[[str, int], list[str]]
"""(host, port) -> every address it resolves to; raises socket.gaierror."""

TEMPORARY_DNS_ERRORS = frozenset({socket.EAI_AGAIN})
"""getaddrinfo errors that say "try again later" rather than "no such name"."""


NAT64_PREFIXES = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
"""IPv6 prefixes that carry an IPv4 address in their last 32 bits through a NAT64 gateway."""
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
"""Deprecated IPv4-compatible IPv6 addresses (::a.b.c.d)."""


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, 6to4, NAT64, compatible, Teredo
    server), if any: `::ffff:127.0.0.1`, `2002:a9fe:a9fe::` and `64:ff9b::a9fe:a9fe` all
    reach an IPv4 host, which is what the policy must judge."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if any(ip in net for net in NAT64_PREFIXES) or (ip in IPV4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


ALSO_REFUSED = (
    ipaddress.ip_network("192.0.0.0/24"),  # IETF protocol assignments (Oracle Cloud metadata)
    ipaddress.ip_network("100.64.0.0/10"),  # carrier-grade NAT (Alibaba Cloud metadata)
)
"""Networks refused although some Python versions call parts of them global."""


def refused_address(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """True for any address that is not globally routable unicast (private, loopback, ...),
    including IPv6 forms that embed such an IPv4 address."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = embedded_ipv4(ip)
        if inner is not None and refused_address(inner):
            return True
    elif any(ip in net for net in ALSO_REFUSED):
        return True
    return not ip.is_global or ip.is_multicast


def system_resolver(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for host."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


resolver: Resolver = system_resolver


def use_resolver(fn: Resolver | None) -> None:
    """Resolve names with fn from now on (None: the system resolver again)."""
    global resolver
    resolver = fn or system_resolver


def resolve(host: str, port: int) -> list[str]:
    """Every address the host resolves to (TargetUnresolved when DNS fails for now)."""
    try:
        return resolver(host, port)
    except socket.gaierror as exc:
        if exc.errno in TEMPORARY_DNS_ERRORS:
            raise TargetUnresolved(f"cannot resolve {host} for now: {exc}") from exc
        raise TargetRefused(f"cannot resolve {host}: {exc}") from exc
    except UnicodeError as exc:  # an IDNA label Python cannot encode
        raise TargetRefused(f"cannot resolve {host}: {exc}") from exc


def check_target(url: str, *, allow_private: bool) -> list[str]:
    """Raise TargetRefused unless url is http(s) to a public address (or private is allowed).

    Returns the checked addresses (empty when private targets are allowed: nothing checked).
    """
    if allow_private:
        _host_port(url)
        return []
    return checked_addresses(url, allow_private=False)


def _host_port(url: str) -> tuple[str, int]:
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # e.g. an unclosed IPv6 bracket
        raise TargetRefused(f"unparsable URL: {exc}") from exc
    if parts.scheme not in ALLOWED_SCHEMES:
        raise TargetRefused(f"unsupported scheme {parts.scheme!r}")
    host = parts.hostname
    if not host:
        raise TargetRefused("URL has no host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise TargetRefused(f"bad port: {exc}") from exc
    return host, port


def checked_addresses(url: str, *, allow_private: bool) -> list[str]:
    """The addresses of url's host, all checked: connect to one of THESE, never resolve the
    name again (a second answer could differ: DNS rebinding). Resolves even when private
    targets are allowed (the fetch needs an address to connect to); raises TargetRefused
    (or TargetUnresolved) as check_target does."""
    host, port = _host_port(url)
    addrs = resolve(host, port)
    if not addrs:
        raise TargetRefused(f"{host} resolves to no address")
    if not allow_private:
        for addr in addrs:
            if refused_address(ipaddress.ip_address(addr.split("%", 1)[0])):
                raise TargetRefused(f"{host} resolves to non-public address {addr}")
    return addrs
