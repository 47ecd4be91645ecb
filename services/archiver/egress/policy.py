"""What the egress proxy may do and what it did: which addresses the browser may reach and
how long a request may take (EgressPolicy, asking the one judge of targets,
`shared.targets`), the kinds of error it answers with, and its log of what it refused,
could not reach or cut (EgressLog, read into the snapshot's response log)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from math import inf
from typing import Literal, TypeVar

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
    """After a subresource's request to a host that accepted nothing or sent nothing at all
    let that bound pass (`bound_passed`), the host's other subresource requests (this
    page's and other snapshots') are answered 504 at once for this long: a page asks a dead
    ad server dozens of times, six at a time. Each time the host lets the bound pass so
    again after that, the period doubles (up to `unresponsive_max_s`); a response head from
    it forgets the count. Most pages of a forum share their trackers, fonts and ad servers,
    so a host that never answers costs the first page the bound, not every page. The mark
    never touches the page's main document (the proxy's `is_document`)."""
    unresponsive_max_s: float = 1800.0
    answering_s: float = 300.0
    """A host that sent a response head within this long answers: a request of its that
    lets the bound pass is cut, but the host is slow, not dead, and is not marked."""
    warm_origins: int = 16
    """How many origins named by a page's document the proxy connects to before the
    browser asks (warm.py); 0: none."""
    _unresponsive: dict[tuple[str, int], tuple[float, float]] = field(
        default_factory=dict, repr=False
    )
    """host:port -> (answered 504 until, the period that was set)."""
    _answered: dict[tuple[str, int], float] = field(default_factory=dict, repr=False)
    """host:port -> when it last sent a response head."""

    def unresponsive(self, host: str, port: int) -> bool:
        """Is host:port marked unresponsive (its subresource requests answered 504 at once)?"""
        mark = self._unresponsive.get((host.lower(), port))
        return mark is not None and mark[0] > time.monotonic()

    def bound_passed(self, host: str, port: int, *, connected: bool, heard: bool) -> bool:
        """A subresource's request to host:port let the bound pass; marks the host
        unresponsive, and says so, only when it accepted nothing or sent nothing at all:
        no connection made (`connected`: the TCP accept, and for HTTPS the TLS handshake,
        done within the bound), or not one byte of this response (`heard`) from a host that
        sent no response head within `answering_s` either. A host that answers, slowly, is
        not dead: its request is cut, the host is not marked."""
        key = (host.lower(), port)
        answered = self._answered.get(key)
        if connected and (heard or (answered or -inf) > time.monotonic() - self.answering_s):
            return False
        self.mark_unresponsive(host, port)
        return True

    def mark_unresponsive(self, host: str, port: int) -> None:
        """Mark host:port unresponsive (for `unresponsive_s`, doubled at each mark since
        its last response head)."""
        now = time.monotonic()
        self._unresponsive = _trimmed(
            self._unresponsive, lambda mark: mark[0], now - self.unresponsive_max_s
        )
        key = (host.lower(), port)
        before = self._unresponsive.get(key)
        period = self.unresponsive_s
        if before is not None:
            period = min(self.unresponsive_max_s, before[1] * 2)
        self._unresponsive[key] = (now + period, period)

    def answered(self, host: str, port: int) -> None:
        """host:port sent a response head: it answers (for `answering_s`), and is no longer
        counted as unresponsive."""
        now = time.monotonic()
        key = (host.lower(), port)
        self._answered = _trimmed(self._answered, float, now - self.answering_s)
        self._answered[key] = now
        if self._unresponsive:
            self._unresponsive.pop(key, None)

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


HOSTS_KEPT = 10_000
"""Hosts the policy remembers (marked, or answering) before it forgets the stale ones."""
V = TypeVar("V")


def _trimmed(
    memory: dict[tuple[str, int], V], time_of: Callable[[V], float], stale_before: float
) -> dict[tuple[str, int], V]:
    """memory, without its entries whose time is before stale_before, once it holds more
    than HOSTS_KEPT hosts."""
    if len(memory) <= HOSTS_KEPT:
        return memory
    return {k: v for k, v in memory.items() if time_of(v) > stale_before}


@dataclass
class EgressLog:
    """What the proxy refused, could not reach or cut, for the snapshot's response log."""

    refused: list[dict[str, object]] = field(default_factory=list)
    failed: list[dict[str, object]] = field(default_factory=list)
    truncated: list[dict[str, object]] = field(default_factory=list)
    connections: int = 0
    warmed: int = 0
    """Origins the proxy connected to before the browser asked (warm.py)."""
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
