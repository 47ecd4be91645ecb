"""The target policy inside yt-dlp: every connection it opens goes to a checked address.

Every Python-level connection in this process (yt-dlp's urllib and requests handlers,
urllib3) resolves its host with `socket.getaddrinfo` and connects to an address from that
answer. Wrapping `getaddrinfo` to refuse non-public answers checks the address actually
connected to (after DNS, on every redirect hop, page, manifest and fragment), so a page
cannot steer the download to a loopback, private or link-local address. ffmpeg only merges
local files here (HLS is downloaded by yt-dlp's native downloader).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

from shared.errors import TargetRefused
from shared.targets import refused_address


class RefusedConnection(OSError):
    """A connection to a non-public address was refused by the target policy."""


def install() -> None:
    """Refuse non-public addresses in this process's name resolution (call once)."""
    original = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        infos = original(host, port, *args, **kwargs)
        for info in infos:
            addr = str(info[4][0]).split("%", 1)[0]
            if refused_address(ipaddress.ip_address(addr)):
                raise RefusedConnection(f"refused target: {host} resolves to non-public {addr}")
        return infos

    socket.getaddrinfo = getaddrinfo


def refused_error(exc: BaseException) -> TargetRefused | None:
    """The policy refusal hidden in an exception chain, if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (RefusedConnection, TargetRefused)):
            return TargetRefused(str(current))
        current = current.__cause__ or current.__context__
    if "refused target" in str(exc):
        return TargetRefused(str(exc))
    return None
