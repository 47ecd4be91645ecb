"""What the egress proxy may do and what it did: which addresses the browser may reach and
how long a request may take (EgressPolicy, asking the one judge of targets,
`shared.targets`), the kinds of error it answers with, and its log of what it refused,
could not reach or cut (EgressLog, read into the snapshot's response log)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from shared.errors import NoSuchHost, TargetRefused, TargetUnresolved
from shared.targets import IpAddress, checked_host, origin_key, refused_address

ErrorKind = Literal["refused", "no_such_host", "dns", "connect", "tls", "timeout"]
ERROR_STATUS: dict[ErrorKind, str] = {
    "refused": "403 Forbidden",
    "no_such_host": "502 Bad Gateway",
    "dns": "502 Bad Gateway",
    "connect": "502 Bad Gateway",
    "tls": "502 Bad Gateway",
    "timeout": "504 Gateway Timeout",
}
"""The status line of the proxy's answer for each kind of failure (`X-Archiver-Error`)."""
ERROR_HEADER = "x-archiver-error"


class UpstreamError(Exception):
    """A request the proxy could not serve, and why (its `X-Archiver-Error` kind)."""

    def __init__(self, kind: ErrorKind, reason: str) -> None:
        super().__init__(reason)
        self.kind: ErrorKind = kind


@dataclass
class EgressPolicy:
    """Which addresses the browser may reach, and how long a request may take."""

    allow_private: bool = False
    """Tests and local demos: reach loopback/private addresses too."""
    refuse: Callable[[IpAddress], bool] = refused_address
    """Address predicate used when private targets are not allowed."""
    connect_timeout: float = 10.0
    """Seconds to resolve, connect and shake hands (TLS) with an upstream host."""
    subresource_timeout: float = 3.0
    """Seconds a request other than the page's main document may wait for its response
    head (lookup, connect and TLS included)."""
    unresponsive_s: float = 60.0
    """After a subresource's server let that bound pass, its other subresource requests
    (this page's and other snapshots') are answered 504 at once for this long: a page asks
    a dead ad server dozens of times, six at a time. Each time the host lets the bound pass
    again after that, the period doubles (up to `unresponsive_max_s`); a response head from
    it forgets the count. Most pages of a forum share their trackers, fonts and ad servers,
    so a host that never answers costs the first page the bound, not every page."""
    unresponsive_max_s: float = 1800.0
    warm_origins: int = 16
    """How many origins named by a page's document the proxy connects to before the
    browser asks (egress_warm.py); 0: none."""
    _unresponsive: dict[tuple[str, int], tuple[float, float]] = field(
        default_factory=dict, repr=False
    )
    """host:port -> (answered 504 until, the period that was set)."""

    def unresponsive(self, host: str, port: int) -> bool:
        """Did host:port let a subresource's bound pass lately?"""
        mark = self._unresponsive.get((host.lower(), port))
        return mark is not None and mark[0] > time.monotonic()

    def mark_unresponsive(self, host: str, port: int) -> None:
        """host:port let a subresource's bound pass."""
        now = time.monotonic()
        if len(self._unresponsive) > 10_000:
            keep = now - self.unresponsive_max_s
            self._unresponsive = {k: v for k, v in self._unresponsive.items() if v[0] > keep}
        key = (host.lower(), port)
        before = self._unresponsive.get(key)
        period = self.unresponsive_s
        if before is not None:
            period = min(self.unresponsive_max_s, before[1] * 2)
        self._unresponsive[key] = (now + period, period)

    def answered(self, host: str, port: int) -> None:
        """host:port sent a response head: it is no longer counted as unresponsive."""
        if self._unresponsive:
            self._unresponsive.pop((host.lower(), port), None)

    async def addresses(self, host: str, port: int) -> list[str]:
        """The checked addresses of host; raises UpstreamError (refused, dns, timeout)."""
        try:
            return await checked_host(
                host,
                port,
                allow_private=self.allow_private,
                timeout=self.connect_timeout,
                refuse=self.refuse,
            )
        except TargetUnresolved as exc:
            raise UpstreamError("dns", str(exc)) from exc
        except NoSuchHost as exc:
            raise UpstreamError("no_such_host", str(exc)) from exc
        except TargetRefused as exc:
            raise UpstreamError("refused", str(exc)) from exc


@dataclass
class EgressLog:
    """What the proxy refused, could not reach or cut, for the snapshot's response log."""

    refused: list[dict[str, object]] = field(default_factory=list)
    failed: list[dict[str, object]] = field(default_factory=list)
    truncated: list[dict[str, object]] = field(default_factory=list)
    connections: int = 0
    warmed: int = 0
    """Origins the proxy connected to before the browser asked (egress_warm.py)."""
    max_entries: int = 1000

    def add(self, bucket: list[dict[str, object]], entry: dict[str, object]) -> None:
        if len(bucket) < self.max_entries:
            bucket.append({**entry, "at": round(time.time(), 3)})

    def failure(self, url: str) -> dict[str, object] | None:
        """Why the proxy did not serve url, if it did not: a refusal or failure recorded
        for that URL, or for a tunnel to its origin (scheme, host and port compared)."""
        want = origin_key(url)
        for entry in (*self.refused, *self.failed):
            if entry.get("url") == url or (entry.get("tunnel") and entry.get("origin") == want):
                return entry
        return None
