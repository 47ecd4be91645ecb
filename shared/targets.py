"""Which capture targets are allowed: in production, never private, loopback or link-local.

Checked before the first request and again for every redirect hop. Tests and local demos
set ALLOW_PRIVATE_TARGETS=true explicitly.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from shared.errors import TargetRefused

ALLOWED_SCHEMES = frozenset({"http", "https"})


def refused_address(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """True for any address that is not globally routable unicast (private, loopback, ...)."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global or ip.is_multicast


def resolve(host: str, port: int) -> list[str]:
    """Every address the host resolves to."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise TargetRefused(f"cannot resolve {host}: {exc}") from exc
    return sorted({str(info[4][0]) for info in infos})


def check_target(url: str, *, allow_private: bool) -> None:
    """Raise TargetRefused unless url is http(s) to a public address (or private is allowed)."""
    parts = urlsplit(url)
    if parts.scheme not in ALLOWED_SCHEMES:
        raise TargetRefused(f"unsupported scheme {parts.scheme!r}")
    host = parts.hostname
    if not host:
        raise TargetRefused("URL has no host")
    if allow_private:
        return
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise TargetRefused(f"bad port: {exc}") from exc
    for addr in resolve(host, port):
        if refused_address(ipaddress.ip_address(addr.split("%", 1)[0])):
            raise TargetRefused(f"{host} resolves to non-public address {addr}")
