"""The target policy inside yt-dlp (the media hook's downloads, the platform steps'
extractions): every connection it opens goes to a checked address.

Every Python-level connection in this process (yt-dlp's urllib and requests handlers,
urllib3) resolves its host with `socket.getaddrinfo` and connects to an address from that
answer. Wrapping `getaddrinfo` to refuse non-public answers checks the address actually
connected to (after DNS, on every redirect hop, page, manifest and fragment), so a page
cannot steer the download to a loopback, private or link-local address. ffmpeg only merges
local files here (HLS is downloaded by yt-dlp's native downloader).

`install()` guards the whole process (the media hook); `guarded()` guards only the thread
that enters it (a platform step running yt-dlp in a worker thread of a process that also
talks to NATS and S3 on private addresses).
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from collections.abc import Iterator
from typing import Any

from shared.errors import TargetRefused
from shared.targets import refused_address


class RefusedConnection(OSError):
    """A connection to a non-public address was refused by the target policy."""


_state = threading.local()
_lock = threading.Lock()
_everywhere = False
_wrapped = False


def _wrap() -> None:
    """Put the checking getaddrinfo in place (once per process)."""
    global _wrapped
    with _lock:
        if _wrapped:
            return
        original = socket.getaddrinfo

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            infos = original(host, port, *args, **kwargs)
            if not (_everywhere or getattr(_state, "guarded", False)):
                return infos
            for info in infos:
                addr = str(info[4][0]).split("%", 1)[0]
                if refused_address(ipaddress.ip_address(addr)):
                    raise RefusedConnection(f"refused target: {host} resolves to non-public {addr}")
            return infos

        socket.getaddrinfo = getaddrinfo
        _wrapped = True


def install() -> None:
    """Refuse non-public addresses in this process's name resolution, in every thread."""
    global _everywhere
    _wrap()
    _everywhere = True


@contextlib.contextmanager
def guarded(active: bool = True) -> Iterator[None]:
    """Refuse non-public addresses in the calling thread while inside (`active=False`: a
    no-op, for ALLOW_PRIVATE_TARGETS)."""
    if not active:
        yield
        return
    _wrap()
    before = getattr(_state, "guarded", False)
    _state.guarded = True
    try:
        yield
    finally:
        _state.guarded = before


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
