"""Which capture targets are allowed: in production, never private, loopback or link-local.

The one judge of a capture target's address, used by the raw fetch (`shared/fetching`), the
poller's short-link resolver and the archiver's egress proxy (every request of the browser).
Checked before the first request and again for every redirect hop; callers then connect to
a checked address themselves (``checked_addresses`` + shared/fetching/pinning.py, or the
egress proxy), never resolving the name a second time (no DNS rebinding). Tests and local
demos set ALLOW_PRIVATE_TARGETS=true explicitly.

Names are resolved through ``resolver`` (``socket.getaddrinfo`` unless replaced with
``use_resolver``: tests map names to private addresses this way without touching system
files), and every answer goes through the process's DNS cache (`shared/dnscache.py`: one
lookup per name shared by every request, answers and "no such name" kept 60 s, lookups in
the cache's own threads). A lookup that fails for now
(``EAI_AGAIN``: no answer from the DNS server, or none within the caller's timeout) raises
TargetUnresolved, which callers retry later; a name that does not exist raises NoSuchHost,
a TargetRefused, as does one that resolves to a non-public address.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

from shared.dnscache import TEMPORARY_DNS_ERRORS, DnsCache, Lookup
from shared.errors import NoSuchHost, TargetRefused, TargetUnresolved
from shared.links.urlparts import SUPPORTED_SCHEMES

Resolver = Lookup
"""(host, port) -> every address it resolves to; raises socket.gaierror."""


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


IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def refused_address(ip: IpAddress) -> bool:
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
dns_cache = DnsCache()
"""The process's DNS answers."""


def use_resolver(fn: Resolver | None) -> None:
    """Resolve names with fn from now on (None: the system resolver again); forgets the
    answers cached so far."""
    global resolver
    resolver = fn or system_resolver
    dns_cache.clear()


def _lookup(host: str, port: int) -> list[str]:
    return resolver(host, port)


def _unresolved(host: str, exc: Exception) -> Exception:
    """The error of a failed lookup: for now (TargetUnresolved) or for good (NoSuchHost)."""
    if isinstance(exc, socket.gaierror) and exc.errno in TEMPORARY_DNS_ERRORS:
        return TargetUnresolved(f"cannot resolve {host} for now: {exc}")
    return NoSuchHost(f"cannot resolve {host}: {exc}")


def resolve(host: str, port: int) -> list[str]:
    """Every address the host resolves to, blocking (TargetUnresolved when DNS fails for
    now, TargetRefused when the name does not exist)."""
    try:
        return dns_cache.resolve(_lookup, host, port)
    except (OSError, UnicodeError) as exc:  # UnicodeError: an IDNA label it cannot encode
        raise _unresolved(host, exc) from exc


async def resolve_async(host: str, port: int, timeout: float | None = None) -> list[str]:
    """`resolve` without blocking the event loop; no answer within `timeout` seconds is a
    failure for now (TargetUnresolved; the lookup goes on and its answer is cached)."""
    try:
        return await dns_cache.resolve_async(_lookup, host, port, timeout)
    except TimeoutError as exc:
        raise TargetUnresolved(f"no DNS answer for {host} within {timeout:g} s") from exc
    except (OSError, UnicodeError) as exc:
        raise _unresolved(host, exc) from exc


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
    if parts.scheme not in SUPPORTED_SCHEMES:
        raise TargetRefused(f"unsupported scheme {parts.scheme!r}")
    host = parts.hostname
    if not host:
        raise TargetRefused("URL has no host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise TargetRefused(f"bad port: {exc}") from exc
    return host, port


def judge(
    host: str,
    addrs: list[str],
    *,
    allow_private: bool,
    refuse: Callable[[IpAddress], bool] = refused_address,
) -> list[str]:
    """addrs when host may be reached at them, else TargetRefused: no address at all, or
    (unless private targets are allowed) any address `refuse` refuses."""
    if not addrs:
        raise TargetRefused(f"{host} resolves to no address")
    if not allow_private:
        for addr in addrs:
            if refuse(ipaddress.ip_address(addr.split("%", 1)[0])):
                raise TargetRefused(f"{host} resolves to non-public address {addr}")
    return addrs


def checked_addresses(url: str, *, allow_private: bool) -> list[str]:
    """The addresses of url's host, all checked: connect to one of THESE, never resolve the
    name again (a second answer could differ: DNS rebinding). Resolves even when private
    targets are allowed (the fetch needs an address to connect to); raises TargetRefused
    (or TargetUnresolved) as check_target does. Blocking: async code awaits
    ``checked_url``."""
    host, port = _host_port(url)
    return judge(host, resolve(host, port), allow_private=allow_private)


async def checked_host(
    host: str,
    port: int,
    *,
    allow_private: bool,
    timeout: float | None = None,
    refuse: Callable[[IpAddress], bool] = refused_address,
) -> list[str]:
    """The checked addresses of host (see checked_addresses), without blocking the loop."""
    addrs = await resolve_async(host, port, timeout)
    return judge(host, addrs, allow_private=allow_private, refuse=refuse)


async def checked_url(url: str, *, allow_private: bool, timeout: float | None = None) -> list[str]:
    """checked_addresses without blocking the loop."""
    host, port = _host_port(url)
    return await checked_host(host, port, allow_private=allow_private, timeout=timeout)


def origin_key(url: str) -> str:
    """`host:port` of url (the scheme's default port when none is written; '' for a port
    that is not a number): how the egress proxy's log names the origin of a request, and
    how its readers match a URL against it."""
    parts = urlsplit(url)
    default = 443 if parts.scheme in ("https", "wss") else 80
    try:
        port = parts.port or default
    except ValueError:
        return ""
    return f"{(parts.hostname or '').lower()}:{port}"
